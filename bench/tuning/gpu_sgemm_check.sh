#!/bin/bash
# matmul_sgemm on a lent GPU (it is opt-in until measured: docs/architecture.md), in one call:
# its results (the MatMul parity cases with VKINFER_MATMUL_KERNELS=sgemm), its GPU time against
# matmul_tiled and cuBLAS on BERT-, ViT- and 4096-shaped products, its tiles, and whole models
# with it off and on; then Winograd convolutions off and on.   bench/tuning/gpu_sgemm_check.sh VKINFER OUT_DIR
# Run from the repository root with Vulkan set up as tests/gpu/gpu_suite.sh says (the loader and
# glvnd .debs unpacked, VK_DRIVER_FILES and __EGL_VENDOR_LIBRARY_FILENAMES set); needs torch.
# If it wins, make it the default in sgemm_choose (src/ops/matmul_record.c) with the numbers.
set -u
VK=${1:-build/vkinfer}; OUT=${2:-/tmp/vkinfer-sgemm}
mkdir -p "$OUT"
export VKINFER_CACHE_DIR=$OUT/cache PYTHONUNBUFFERED=1
"$VK" devices | head -4
VKINFER_MATMUL_KERNELS=sgemm VKINFER_CONV_KERNELS=gemm python3 tests/models/matmul_parity.py "$VK" > "$OUT/parity.txt" 2>&1
echo "parity with matmul_sgemm: $(tail -1 "$OUT/parity.txt")"
S=4096x4096x4096,1024x3072x768,1024x768x3072,1024x2304x768,1024x768x768,197x2304x768,197x768x3072
python3 bench/tuning/tile_sweep.py --vkinfer "$VK" --dtype float32 --env VKINFER_MM_SGEMM --tiles 0,1 --shapes $S | tee "$OUT/sgemm_vs_tiled.txt"
# the models next: the decision rests on them
python3 bench/tuning/gpu_profile.py "$VK" --models bert_b8,resnet50_b32,vit_b_16_b1,convnext_tiny_b1 --keep "$OUT/keep" --runs 3 > "$OUT/profile.txt" 2>&1
bash bench/tuning/env_sweep.sh "$VK" "$OUT/keep" VKINFER_MM_SGEMM "0 1" bert_b8 resnet50_b32 vit_b_16_b1 convnext_tiny_b1 | tee "$OUT/models.txt"
VKINFER_MM_SGEMM=1 python3 bench/tuning/tile_sweep.py --vkinfer "$VK" --dtype float32 --env VKINFER_SGEMM_TILE \
    --tiles 128x128,64x128,128x64,64x64 --shapes 4096x4096x4096,1024x3072x768,1024x768x768 | tee "$OUT/sgemm_tiles.txt"
VKINFER_MM_SGEMM=1 python3 bench/tuning/tile_sweep.py --vkinfer "$VK" --dtype float32 --env VKINFER_SGEMM_BK --tiles 8,16 \
    --shapes 4096x4096x4096,1024x3072x768 | tee "$OUT/sgemm_bk.txt"
python3 bench/tuning/tile_sweep.py --vkinfer "$VK" --dtype float32 --env VKINFER_MM_SGEMM --tiles 0,1 --transb \
    --shapes 4096x4096x4096,1024x3072x768 | tee "$OUT/sgemm_vs_tiled_transb.txt"
# fp16 with B stored [N, K] (a Linear's weight as exported) against [K, N]
python3 bench/tuning/tile_sweep.py --vkinfer "$VK" --tiles default --shapes 4096x4096x4096,1024x3072x768 | tee "$OUT/fp16_kn.txt"
python3 bench/tuning/tile_sweep.py --vkinfer "$VK" --tiles default --transb --shapes 4096x4096x4096,1024x3072x768 | tee "$OUT/fp16_nk.txt"
# Winograd F(2x2, 3x3) (CPU devices' default) on the GPU: its transforms and 16 products against
# im2col and one product per layer
python3 bench/tuning/gpu_profile.py "$VK" --models resnet18_b1 --keep "$OUT/keep" --runs 3 >> "$OUT/profile.txt" 2>&1
bash bench/tuning/env_sweep.sh "$VK" "$OUT/keep" VKINFER_CONV_WINOGRAD "0 1" resnet18_b1 resnet50_b32 | tee -a "$OUT/models.txt"
