"""The CPU-device depthwise convolution kernels against PyTorch eager: conv2d_cpu_dw_planes
(float32: the lanes are output planes, an invocation walks RB output rows of PXB columns with
the input rows under its window held in registers) and, with VKINFER_CPU_DW=rows (as for
16-bit storage and tensors too large for a texel buffer), conv2d_cpu_depthwise(_tx) (lanes
along a row's columns, PXB pixels of OHB rows an invocation; src/ops/conv_cpu.c). The cases cover
heights that leave the last row block part empty, widths that leave the last column block
part empty or are no multiple of 4 (no uvec4 stores; X read as words, else 4 columns a
fetch, conv2d_cpu_dw_planes_v4: VKINFER_CPU_DW_X4=0 reads words everywhere), strides 1 and 2, dilation 2, padding 0,
1 and 2 (windows that never leave the input skip the bounds checks), 5x5 kernels, a channel
multiplier of 2, a fused ReLU6, batch 2, plane counts that leave a workgroup's last lanes
idle and a 1-D depthwise Conv. Each case checks from a profiled run that the kernel under
test ran. Usage: depthwise_cpu.py VKINFER (on a CPU device; VKINFER_CPU_DW_PXB with
VKINFER_CPU_DW_RB, or VKINFER_CPU_DW_ROWS for the rows kernel, choose other blocks; DW_CASES=a,b
runs only those cases: with VKINFER_MAX_BINDING_BYTES, the batch-2 ones run as windows of one
image each)."""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

from torch_export import export_onnx, run_exported


def dw(c, k, stride=1, padding=1, dilation=1, mult=1, act=False, dims=2):
    conv = (nn.Conv2d if dims == 2 else nn.Conv1d)(c, c * mult, k, stride=stride, padding=padding, dilation=dilation,
                                                    groups=c)
    return nn.Sequential(conv, nn.ReLU6()) if act else conv


def cases():
    r = torch.randn
    yield "odd_7x9", dw(8, 3), (r(1, 8, 7, 9),)
    yield "rows_13_width_4", dw(8, 3), (r(1, 8, 13, 4),)
    yield "stride2_odd", dw(16, 3, stride=2), (r(2, 16, 11, 15),)
    yield "stride2_tall", dw(5, 3, stride=2), (r(1, 5, 40, 33),)
    yield "no_padding", dw(8, 3, padding=0), (r(1, 8, 10, 20),)
    yield "dilation2_pad2", dw(8, 3, padding=2, dilation=2), (r(1, 8, 9, 17),)
    yield "k5_pad2_relu6", dw(12, 5, padding=2, act=True), (r(1, 12, 14, 14),)
    yield "multiplier2", dw(6, 3, mult=2), (r(1, 6, 9, 8),)
    yield "wide_56", dw(24, 3, act=True), (r(1, 24, 56, 56),)
    yield "conv1d", dw(8, 3, dims=1), (r(2, 8, 37),)
    # widths of whole texels: X read 4 columns a fetch (conv2d_cpu_dw_planes_v4), windows
    # starting 1, 2 or 0 columns into their texel (padding 1, 2, 0 and 4)
    yield "stride2_w16", dw(8, 3, stride=2), (r(2, 8, 9, 16),)
    yield "dilation2_pad2_w16", dw(8, 3, padding=2, dilation=2), (r(1, 8, 9, 16),)
    yield "k5_pad4_w12", dw(4, 5, padding=4, act=True), (r(1, 4, 7, 12),)
    yield "conv1d_w40", dw(8, 3, dims=1), (r(2, 8, 40),)


def main():
    vkinfer = sys.argv[1]
    kernel = "conv2d_cpu_depthwise" if os.environ.get("VKINFER_CPU_DW") == "rows" else "conv2d_cpu_dw_planes"
    torch.manual_seed(0)
    failed = []
    only = os.environ.get("DW_CASES")
    for name, model, inputs in cases():
        if only and name not in only.split(","):
            continue
        model = model.eval()
        with torch.no_grad():
            ref = model(*inputs).numpy()
        with tempfile.TemporaryDirectory() as tmp:
            run, got = run_exported(vkinfer, model, inputs, tmp, 13)
            prof = subprocess.run([vkinfer, "bench", os.path.join(tmp, "model.onnx"), "--random-inputs", "--runs", "1",
                                   "--warmup", "0", "--profile"], capture_output=True, text=True)
        kernels = set(re.findall(r"^\s+[\d.]+ ms\s+(\S+)\s", prof.stdout, re.M))
        bound = 1e-5 * max(1.0, float(np.abs(ref).max()))
        err = float(np.abs(got - ref).max()) if got is not None and got.shape == ref.shape else float("inf")
        dw_ran = any(k.startswith(kernel) for k in kernels) and not (
            os.environ.get("VKINFER_CPU_DW_X4") == "0" and "conv2d_cpu_dw_planes_v4" in kernels)
        ok = err <= bound and dw_ran
        print(f"{'PASS' if ok else 'FAIL'} {name}: max abs error {err:.3g} (bound {bound:.3g}), kernels {sorted(kernels)}")
        if not ok:
            failed.append(name)
    if failed:
        print(f"{len(failed)} failed: {', '.join(failed)}")
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
