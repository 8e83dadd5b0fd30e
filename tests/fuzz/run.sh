#!/bin/sh
# Runs every fuzz target for FUZZ_SECONDS (default 60) from its seed corpus, with
# AddressSanitizer and UndefinedBehaviorSanitizer (the build of `make fuzz`). Crashes are
# written to BUILD/fuzz-artifacts; the run fails if any target finds one.
#   tests/fuzz/run.sh BUILD ONNX_TESTDATA [SECONDS]
# With FUZZ_RUNS=N set instead (what `make test` does), each target makes N executions from a
# fixed random seed and the seed corpus alone, so the run is the same on every machine: a
# failure there is a regression, not luck. Time-limited runs (`make fuzz`) hunt for new bugs.
set -u
BUILD=$(cd "$1" && pwd)
DATA=$2
SECONDS_EACH=${3:-${FUZZ_SECONDS:-60}}
CORPUS=$BUILD/fuzz-corpus
ART=$BUILD/fuzz-artifacts
mkdir -p "$ART"
[ -d "$CORPUS/model" ] || /usr/bin/python3 "$(dirname "$0")/seeds.py" "$DATA" "$CORPUS" || exit 1
# lavapipe's own allocations outlive the process in ways LeakSanitizer reports; our code's
# leaks are caught by the unit tests' clean shutdown instead
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
# first every input that once crashed a target (tests/fuzz/regressions/<target>/), run once
REG=$(dirname "$0")/regressions
for t in model tensor npy; do
    [ -d "$REG/$t" ] || continue
    files=$(ls "$REG/$t")
    [ -n "$files" ] || continue
    if (cd "$REG/$t" && "$BUILD/fuzz_$t" $files) > "$BUILD/fuzz_${t}_regressions.log" 2>&1; then
        echo "fuzz_$t: $(echo $files | wc -w) regression inputs pass"
    else
        echo "fuzz_$t: a regression input fails (see $BUILD/fuzz_${t}_regressions.log)"
        status=1
    fi
done
for t in model tensor npy; do
    if [ -n "${FUZZ_RUNS:-}" ]; then
        runs=$FUZZ_RUNS
        [ $t = tensor ] && runs=$((FUZZ_RUNS * 20)) # a thousand times cheaper than a model
        echo "fuzz_$t: $runs runs, seed 1"
        fresh=$BUILD/fuzz-new-$t
        rm -rf "$fresh" && mkdir -p "$fresh"
        limit="-runs=$runs -seed=1"
        dirs="$fresh $CORPUS/$t"
    else
        echo "fuzz_$t: $SECONDS_EACH s"
        limit="-max_total_time=$SECONDS_EACH"
        dirs="$CORPUS/$t"
    fi
    "$BUILD/fuzz_$t" $limit -timeout=30 -rss_limit_mb=4096 -max_len=262144 \
        -artifact_prefix="$ART/$t-" -print_final_stats=1 $dirs > "$BUILD/fuzz_$t.log" 2>&1 || status=1
    grep -E "^stat::number_of_executed_units|^stat::peak_rss|cov:|ERROR|SUMMARY" "$BUILD/fuzz_$t.log" | tail -4
done
[ $status = 0 ] && echo "fuzzing: no crash" || echo "fuzzing: a target failed (see $ART and $BUILD/fuzz_*.log)"
exit $status
