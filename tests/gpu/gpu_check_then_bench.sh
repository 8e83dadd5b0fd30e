#!/bin/bash
# A lent GPU's one call for a kernel change: correctness first, then the numbers, every step
# skipped once DEADLINE seconds have passed (so a call limited in time still returns what it
# did, in order of importance).   tests/gpu/gpu_check_then_bench.sh BUILD OUT [DEADLINE_S, default 540]
# Run from the repository root with Vulkan set up as tests/gpu/gpu_suite.sh says. Steps:
#   1. conformance of every listed test whose data the machine has, and the MatMul check of
#      every kernel family (tests/gpu/gpu_quick.sh with SKIP_BENCH=1)
#   2. model parity (resnet18 at batch 1 and 32, mobilenet_v2 at batch 1 and 32, the policies,
#      the MatMul parity cases) with every fast path on
#   3. issue 6's peers (bench/peers/gpu_peers.py --no-compile), the half-precision table
#      (bench/peers/half_bench.py) and, where lerobot is installed, LeRobot's policies
#      (bench/peers/lerobot_policies.py), as markdown in OUT
# OUT/summary.txt holds every step's verdict; STEPS="1 2 3" chooses steps, MODELS and HALF_MODELS
# (comma-separated) the models of step 3, RUNS its timed runs. Steps 1 and 2 took 465 s of a call on
# the H200 (1,824 tests): give the benchmarks a call of their own.
set -u
BUILD=${1:-build}; OUT=${2:-/tmp/vkinfer-gpu-check}; DEADLINE=${3:-540}
STEPS=${STEPS:-1 2 3}
mkdir -p "$OUT"
export VKINFER_CACHE_DIR=${VKINFER_CACHE_DIR:-/tmp/vkinfer-cache} PYTHONUNBUFFERED=1
start=$(date +%s)
left() { echo $((DEADLINE - ($(date +%s) - start))); }
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
: > "$OUT/summary.txt"
"$BUILD/vkinfer" devices | head -3 | tee -a "$OUT/summary.txt"
for step in $STEPS; do
    case $step in
    1)
        [ "$(left)" -gt 60 ] || { say "step 1 skipped: deadline"; continue; }
        SKIP_BENCH=1 timeout $(($(left) - 30)) bash tests/gpu/gpu_quick.sh "$BUILD" /tmp/vkinfer-quick 2>&1 | tee -a "$OUT/summary.txt"
        cp /tmp/vkinfer-quick/conformance_fails.txt "$OUT/" 2>/dev/null
        ;;
    2)
        for m in "resnet18 1" "resnet18 32" "mobilenet_v2 1" "mobilenet_v2 32"; do
            [ "$(left)" -gt 30 ] || { say "parity $m skipped: deadline"; continue; }
            say "parity $m: $(timeout 120 python3 tests/models/parity.py "$BUILD/vkinfer" $m 2>&1 | grep -E "PASS|FAIL" | tail -1)"
        done
        for p in transformer unet1d mlp; do
            [ "$(left)" -gt 20 ] || continue
            say "policy $p: $(timeout 60 python3 tests/models/policies.py "$BUILD/vkinfer" $p 17 2>&1 | grep -E "PASS|FAIL" | tail -1)"
        done
        [ "$(left)" -gt 30 ] && say "matmul parity: $(timeout 90 python3 tests/models/matmul_parity.py "$BUILD/vkinfer" 2>&1 | tail -1)"
        ;;
    3)
        [ "$(left)" -gt 120 ] || { say "peers skipped: deadline"; continue; }
        timeout $(($(left) - 60)) python3 bench/peers/gpu_peers.py "$BUILD/vkinfer" --no-compile --runs ${RUNS:-50} --warmup 10 \
            ${MODELS:+--models "$MODELS"} \
            --markdown "$OUT/peers.md" > "$OUT/peers.log" 2>&1
        say "peers: rc $?"
        [ "$(left)" -gt 40 ] || { say "half bench skipped: deadline"; continue; }
        timeout $(($(left) - 5)) python3 bench/peers/half_bench.py "$BUILD/vkinfer" --models ${HALF_MODELS:-resnet50_b32,bert_b8,policy_bf16_b8} \
            --runs 30 --warmup 10 --markdown "$OUT/half.md" > "$OUT/half.log" 2>&1
        say "half bench: rc $?"
        # LeRobot's own policies where lerobot imports (its wheels carried: bench/peers/lerobot_policies.py)
        if ! python3 -c "import lerobot" 2>/dev/null; then
            say "lerobot policies: not run, lerobot is not installed"
        elif [ "$(left)" -gt 150 ]; then
            timeout $(($(left) - 5)) python3 bench/peers/lerobot_policies.py "$BUILD/vkinfer" --markdown "$OUT/lerobot.md" \
                > "$OUT/lerobot.log" 2>&1
            say "lerobot policies: rc $?"
        else
            say "lerobot policies skipped: deadline"
        fi
        ;;
    esac
done
say "done in $(( $(date +%s) - start )) s"
