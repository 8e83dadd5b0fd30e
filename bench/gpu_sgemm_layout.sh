#!/bin/bash
# matmul_sgemm's lane layout (VKINFER_SGEMM_LAYOUT=rows|warp) on a lent GPU, in one call (session 12):
#   bench/gpu_sgemm_layout.sh BUILD OUT_DIR
# Run from the repository root with Vulkan set up as bench/gpu_suite.sh says; needs torch (CUDA).
# BUILD holds vkinfer, and pipeline_stats with spv/matmul_sgemm.spv where the driver's statistics
# are wanted (bench/pipeline_stats.c). Steps:
# 1. the driver's statistics of the sgemm pipelines (registers, spills) per layout, tile and BK;
# 2. the 4096 cube in float32 per layout x BK, beside torch.matmul's GPU time;
# 3. BERT-base's products at 1024 rows in float32 per layout x tile, and convolution-shaped
#    batched products (resnet50's at batch 32) per layout;
# 4. whole models per layout (bench/gpu_profile.py --keep, then bench/env_sweep.sh).
set -u
B=${1:-build}; OUT=${2:-/tmp/vkinfer-layout}
VK=$B/vkinfer
mkdir -p "$OUT"
export VKINFER_CACHE_DIR=$OUT/cache PYTHONUNBUFFERED=1
"$VK" devices | head -4
if [ -x "$B/pipeline_stats" ]; then
    # spec constants as src/ops/matmul.c passes them: LOCAL, OUT_DT, IS_INT, A_K_CONTIG, B_K_CONTIG,
    # HAS_C, BN, SPLIT_K, ACT, BM, BK, VEC, LAYOUT
    for layout in 0 1; do
        for tile in "128 128" "64 64"; do
            set -- $tile
            for bk in 8 16; do
                echo "== layout $layout, BM $1, BN $2, BK $bk"
                "$B/pipeline_stats" "$B/spv/matmul_sgemm.spv" --bindings 4 256 0 0 1 0 0 "$2" 0 0 "$1" "$bk" 7 "$layout"
            done
        done
    done 2>&1 | tee "$OUT/pipeline_stats.txt"
    mkdir -p "$OUT/ir"
    "$B/pipeline_stats" "$B/spv/matmul_sgemm.spv" --bindings 4 --ir "$OUT/ir" 256 0 0 1 0 0 128 0 0 128 8 7 1 > /dev/null 2>&1
fi
T="python3 bench/tile_sweep.py --vkinfer $VK --dtype float32"
for bk in 8 16; do
    echo "VKINFER_SGEMM_BK=$bk" | tee -a "$OUT/sgemm_4096.txt"
    VKINFER_SGEMM_BK=$bk $T --shapes 4096x4096x4096 --env VKINFER_SGEMM_LAYOUT --tiles rows,warp,rows,warp --repeat 2 | tee -a "$OUT/sgemm_4096.txt"
done
BERT=1024x768x3072,1024x3072x768,1024x768x768,1024x2304x768
for layout in rows warp; do
    echo "VKINFER_SGEMM_LAYOUT=$layout" | tee -a "$OUT/sgemm_bert.txt"
    VKINFER_SGEMM_LAYOUT=$layout $T --env VKINFER_SGEMM_TILE --tiles default,64x64,128x64,128x128 --shapes $BERT --repeat 2 | tee -a "$OUT/sgemm_bert.txt"
done
echo "convolutions' products at batch 32 (W x X[32], bias, Relu)" | tee "$OUT/sgemm_conv.txt"
$T --batch 32 --epilogue bias_relu --shapes 128x3136x256,256x784x512,512x196x1024,128x784x1152,256x196x2304 \
    --env VKINFER_SGEMM_LAYOUT --tiles rows,warp --repeat 2 | tee -a "$OUT/sgemm_conv.txt"
python3 bench/gpu_profile.py "$VK" --models bert_b8,resnet50_b32,vit_b_16_b1,bert_b1,resnet50_b1 --keep "$OUT/keep" --runs 3 > "$OUT/profile.txt" 2>&1
bash bench/env_sweep.sh "$VK" "$OUT/keep" VKINFER_SGEMM_LAYOUT "rows warp" bert_b8 resnet50_b32 vit_b_16_b1 bert_b1 resnet50_b1 | tee "$OUT/models.txt"
