#!/bin/bash
# LeRobot's VLA policies at full size on the lent H100/H200 machine (no Vulkan loader, no network):
# carry .gl (the loader and glvnd .debs, see bench/gpu_suite.sh), .wheels (lerobot 0.6.1,
# transformers 5.5.4 and their pure-Python dependencies for Python 3.12, downloaded with
# `pip download --no-deps --python-version 3.12 --only-binary=:all:`) and gpubuild/vkinfer, then
#   bench/vla_gpu.sh OUT_DIR ROW [ROW...]       ROW: policy:dtype[:seconds], e.g. smolvla:fp32:240
# Each row is one `bench/vla_policies.py table` call under its own time limit (default 300 s);
# rows go to OUT_DIR/rows.jsonl and the logs to OUT_DIR/log.txt. VLA_OPTIMIZE=0 skips the
# exporter's onnxscript optimizer, most of a full-size export's time; VLA_COMPILE=1 adds
# torch.compile's column.
set -u
OUT=${1:?OUT_DIR}; shift
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
       __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
python3 -m pip install -q --no-index --no-deps .wheels/*.whl 2>&1 | tail -2 || python3 -m pip install -q --no-index --no-deps --break-system-packages .wheels/*.whl
python3 -c "import torch, transformers, onnx, lerobot; print('torch', torch.__version__, 'transformers', transformers.__version__, 'onnx', onnx.__version__)"
gpubuild/vkinfer devices
mkdir -p /tmp/vla
for row in "$@"; do
    IFS=: read -r policy dtype limit <<<"$row"
    echo "== $policy $dtype (limit ${limit:-300} s)" | tee -a "$OUT/log.txt"
    PYTHONUNBUFFERED=1 timeout "${limit:-300}" python3 bench/vla_policies.py table gpubuild/vkinfer --policies "$policy" \
        --dtypes "$dtype" --out /tmp/vla --json "$OUT/rows.jsonl" --runs 20 --warmup 3 2>&1 |
        grep -v "Warning\|warn(" | tee -a "$OUT/log.txt"
    echo "== exit ${PIPESTATUS[0]}" | tee -a "$OUT/log.txt"
    rm -f /tmp/vla/${policy}_full_${dtype}.onnx*
done
