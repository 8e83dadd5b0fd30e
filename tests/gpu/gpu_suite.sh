#!/bin/bash
# The whole GPU check in one command, for a machine whose Vulkan driver is a real GPU
# (run from the repository root with the build folder present):
#   tests/gpu/gpu_suite.sh BUILD_DIR OUT_DIR
# 1. unit tests, 2. every listed ONNX conformance test whose folder exists under
# $ONNX_TESTDATA (default: the test data shipped inside the installed onnx Python package),
# 3. model parity at batch 1, 4 and 32, the CLI test and the windowed CNN, 4. the
# side-by-side benchmark (bench/peers/compare.py) and plan time against graph size.
# Validation layers are on for 1-3 when VK_LAYER_KHRONOS_validation is installed.
#
# On the lent H200 machine (no Vulkan loader installed there): carry the build folder, the
# listed test folders (copied from libonnx-testdata) and a folder of amd64 .debs — libvulkan1,
# vulkan-validationlayers, libglvnd0, libglx0, libegl1, libgl1, libopengl0, libgles2 — then:
#   for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
#   export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
#          __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
#   ONNX_TESTDATA=$PWD/gpudata tests/gpu/gpu_suite.sh gpubuild $OUT
# (libvulkan1 alone gives VK_ERROR_INCOMPATIBLE_DRIVER: the NVIDIA ICD needs the glvnd libraries.)
set -u
BUILD=${1:-build}
OUT=${2:-/tmp/vkinfer-gpu}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
export VKINFER_CACHE_DIR=$OUT/cache
"$BUILD/vkinfer" devices | tee "$OUT/devices.txt"
if ls /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json >/dev/null 2>&1; then
    export VKINFER_VALIDATION=1
fi
echo "validation: ${VKINFER_VALIDATION:-0}" | tee -a "$OUT/summary.txt"
fails=0
for t in "$BUILD"/tests/test_onnx_reader "$BUILD"/tests/test_runtime; do
    "$t" > "$OUT/$(basename "$t").log" 2>&1 && echo "PASS $(basename "$t")" || { echo "FAIL $(basename "$t")"; fails=$((fails+1)); }
done | tee -a "$OUT/summary.txt"
VKINFER_MAX_BINDING_BYTES=1024 "$BUILD/tests/test_runtime" > "$OUT/test_runtime_windowed.log" 2>&1 && echo "PASS test_runtime (1 KiB bindings)" | tee -a "$OUT/summary.txt" || echo "FAIL test_runtime (1 KiB bindings)" | tee -a "$OUT/summary.txt"
DATA=${ONNX_TESTDATA:-$($PY -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data"))')}
pass=0; fail=0; missing=0
while read -r name; do
    case "$name" in [a-z]*) ;; *) continue ;; esac
    dir="$DATA/$name"
    if [ ! -d "$dir" ]; then missing=$((missing+1)); continue; fi
    if "$BUILD/tests/conformance_runner" "$dir" --name "$name" >> "$OUT/conformance.log" 2>&1; then pass=$((pass+1)); else fail=$((fail+1)); fi
done < tests/conformance/passing.txt
echo "conformance (listed tests, data from $DATA): $pass passed, $fail failed, $missing not in that data" | tee -a "$OUT/summary.txt"
grep -E "^(FAIL|NOT YET)" "$OUT/conformance.log" | head -50 >> "$OUT/summary.txt"
for m in mobilenet_v2 resnet18; do
    for b in 1 4 32; do
        $PY tests/models/parity.py "$BUILD/vkinfer" $m $b 2>&1 | grep -E "max abs error|PASS|FAIL" | tee -a "$OUT/summary.txt"
    done
done
$PY tests/cli/test_cli.py "$BUILD/vkinfer" 2>&1 | tail -1 | sed 's/^/cli: /' | tee -a "$OUT/summary.txt"
for c in transformer unet1d mlp; do
    $PY tests/models/policies.py "$BUILD/vkinfer" $c 17 2>&1 | grep -E "max abs error|^FAIL" | tee -a "$OUT/summary.txt"
done
for c in linear_bf16 conv2d_batch2 elu mish var convtranspose1d index_put; do
    $PY tests/models/executorch_repros.py "$BUILD/vkinfer" $c 2>&1 | grep -E "max abs error|^FAIL" | tee -a "$OUT/summary.txt"
done
"$BUILD/tests/test_hostile_models" "$DATA" 300 2>&1 | tail -2 | sed 's/^/hostile models: /' | tee -a "$OUT/summary.txt"
$PY tests/models/windowed.py "$BUILD/vkinfer" 2>&1 | tail -2 | sed 's/^/windowed: /' | tee -a "$OUT/summary.txt"
unset VKINFER_VALIDATION
$PY bench/peers/plan_scaling.py "$BUILD/vkinfer" --blocks 50,200,800 2>/dev/null | tee "$OUT/plan_scaling.md"
$PY bench/peers/compare.py "$BUILD/vkinfer" --markdown "$OUT/benchmarks.md" --json "$OUT/benchmarks.json" 2>&1 | tail -20
