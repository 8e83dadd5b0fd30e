"""Convolutions as transposed products on CPU devices (src/ops/conv_matmul.c, record_cpu_transposed:
Y^T = colT x W^T, shaders/im2col_t_cpu.comp and matmul_cpu's Y_T store) against PyTorch eager:
padding, strides, dilation, K not a multiple of 4, 1x1 with and without stride, Conv1d, a
non-square kernel, a bias, a fused residual Add and Relu, batch 1-3; and 1x1 convolutions of
stride 1 whose pixels and input channels come in 4s, whose product reads X in place along the
pixels (matmul_cpu's A_T, no im2col_t_cpu), with a fused residual and Relu6, batch 2, a 14x14
map. Each runs with VKINFER_CPU_CONV_TRANSPOSE=1 (the path wherever it applies) and =0
(never), and with =1 the profile must show im2col_t_cpu, or for the in-place cases matmul_cpu
without it, so that neither path can silently go untested. Passes when max|vkinfer - eager|
<= 1e-5 * max|eager|.

    conv_transposed_cpu.py VKINFER"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

from torch_export import run_exported


class ResidualRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(32, 32, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.c(x) + x)


class PointwiseResidual(nn.Module):
    """mobilenet_v2's 14x14 block end: a 1x1 projection plus the block's input, and a 1x1
    expansion with a Relu6 (both read X in place)."""

    def __init__(self):
        super().__init__()
        self.e, self.p = nn.Conv2d(32, 96, 1), nn.Conv2d(96, 32, 1)

    def forward(self, x):
        return self.p(torch.clamp(self.e(x), 0, 6)) + x


torch.manual_seed(0)
CASES = [
    ("3x3_pad", nn.Conv2d(16, 64, 3, padding=1), (2, 16, 6, 6)),
    ("3x3_stride2", nn.Conv2d(8, 32, 3, stride=2, padding=1), (1, 8, 9, 7)),
    ("k_not_4", nn.Conv2d(3, 24, 5, padding=2, bias=False), (2, 3, 5, 5)),
    ("dilated", nn.Conv2d(12, 20, 3, padding=2, dilation=2), (1, 12, 7, 6)),
    ("1x1", nn.Conv2d(20, 40, 1), (3, 20, 3, 3)),
    ("1x1_stride2", nn.Conv2d(20, 40, 1, stride=2), (1, 20, 5, 5)),
    ("conv1d", nn.Conv1d(10, 48, 3, padding=1), (2, 10, 9)),
    ("3x1", nn.Conv2d(6, 16, (3, 1), padding=(1, 0)), (1, 6, 4, 5)),
    ("residual_relu", ResidualRelu(), (2, 32, 5, 5)),
    ("1x1_in_place", nn.Conv2d(24, 40, 1), (2, 24, 4, 6)),
    ("1x1_in_place_residual", PointwiseResidual(), (1, 32, 14, 14)),
    ("1x1_k_not_4", nn.Conv2d(6, 16, 1), (1, 6, 4, 4)),
]
IN_PLACE = {"1x1_in_place", "1x1_in_place_residual"}  # X read as it is: no im2col_t_cpu


def main():
    vkinfer = sys.argv[1]
    failed = 0
    for name, model, shape in CASES:
        model.eval()
        x = torch.randn(*shape)
        with torch.no_grad():
            ref = model(x).numpy()
        for mode in ("1", "0"):
            os.environ["VKINFER_CPU_CONV_TRANSPOSE"] = mode
            with tempfile.TemporaryDirectory() as tmp:
                run, got = run_exported(vkinfer, model, (x,), tmp, 17)
                prof = subprocess.run([vkinfer, "bench", os.path.join(tmp, "model.onnx"), "--random-inputs", "--runs", "1",
                                       "--warmup", "0", "--profile"], capture_output=True, text=True).stdout
            if got is None:
                print(f"FAIL {name} transpose={mode}: vkinfer exited {run.returncode}")
                failed += 1
                continue
            err = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
            ok = err <= 1e-5
            if mode == "1" and name in IN_PLACE and ("im2col_t_cpu" in prof or not re.search(r"matmul_cpu(_lanes)? ", prof)):
                print(f"FAIL {name}: the transposed product did not read X in place")
                ok = False
            elif mode == "1" and name not in IN_PLACE and "im2col_t_cpu" not in prof:
                print(f"FAIL {name}: the transposed path did not run")
                ok = False
            print(f"{'PASS' if ok else 'FAIL'} {name} transpose={mode}: max rel error {err:.3g}")
            failed += not ok
    print("PASS" if not failed else f"FAIL ({failed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
