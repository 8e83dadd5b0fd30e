#!/bin/bash
# Both conformance suites on a lent GPU (run from the repository root, Vulkan set up as
# tests/gpu/gpu_suite.sh says): every test listed in tests/conformance/passing.txt (ONNX 1.12:
# node, pytorch-converted, pytorch-operator, simple) and onnx123_passing.txt (ONNX 1.23 node
# tests), every fast path on, validation off (the VK_NV_cooperative_matrix2 kernels do not run
# under Debian 12's layer).
#   tests/gpu/gpu_conformance.sh BUILD DATA112 OUT
# DATA112: a copy of Debian's /usr/include/onnx/backend/test/data (the GPU machine lacks the
# package; carry it, ~40 MB). The ONNX 1.23 tree is generated here from the machine's onnx wheel
# (tests/conformance/onnx_node_tests.py) when its own lacks one. Prints pass/fail per suite and
# writes the failures to OUT/fails.txt. ONLY=REGEX keeps the tests whose NAME matches (for
# example ONLY=^onnx123/ or ONLY='^(node|pytorch|simple)'), so the suites can run as separate
# calls when one call's time is limited.
set -u
BUILD=${1:-build}; D112=${2:-.onnx112}; OUT=${3:-/tmp/vkinfer-gpu-conformance}
mkdir -p "$OUT"
export VKINFER_VALIDATION=0 VKINFER_CACHE_DIR=${VKINFER_CACHE_DIR:-$OUT/cache}
D123=$(${PYTHON:-python3} -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data"))')
if [ ! -d "$D123/node/test_abs" ]; then
    ${PYTHON:-python3} tests/conformance/onnx_node_tests.py "$OUT/data123/node" > /dev/null 2>&1; D123=$OUT/data123
fi
: > "$OUT/cases.txt"
grep -E '^[a-z]' tests/conformance/passing.txt | while read -r t; do echo "$D112/$t $t"; done >> "$OUT/cases.txt"
grep -E '^[a-z]' tests/conformance/onnx123_passing.txt | while read -r t; do echo "$D123/node/$t onnx123/$t"; done >> "$OUT/cases.txt"
if [ -n "${ONLY:-}" ]; then grep -E " ${ONLY#^}" "$OUT/cases.txt" > "$OUT/cases.only"; mv "$OUT/cases.only" "$OUT/cases.txt"; fi
: > "$OUT/fails.txt"
# each line "DIR NAME" appended to: sh -c CMD BUILD OUT, so $0 BUILD, $1 OUT, $2 DIR, $3 NAME.
# Every result is written as it comes (results.txt: "pass NAME" / "fail NAME"), so a run cut
# short by a time limit still counts what it did; one test may take 120 s at most.
: > "$OUT/results.txt"
xargs -P "$(nproc)" -L 1 sh -c 'if timeout 120 "$0/tests/conformance_runner" "$2" --name "$3" --listed 1 > /dev/null 2>&1; then echo "pass $3"; else echo "fail $3"; echo "$3" >> "$1/fails.txt"; fi >> "$1/results.txt"' \
    "$BUILD" "$OUT" < "$OUT/cases.txt" || true
for suite in node pytorch-converted pytorch-operator simple onnx123; do
    total=$(awk '{print $2}' "$OUT/cases.txt" | grep -c "^$suite/")
    ran=$(grep -c " $suite/" "$OUT/results.txt")
    pass=$(grep -c "^pass $suite/" "$OUT/results.txt")
    echo "$suite: $pass of $total listed tests pass ($ran ran)"
done
head -20 "$OUT/fails.txt"
