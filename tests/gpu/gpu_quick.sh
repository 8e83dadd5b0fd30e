#!/bin/bash
# A short GPU check for kernel work (run from the repository root on the lent H200, Vulkan set up
# as tests/gpu/gpu_suite.sh says): the tensor-core kernels' correctness, the conformance tests of the
# op families that GPU kernels changed (every fast path on, validation off: the
# VK_NV_cooperative_matrix2 kernels do not run under Debian 12's layer), MatMul 4096 and the
# half-precision table.   tests/gpu/gpu_quick.sh BUILD OUT [REGEX of listed test names, default all]
# SKIP_CHECK=1 skips the MatMul check, SKIP_BENCH=1 the benchmarks.
set -u
BUILD=${1:-build}; OUT=${2:-/tmp/vkinfer-gpu-quick}; RE=${3:-.}
mkdir -p "$OUT"
export VKINFER_VALIDATION=0 VKINFER_CACHE_DIR=${VKINFER_CACHE_DIR:-$OUT/cache}
"$BUILD/vkinfer" devices > "$OUT/devices.txt"
if [ -z "${SKIP_CHECK:-}" ]; then
python3 bench/peers/matmul_bench.py --vkinfer "$BUILD/vkinfer" --check > "$OUT/matmul_check.txt" 2>&1
echo "matmul check: $(tail -1 "$OUT/matmul_check.txt")"
fi
DATA=$(python3 -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data"))')
if [ ! -d "$DATA/node" ]; then # wheels without the node tree: generate it from the case generators
    python3 tests/conformance/onnx_node_tests.py "$OUT/data/node" > /dev/null 2>&1; DATA=$OUT/data
fi
for list in tests/conformance/passing.txt tests/conformance/onnx123_passing.txt; do
    grep -E '^[a-z]' "$list" | sed 's|^[^/]*/||' | grep -E "$RE"
done | sort -u | while read -r t; do [ -d "$DATA/node/$t" ] && echo "$t"; done > "$OUT/candidates.all"
# the data here are ONNX 1.23's: a test listed passing for 1.12 whose 1.23 data are listed
# failing with a reason (test_dft_inverse: numpy's rounding where the exact value is 0) is left out
grep -oE '^test_[A-Za-z0-9_]+' tests/conformance/onnx123_failing.txt | sort -u > "$OUT/failing123.txt"
grep -vxF -f "$OUT/failing123.txt" "$OUT/candidates.all" > "$OUT/candidates.txt"
: > "$OUT/conformance_fails.txt"
xargs -P "$(nproc)" -I{} sh -c '"$0/tests/conformance_runner" "$1/node/{}" --name "node/{}" --listed 1 > /dev/null 2>&1 || echo "FAIL node/{}" >> "$2/conformance_fails.txt"' "$BUILD" "$DATA" "$OUT" < "$OUT/candidates.txt"
fail=$(wc -l < "$OUT/conformance_fails.txt"); pass=$(( $(wc -l < "$OUT/candidates.txt") - fail ))
echo "conformance ($RE): $pass passed, $fail failed"; head -5 "$OUT/conformance_fails.txt" 2>/dev/null
[ -n "${SKIP_BENCH:-}" ] && exit 0
python3 bench/peers/matmul_bench.py --vkinfer "$BUILD/vkinfer" --runs 20 --only 4096 > "$OUT/matmul_bench.txt" 2>&1
grep -E "^4096" "$OUT/matmul_bench.txt"
python3 bench/peers/half_bench.py "$BUILD/vkinfer" --runs 30 --warmup 10 --markdown "$OUT/half_bench.md" > "$OUT/half_bench.txt" 2>&1
cat "$OUT/half_bench.md"
