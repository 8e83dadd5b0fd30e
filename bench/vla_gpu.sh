#!/bin/bash
# LeRobot's VLA policies at full size on the lent H200 machine (no Vulkan loader, no network):
# carry .gl (the loader and glvnd .debs, see bench/gpu_suite.sh), .wheels (lerobot 0.6.1,
# transformers 5.5.4 and their pure-Python dependencies for Python 3.12, downloaded with
# `pip download --no-deps --python-version 3.12 --only-binary=:all:`) and gpubuild/vkinfer, then
#   bench/vla_gpu.sh OUT_DIR POLICIES [DTYPES]
# Rows go to OUT_DIR/rows.jsonl (bench/vla_policies.py table). VLA_OPTIMIZE=0 skips the
# exporter's onnxscript optimizer, most of a full-size export's time.
set -u
OUT=${1:?OUT_DIR}; POLICIES=${2:-smolvla}; DTYPES=${3:-bf16,fp32}
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
       __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
python3 -m pip install -q --no-index --no-deps .wheels/*.whl 2>&1 | tail -2 || python3 -m pip install -q --no-index --no-deps --break-system-packages .wheels/*.whl
python3 -c "import torch, transformers, onnx, lerobot; print('torch', torch.__version__, 'transformers', transformers.__version__, 'onnx', onnx.__version__)"
gpubuild/vkinfer devices
mkdir -p /tmp/vla
PYTHONUNBUFFERED=1 python3 bench/vla_policies.py table gpubuild/vkinfer --policies "$POLICIES" --dtypes "$DTYPES" \
    --out /tmp/vla --json "$OUT/rows.jsonl" --runs 20 --warmup 3 2>&1 | grep -v "Warning\|warn(" | tee "$OUT/log.txt"
