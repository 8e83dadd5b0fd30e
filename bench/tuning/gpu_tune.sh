#!/bin/bash
# Tile and split-K choices of the GPU product kernels on a lent GPU, in one call (session 11):
#   bench/tuning/gpu_tune.sh VKINFER OUT_DIR
# Run from the repository root with Vulkan set up as tests/gpu/gpu_suite.sh says; needs torch (CUDA).
# 1. fp16 4096 cube on VK_NV_cooperative_matrix2 per block shape (VKINFER_COOPMAT2_TILE) and order
#    (VKINFER_COOPMAT2_GROUP_M), beside torch.matmul's GPU time;
# 2. the BERT-base encoder's products at batch 8 (1024 rows) in float32 on matmul_sgemm per tile
#    (VKINFER_SGEMM_TILE) under three split-K settings (VKINFER_MM_SPLIT_BELOW: default 200, 0
#    never, 100000 always to VKINFER_MM_BUSY_GROUPS workgroups), and in float16 per block shape;
# 3. whole models per VKINFER_MM_BUSY_GROUPS (the workgroup count taken to fill the GPU).
set -u
VK=${1:-build/vkinfer}; OUT=${2:-/tmp/vkinfer-tune}
mkdir -p "$OUT"
export VKINFER_CACHE_DIR=$OUT/cache PYTHONUNBUFFERED=1
"$VK" devices | head -4
T="python3 bench/tuning/tile_sweep.py --vkinfer $VK"
$T --shapes 4096x4096x4096 --tiles default,128x256x64x256,256x128x32x256,256x128x64x256,128x128x64x256,128x256x32x128 | tee "$OUT/fp16_4096.txt"
$T --shapes 4096x4096x4096 --env VKINFER_COOPMAT2_GROUP_M --tiles 4,8,16 | tee -a "$OUT/fp16_4096.txt"
BERT=1024x768x3072,1024x3072x768,1024x768x768,1024x2304x768
for split in 200 0 100000; do
    echo "VKINFER_MM_SPLIT_BELOW=$split" | tee -a "$OUT/sgemm_bert.txt"
    VKINFER_MM_SPLIT_BELOW=$split $T --dtype float32 --env VKINFER_SGEMM_TILE --tiles default,64x64,64x128,128x64,128x128 \
        --shapes $BERT --repeat 2 | tee -a "$OUT/sgemm_bert.txt"
done
for busy in 132 264 528; do
    echo "VKINFER_MM_BUSY_GROUPS=$busy" | tee -a "$OUT/sgemm_bert.txt"
    VKINFER_MM_BUSY_GROUPS=$busy $T --dtype float32 --tiles default --shapes $BERT | tee -a "$OUT/sgemm_bert.txt"
done
$T --dtype float32 --env VKINFER_SGEMM_BK --tiles 8,16 --shapes 4096x4096x4096 | tee -a "$OUT/sgemm_bert.txt"
$T --shapes $BERT --tiles default,64x64x32x128,64x128x32x128,128x64x32x128,128x128x32x256,64x64x64x128 | tee "$OUT/fp16_bert.txt"
python3 bench/tuning/gpu_profile.py "$VK" --models bert_b8,resnet50_b32,vit_b_16_b1,bert_b1 --keep "$OUT/keep" --runs 3 > "$OUT/profile.txt" 2>&1
bash bench/tuning/env_sweep.sh "$VK" "$OUT/keep" VKINFER_MM_BUSY_GROUPS "- 132 264 396 528" bert_b8 resnet50_b32 vit_b_16_b1 bert_b1 | tee "$OUT/models.txt"
bash bench/tuning/env_sweep.sh "$VK" "$OUT/keep" VKINFER_MM_SPLIT_BELOW "- 0 132 264" bert_b8 vit_b_16_b1 bert_b1 | tee -a "$OUT/models.txt"
