#!/bin/bash
# One environment setting's values side by side on models kept by bench/tuning/gpu_profile.py --keep:
#   bench/tuning/env_sweep.sh VKINFER KEEP_DIR VAR "V1 V2 ..." MODEL... [-- extra bench options]
# prints, per model, the median ms and dispatch count of `vkinfer bench` under each value
# ("-" leaves VAR unset), values alternating twice so that drift shows.
set -u
VK=$1 KEEP=$2 VAR=$3 VALUES=$4
shift 4
models=() extra=()
while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then shift; extra=("$@"); break; fi
    models+=("$1"); shift
done
for m in "${models[@]}"; do
    dir=$KEEP/$m
    inputs=()
    for f in "$dir"/in*.npy; do inputs+=(--input "$(basename "$f" .npy)=$f"); done
    line="$m:"
    for pass in 1 2; do
        for v in $VALUES; do
            if [ "$v" = "-" ]; then
                out=$(env -u "$VAR" "$VK" bench "$dir/m.onnx" "${inputs[@]}" --runs 50 --warmup 10 --json "${extra[@]}" 2>&1 | tail -1)
            else
                out=$(env "$VAR=$v" "$VK" bench "$dir/m.onnx" "${inputs[@]}" --runs 50 --warmup 10 --json "${extra[@]}" 2>&1 | tail -1)
            fi
            med=$(echo "$out" | python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); print("%.3f/%d" % (j["median_ms"], j["dispatches"]))' 2>/dev/null || echo "err")
            line="$line  $v=$med"
        done
    done
    echo "$line"
done
