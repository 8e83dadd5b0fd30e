#!/bin/bash
# Issue 37's tensor-core experiment in one call of the lent H100/H200 machine: the
# VK_NV_cooperative_matrix2 MatMul (matmul_coopmat2_*) against its candidate, chosen by
# VKINFER_COOPMAT2_EXP (src/ops/matmul_coopmat.c; unset = the default kernels, unchanged):
#   dims    M, N, K and the operand strides as specialization constants (NVIDIA's
#           vk_cooperative_matrix_perf specializes them), so the driver folds every address
# (vec4, acc16, fullsg and the BK 16 / 128-invocation tiles measured no faster and were removed:
# docs/results-h200.md). Run from the repository root, carrying the build's vkinfer and .gl (the
# glvnd .debs and libvulkan1, tests/gpu/gpu_suite.sh):
#   bench/tuning/coopmat2_experiment.sh BUILD_DIR OUT_DIR [--quick]
# OUT_DIR gets devices.txt, one log per phase and summary.txt (every sweep line). --quick:
# small shapes and one candidate list, for a dry run on lavapipe (no cooperative matrices
# there: the default kernels run and only the script is checked). Each phase has its own
# time limit so that the whole stays under ~7.5 minutes.
set -u
BUILD=${1:?BUILD_DIR}
OUT=${2:?OUT_DIR}
QUICK=${3:-}
PY=${PYTHON:-python3}
VK=$BUILD/vkinfer
mkdir -p "$OUT"
START=$(date +%s)

# The Vulkan loader where the machine has none, and glvnd, which the NVIDIA ICD needs
# (libvulkan1 alone: VK_ERROR_INCOMPATIBLE_DRIVER)
if [ -d .gl ] && [ -d /usr/local/nvidia ]; then
    for f in .gl/*.deb; do
        case $f in *libvulkan1*) ldconfig -p | grep -q 'libvulkan.so.1 ' && continue ;; esac
        dpkg -x "$f" /
    done
    ldconfig
fi
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] &&
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
           __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export VKINFER_CACHE_DIR=/tmp/vkinfer-cm2-cache
unset VKINFER_COOPMAT2_EXP VKINFER_COOPMAT2_TILE VKINFER_COOPMAT2_UNROLL VKINFER_COOPMAT2_GROUP_M

{
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
    "$VK" devices
} > "$OUT/devices.txt" 2>&1
cat "$OUT/devices.txt"
$PY -c "import numpy, onnx; print('numpy', numpy.__version__, 'onnx', onnx.__version__)" || { echo "needs python3 with numpy and onnx"; exit 1; }
$PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" 2>/dev/null || echo "no torch: no cuBLAS column"

# phase NAME LIMIT_S COMMAND...: runs one phase under its limit, its output in OUT/NAME.log and
# on the terminal, its sweep lines (and PASS/FAIL lines) in summary.txt
phase() {
    local name=$1 limit=$2
    shift 2
    echo "== $name ($(($(date +%s) - START)) s in)" | tee -a "$OUT/summary.txt"
    timeout "$limit" "$@" 2>&1 | tee "$OUT/$name.log" | grep -E "TFLOP/s|ms |^(PASS|FAIL)|Error|error" | tee -a "$OUT/summary.txt"
    [ "${PIPESTATUS[0]}" = 124 ] && echo "($name stopped at its ${limit} s limit)" | tee -a "$OUT/summary.txt"
}
SWEEP="$PY bench/tuning/tile_sweep.py --vkinfer $VK"

if [ "$QUICK" = "--quick" ]; then
    phase quick_f16 120 $SWEEP --shapes 128x96x80 --env VKINFER_COOPMAT2_EXP --tiles default,dims --repeat 1 --check
    phase quick_bf16 120 $SWEEP --dtype bfloat16 --shapes 128x96x80 --env VKINFER_COOPMAT2_EXP --tiles default,dims --repeat 1 --check
    VKINFER_COOPMAT2_EXP=dims phase quick_check 200 $PY bench/peers/matmul_bench.py --vkinfer "$VK" --check --only bf16
    echo "done in $(($(date +%s) - START)) s" | tee -a "$OUT/summary.txt"
    exit 0
fi

# 1. the 4096 cube, fp16 and bf16, each kernel checked against numpy; then again in the
#    reverse order (rounds alternate: a card warms up over a call)
phase cube_f16 60 $SWEEP --shapes 4096x4096x4096 --env VKINFER_COOPMAT2_EXP --tiles default,dims --repeat 2 --check
phase cube_bf16 60 $SWEEP --dtype bfloat16 --shapes 4096x4096x4096 --env VKINFER_COOPMAT2_EXP --tiles default,dims --repeat 2 --check
phase cube_f16_round2 40 $SWEEP --shapes 4096x4096x4096 --env VKINFER_COOPMAT2_EXP --tiles dims,default --repeat 2
# 2. transformer products (BERT-base's linear1/linear2, an 800-token VLA prefix's MLP), B as a
#    Linear's weight is exported ([N,K], Gemm transB=1) and as a MatMul constant ([K,N])
phase transformer_f16 60 $SWEEP --shapes 1024x768x3072,1024x3072x768,800x960x2560 --env VKINFER_COOPMAT2_EXP \
    --tiles default,dims --repeat 2 --check
phase transformer_bf16_transb 60 $SWEEP --dtype bfloat16 --transb --shapes 800x960x2560,800x2560x960,1024x768x3072 \
    --env VKINFER_COOPMAT2_EXP --tiles default,dims --repeat 2 --check
phase transformer_f16_round2 50 $SWEEP --shapes 1024x768x3072,1024x3072x768,800x960x2560 --env VKINFER_COOPMAT2_EXP \
    --tiles dims,default --repeat 2
# 3. B stored [N,K] on the cube (llama.cpp's layout: B through a transposing view)
phase cube_f16_transb 35 $SWEEP --transb --shapes 4096x4096x4096 --env VKINFER_COOPMAT2_EXP --tiles default,dims --repeat 2
# 4. the awkward products of matmul_bench.py --check (ragged edges, batches, transposes, split
#    K, fused epilogues, bf16) on the candidate
VKINFER_COOPMAT2_EXP=dims phase check_dims 60 $PY bench/peers/matmul_bench.py --vkinfer "$VK" --check
echo "done in $(($(date +%s) - START)) s" | tee -a "$OUT/summary.txt"
