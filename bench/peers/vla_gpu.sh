#!/bin/bash
# LeRobot's VLA policies at full size on the lent H100/H200 machine (no Vulkan loader, no network):
# carry .gl (the loader and glvnd .debs, see tests/gpu/gpu_suite.sh), .wheels (lerobot 0.6.1,
# transformers 5.5.4, onnxscript, diffusers (groot, multi_task_dit) and their dependencies for
# Python 3.12 that the machine lacks, downloaded with `pip download --no-deps --python-version
# 3.12 --only-binary=:all:`; not hf_xet or pygments, which exporting never imports, nor OpenCV,
# which bench/peers/vla_policies.py stubs: the carry limit is 64 MiB) and gpubuild/vkinfer (stripped:
# `strip gpubuild/vkinfer` halves it), then
#   bench/peers/vla_gpu.sh OUT_DIR ROW [ROW...]       ROW: policy:dtype[:seconds], e.g. smolvla:fp32:240
# Each row is one `bench/peers/vla_policies.py table` call under its own time limit (default 300 s);
# rows go to OUT_DIR/rows.jsonl and the logs to OUT_DIR/log.txt. VLA_OPTIMIZE=0 skips the
# exporter's onnxscript optimizer, most of a full-size export's time; VLA_COMPILE=1 adds
# torch.compile's column. VLA_PROFILE_DIR=DIR adds --profile to each row's one `vkinfer bench`
# (chunk, timings and profile from one plan) and keeps its JSON as
# DIR/profile_<policy>_<dtype>.json, the largest ops and kernels in .txt beside it.
# VLA_EXPORT_JOBS=N exports every row's policy first, N at a time in the background (exports
# are single-threaded Python; the machine has 16 cores), and each row waits for its own export;
# the exports outlive the command (setsid), so a later call on the same warm machine finds them
# in /tmp/vla (VLA_KEEP=1 keeps each export after its row).
# VLA_BEFORE_ROWS="COMMAND" runs once before the first row (GPU work while the exports run).
set -u
OUT=${1:?OUT_DIR}; shift
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
       __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
python3 -m pip install -q --no-index --no-deps .wheels/*.whl 2>&1 | tail -2 || python3 -m pip install -q --no-index --no-deps --break-system-packages .wheels/*.whl
python3 -c "import torch, transformers, onnx, lerobot; print('torch', torch.__version__, 'transformers', transformers.__version__, 'onnx', onnx.__version__)"
gpubuild/vkinfer devices
mkdir -p /tmp/vla
if [ "${VLA_EXPORT_JOBS:-0}" -gt 0 ]; then
    for row in "$@"; do
        IFS=: read -r policy dtype limit <<<"$row"
        stem=/tmp/vla/${policy}_full_${dtype}
        [ -e "$stem.npz" ] || [ -e "$stem.started" ] || { touch "$stem.started"; echo "$policy $dtype"; }
    done | setsid nohup xargs -P "$VLA_EXPORT_JOBS" -L 1 sh -c \
        'PYTHONUNBUFFERED=1 python3 bench/peers/vla_policies.py export --policy "$0" --size full --dtype "$1" --out /tmp/vla \
             > "/tmp/vla/$0_full_$1.export.log" 2>&1; echo $? > "/tmp/vla/$0_full_$1.done"' > /dev/null 2>&1 &
fi
# VLA_BEFORE_ROWS: a command that uses the GPU while the exports keep the CPUs busy
[ -n "${VLA_BEFORE_ROWS:-}" ] && bash -c "$VLA_BEFORE_ROWS" 2>&1 | tee -a "$OUT/before_rows.txt"
for row in "$@"; do
    IFS=: read -r policy dtype limit <<<"$row"
    echo "== $policy $dtype (limit ${limit:-300} s)" | tee -a "$OUT/log.txt"
    stem=/tmp/vla/${policy}_full_${dtype}
    if [ "${VLA_EXPORT_JOBS:-0}" -gt 0 ]; then # wait for the background export
        while [ ! -e "$stem.done" ] && { pgrep -f "export --policy $policy --size full --dtype $dtype" ||
                pgrep -f "xargs -P $VLA_EXPORT_JOBS -L 1"; } > /dev/null; do
            sleep 5
        done
        grep -v "Warning\|warn(" "$stem.export.log" 2>/dev/null | tail -3 | tee -a "$OUT/log.txt"
        if [ "$(cat "$stem.done" 2>/dev/null)" != 0 ]; then
            echo "== export failed or was stopped (exit $(cat "$stem.done" 2>/dev/null || echo none)); row skipped" |
                tee -a "$OUT/log.txt"
            rm -f "$stem.started"
            continue
        fi
    fi
    PYTHONUNBUFFERED=1 timeout "${limit:-300}" python3 bench/peers/vla_policies.py table gpubuild/vkinfer --policies "$policy" \
        --dtypes "$dtype" --out /tmp/vla --json "$OUT/rows.jsonl" --runs 20 --warmup 3 2>&1 |
        grep -v "Warning\|warn(" | tee -a "$OUT/log.txt"
    echo "== exit ${PIPESTATUS[0]}" | tee -a "$OUT/log.txt"
    [ "${VLA_KEEP:-0}" != 0 ] || rm -f "$stem".onnx*
done
