#!/bin/bash
# Half precision on a real GPU, in one command (run from the repository root with a build):
#   tests/gpu/gpu_half_suite.sh BUILD_DIR OUT_DIR
# 1. the device and its features, 2. the half-precision tests (float16 models against PyTorch
# float16 on CUDA where torch has it, bfloat16 models, the fp16 mode; validation on when the
# layer is installed), 3. MatMul speed and the tensor-core kernel's correctness
# (bench/peers/matmul_bench.py), 4. float32 / fp16 mode / bfloat16 beside PyTorch CUDA eager
# (bench/peers/half_bench.py). On the lent H200 set up Vulkan first as tests/gpu/gpu_suite.sh says.
set -u
BUILD=${1:-build}
OUT=${2:-/tmp/vkinfer-gpu-half}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
export VKINFER_CACHE_DIR=${VKINFER_CACHE_DIR:-$OUT/cache}
"$BUILD/vkinfer" devices | tee "$OUT/devices.txt"
VAL=0
ls /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json >/dev/null 2>&1 && VAL=1
for c in "fp16 transformer" "fp16 mlp" "bf16 transformer" "mode transformer" "mode resnet18" "mode mobilenet_v2" "mode unet1d"; do
    VKINFER_VALIDATION=$VAL $PY tests/models/half.py "$BUILD/vkinfer" $c 2>&1 | grep -E "^(fp16|bf16|mode) |^(PASS|FAIL)" | tee -a "$OUT/half_tests.txt"
done
for t in half_transformer half_matmul; do
    VKINFER_VALIDATION=$VAL $PY tests/models/$t.py "$BUILD/vkinfer" 2>&1 | tail -3 | tee -a "$OUT/half_tests.txt"
done
VKINFER_VALIDATION=$VAL $PY tests/models/half_conv.py "$BUILD/vkinfer" resnet18 2>&1 | tail -3 | tee -a "$OUT/half_tests.txt"
VKINFER_VALIDATION=$VAL $PY bench/peers/matmul_bench.py --vkinfer "$BUILD/vkinfer" --check 2>&1 | tail -3 | tee "$OUT/matmul_check.txt"
$PY bench/peers/matmul_bench.py --vkinfer "$BUILD/vkinfer" --runs 20 2>&1 | tee "$OUT/matmul_bench.txt"
$PY bench/peers/half_bench.py "$BUILD/vkinfer" --runs 30 --warmup 5 --markdown "$OUT/half_bench.md" 2>&1 | tail -12
