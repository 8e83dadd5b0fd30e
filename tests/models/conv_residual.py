"""Convolutions at batch > 1 as one product over the batch (VKINFER_CONV_KERNELS=gemm_batch, what
the H200 runs for ResNet's 28x28 and smaller maps in fp16): the product's [Cout, N*OH*OW]
result is put into NCHW by one pass, which also takes a residual Add that alone reads the
convolution and a Relu after it (src/ops/conv_matmul.c). A ResNet bottleneck-style block at batch 3
against PyTorch eager, fused and with VKINFER_NO_FUSION=1. In the fp16 mode (the batched
product; float32 products take the CPU MatMul on CPU devices, per image): exactly 6 dispatches
fewer, the Relus of the first two convolutions (their products' epilogue) and each residual's
Add and Relu (into the layout pass); before the layout pass took them, 4 (the Relus into the
Adds). float32: 6 fewer too, each residual's Add and Relu taken by its convolution's product
(matmul_cpu's R) or, as Winograd, by the output transform; before residuals were taken as R,
4 (5 as Winograd).

    conv_residual.py VKINFER"""
import os
import re
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

from torch_export import run_exported, randomize_batchnorm


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(16, 8, 1, bias=False), nn.BatchNorm2d(8)
        self.c2, self.b2 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.c3, self.b3 = nn.Conv2d(8, 16, 1, bias=False), nn.BatchNorm2d(16)
        self.c4, self.b4 = nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16)

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = torch.relu(self.b2(self.c2(y)))
        y = torch.relu(self.b3(self.c3(y)) + x)       # the residual: Add, then Relu
        return torch.relu(self.b4(self.c4(y)) + y)    # a second one, after a 3x3 convolution


def main():
    vkinfer = sys.argv[1]
    torch.manual_seed(0)
    model = randomize_batchnorm(Block()).eval()
    x = torch.randn(3, 16, 7, 9)
    with torch.no_grad():
        ref = model(x).numpy()
    os.environ["VKINFER_CONV_KERNELS"] = "gemm_batch"
    failed = 0
    # float32 as im2col and products, and as Winograd F(2x2, 3x3) (forced on any device; CPU
    # devices take it on their larger 3x3 layers), whose output pass takes the second
    # residual's Add and Relu; the 1x1 convolutions' products take theirs as R
    modes = (("float32", [], {"VKINFER_CONV_WINOGRAD": "0"}, 1e-4, 6),
             ("float32 winograd", [], {"VKINFER_CONV_WINOGRAD": "1"}, 1e-4, 6),
             ("fp16", ["--precision", "fp16"], {}, 1e-2, 6))
    for mode, extra, env, bound, fewer in modes:
        os.environ.pop("VKINFER_CONV_WINOGRAD", None)
        os.environ.update(env)
        counts = {}
        for fusion in ("fused", "unfused"):
            if fusion == "unfused":
                os.environ["VKINFER_NO_FUSION"] = "1"
            else:
                os.environ.pop("VKINFER_NO_FUSION", None)
            with tempfile.TemporaryDirectory() as tmp:
                run, got = run_exported(vkinfer, model, (x,), tmp, 17, extra)
            if got is None:
                print(f"FAIL {mode} {fusion}: vkinfer exited {run.returncode}")
                failed += 1
                continue
            err = float(np.max(np.abs(got.astype(np.float64) - ref)))
            tol = bound * float(np.max(np.abs(ref)))
            m = re.search(r"plan: (\d+) dispatches", run.stdout)
            counts[fusion] = int(m.group(1)) if m else None
            ok = err <= tol
            print(f"{'PASS' if ok else 'FAIL'} {mode} {fusion}: max abs error {err:.3g} (bound {tol:.3g}), "
                  f"{counts[fusion]} dispatches")
            failed += not ok
        os.environ.pop("VKINFER_NO_FUSION", None)
        if len(counts) == 2:
            ok = counts["unfused"] is not None and counts["fused"] is not None and counts["unfused"] - counts["fused"] == fewer
            print(f"{'PASS' if ok else 'FAIL'} {mode}: {counts['unfused']} -> {counts['fused']} dispatches "
                  f"(expected {fewer} fewer)")
            failed += not ok
    print("PASS" if not failed else f"FAIL ({failed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
