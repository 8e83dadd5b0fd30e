#!/bin/bash
# The activation compiled into every GPU product and convolution kernel (fused_act.glsl's ACT),
# checked and measured on a lent GPU in one call:   bench/tuning/gpu_epilogue_check.sh VKINFER OUT_DIR
# 1. the MatMul check of every kernel family, the MatMul parity cases on matmul_tiled, resnet18
#    and mobilenet_v2 parity (fused Relu/Clip in every convolution path);
# 2. the 4096 cube with a bias and a Relu on matmul_tiled's 64 and 128 tiles (128 was refused
#    with an epilogue while the activation was decoded at run time: 59 ms);
# 3. sgemm on batched products (VKINFER_MM_SGEMM=1) against matmul_tiled: 1x1-convolution
#    products at batch 32 and resnet50 at batch 32;
# 4. per-dispatch profiles of the models that miss issue 6's targets (BERT at batch 8, the
#    transformer policy) and BERT's K=3072 product on every sgemm tile, with and without split K.
# Run from the repository root with Vulkan set up as tests/gpu/gpu_suite.sh says; needs torch.
set -u
VK=${1:-build/vkinfer}; OUT=${2:-/tmp/vkinfer-epilogue}
mkdir -p "$OUT"
export VKINFER_CACHE_DIR=$OUT/cache PYTHONUNBUFFERED=1
"$VK" devices | head -3
echo "matmul check: $(timeout 120 python3 bench/peers/matmul_bench.py --vkinfer "$VK" --check 2>&1 | tail -1)"
echo "matmul parity on matmul_tiled: $(VKINFER_MM_SGEMM=0 timeout 90 python3 tests/models/matmul_parity.py "$VK" 2>&1 | tail -1)"
echo "matmul parity, sgemm batched too: $(VKINFER_MM_SGEMM=1 timeout 90 python3 tests/models/matmul_parity.py "$VK" 2>&1 | tail -1)"
for m in "resnet18 1" "resnet18 32" "mobilenet_v2 1"; do
    echo "parity $m: $(timeout 120 python3 tests/models/parity.py "$VK" $m 2>&1 | grep -E "PASS|FAIL" | tail -1)"
done
echo "parity resnet18 32, sgemm batched: $(VKINFER_MM_SGEMM=1 timeout 120 python3 tests/models/parity.py "$VK" resnet18 32 2>&1 | grep -E "PASS|FAIL" | tail -1)"
VKINFER_MM_SGEMM=0 python3 bench/tuning/tile_sweep.py --vkinfer "$VK" --dtype float32 --env VKINFER_TILED_TILE --tiles default,64,128 \
    --epilogue bias_relu --shapes 4096x4096x4096 | tee "$OUT/tiled_epilogue.txt"
python3 bench/tuning/tile_sweep.py --vkinfer "$VK" --dtype float32 --batch 32 --epilogue bias_relu --env VKINFER_MM_SGEMM --tiles 0,1 \
    --shapes 64x3136x256,128x3136x256,256x784x512,512x196x1024 | tee "$OUT/batched_sgemm.txt"
timeout 240 python3 bench/tuning/gpu_profile.py "$VK" --models resnet50_b32,bert_b8,policy_transformer_b1 --keep "$OUT/keep" --runs 3 --all \
    > "$OUT/profile.txt" 2>&1
echo "profiles: rc $?"
bash bench/tuning/env_sweep.sh "$VK" "$OUT/keep" VKINFER_MM_SGEMM "- 1" resnet50_b32 bert_b8 | tee "$OUT/models.txt"
for sb in 0 1000; do
    if [ "$sb" = 0 ]; then unset VKINFER_MM_SPLIT_BELOW; else export VKINFER_MM_SPLIT_BELOW=$sb; fi
    echo "VKINFER_MM_SPLIT_BELOW=$sb (0: the default)"
    python3 bench/tuning/tile_sweep.py --vkinfer "$VK" --dtype float32 --env VKINFER_SGEMM_TILE \
        --tiles default,128x128,64x128,128x64,64x64 --shapes 1024x768x3072,197x768x3072 --transb
done | tee "$OUT/ff2_tiles.txt"
unset VKINFER_MM_SPLIT_BELOW
