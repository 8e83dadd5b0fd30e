#!/bin/bash
# matmul_sgemm's register blocks and bounds-free loads on a lent GPU, in one call (session 14):
#   bench/tuning/gpu_sgemm_blocks.sh VKINFER OUT_DIR [STEPS, default "1 2 3 4"]
# Run from the repository root with Vulkan set up as tests/gpu/gpu_suite.sh says; needs torch (CUDA).
# 1. correctness: tests/models/matmul_parity.py with the default choice and with 8 x 8 sums an
#    invocation forced on 64 x 64 and 128 x 64 tiles (64 and 128 invocations a workgroup);
# 2. the float32 products of the BERT-base encoder at batch 8 (1024 rows) and of ViT-B/16 at
#    batch 1 (197 rows) per tile and block (VKINFER_SGEMM_TILE=BMxBN[xTMxTN]), GPU time of one
#    profiled run (best of 2), torch.matmul's beside it (TF32 off);
# 3. the 4096 cube per tile, with and without the bounds-free loads (VKINFER_SGEMM_EXACT=0);
# 4. whole models (exported once into /tmp/keep by bench/tuning/gpu_profile.py, which also prints where
#    their GPU time goes) with and without the bounds-free loads;
# 5. split K's slice count (through VKINFER_MM_BUSY_GROUPS, the tile forced) for the medium
#    products of 1024 rows and ViT's;
# 6. whole models with sgemm_choose's register blocks (default) and without (VKINFER_SGEMM_BLOCKS=0).
set -u
VK=${1:-gpubuild/vkinfer}; OUT=${2:-/tmp/vkinfer-blocks}; STEPS=${3:-1 2 3 4}
mkdir -p "$OUT"
export VKINFER_CACHE_DIR=/tmp/vkinfer-cache PYTHONUNBUFFERED=1
"$VK" devices | head -3
T="python3 bench/tuning/tile_sweep.py --vkinfer $VK --dtype float32 --env VKINFER_SGEMM_TILE"
for step in $STEPS; do
    case $step in
    1)
        for tile in - 64x64x8x8 128x64x8x8; do
            if [ "$tile" = "-" ]; then r=$(python3 tests/models/matmul_parity.py "$VK" 2>&1 | grep -E "^FAIL|failed")
            else r=$(VKINFER_SGEMM_TILE=$tile python3 tests/models/matmul_parity.py "$VK" 2>&1 | grep -E "^FAIL|failed"); fi
            echo "matmul parity, tile $tile: $r" | tee -a "$OUT/parity.txt"
        done
        ;;
    2)
        $T --shapes 1024x768x3072,1024x3072x768,1024x768x768,1024x2304x768,197x768x3072,197x3072x768,197x2304x768,128x768x3072 \
            --tiles default,64x64,128x128,64x64x8x8,128x64x8x8,64x128x8x8,64x64x8x4,64x64x4x8 | tee "$OUT/shapes.txt"
        for busy in 528 1056; do
            echo "VKINFER_MM_BUSY_GROUPS=$busy" | tee -a "$OUT/shapes.txt"
            VKINFER_MM_BUSY_GROUPS=$busy $T --shapes 1024x768x3072,1024x768x768,197x768x3072,197x3072x768 \
                --tiles 64x64x8x8,128x64x8x8,64x128x8x8 | tee -a "$OUT/shapes.txt"
        done
        ;;
    3)
        $T --shapes 4096x4096x4096 --tiles default,128x64x8x8,64x64x8x8 | tee "$OUT/cube.txt"
        echo "VKINFER_SGEMM_EXACT=0" | tee -a "$OUT/cube.txt"
        VKINFER_SGEMM_EXACT=0 $T --shapes 4096x4096x4096,1024x768x3072 --tiles default | tee -a "$OUT/cube.txt"
        ;;
    4)
        python3 bench/tuning/gpu_profile.py "$VK" --models bert_b8,vit_b_16_b1,bert_b1,resnet50_b32 --keep /tmp/keep --runs 3 \
            > "$OUT/profile.txt" 2>&1
        bash bench/tuning/env_sweep.sh "$VK" /tmp/keep VKINFER_SGEMM_EXACT "- 0" bert_b8 vit_b_16_b1 bert_b1 resnet50_b32 \
            | tee "$OUT/models.txt"
        ;;
    5)
        for busy in 256 512 1056; do
            echo "VKINFER_MM_BUSY_GROUPS=$busy" | tee -a "$OUT/split.txt"
            VKINFER_MM_BUSY_GROUPS=$busy $T --shapes 1024x768x3072,1024x768x768,197x2304x768,197x3072x768,197x768x768 \
                --tiles 64x64x4x8,64x128x8x8,128x64x8x8,64x64 | tee -a "$OUT/split.txt"
        done
        ;;
    6)
        [ -d /tmp/keep/bert_b8 ] || python3 bench/tuning/gpu_profile.py "$VK" --models bert_b8,vit_b_16_b1,bert_b1,resnet50_b32 \
            --keep /tmp/keep --runs 3 > "$OUT/profile.txt" 2>&1
        python3 bench/tuning/gpu_profile.py "$VK" --models resnet50_b1,convnext_tiny_b1 --keep /tmp/keep --runs 3 > "$OUT/profile2.txt" 2>&1
        bash bench/tuning/env_sweep.sh "$VK" /tmp/keep VKINFER_SGEMM_BLOCKS "- 0" bert_b8 vit_b_16_b1 bert_b1 resnet50_b32 \
            resnet50_b1 convnext_tiny_b1 | tee "$OUT/models_blocks.txt"
        ;;
    esac
done
