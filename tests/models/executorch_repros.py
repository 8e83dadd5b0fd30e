"""The cases where ExecuTorch's Vulkan delegate falls short (../shared/seeds/
executorch-vulkan-repros.txt), each exported from PyTorch and run whole on the GPU by
vkinfer, compared with PyTorch eager.

    executorch_repros.py VKINFER CASE

CASE: linear_bf16, conv2d_batch2, elu, mish, var, convtranspose1d, index_put. The bound is
max|vkinfer - eager| <= 1e-4 * max|eager| + 1e-5 (bfloat16: one bfloat16 step, 2^-7 * max)."""
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

from torch_export import Fn, run_exported


class Put(nn.Module):
    def forward(self, t, idx):
        y = t.clone()
        y[idx] = 0.0
        return y


def case(name):
    torch.manual_seed(0)
    x = torch.randn(1, 16, 32)
    return {
        "linear_bf16": lambda: (nn.Linear(64, 64).to(torch.bfloat16), (torch.randn(4, 64, dtype=torch.bfloat16),)),
        "conv2d_batch2": lambda: (nn.Conv2d(3, 8, 3), (torch.randn(2, 3, 32, 32),)),
        "elu": lambda: (nn.ELU(), (x,)),
        "mish": lambda: (nn.Mish(), (x,)),
        "var": lambda: (Fn(lambda t: t.var(dim=-1, keepdim=True)), (x,)),
        "convtranspose1d": lambda: (nn.ConvTranspose1d(16, 8, 4, stride=2, padding=1), (x,)),
        "index_put": lambda: (Put(), (torch.randn(8, 32), torch.tensor([1, 3]))),
    }[name]()


def main():
    vkinfer, name = sys.argv[1], sys.argv[2]
    model, inputs = case(name)
    model.eval()
    with torch.no_grad():
        ref = model(*inputs).float().numpy().astype(np.float64)
    with tempfile.TemporaryDirectory() as tmp:
        run, got = run_exported(vkinfer, model, inputs, tmp, 14)
    if got is None:
        print(f"FAIL {name}: vkinfer exited {run.returncode}")
        return 1
    got = got.astype(np.float64)
    scale = float(np.max(np.abs(ref)))
    bound = 2.0 ** -7 * scale if name.endswith("bf16") else 1e-4 * scale + 1e-5
    err = float(np.max(np.abs(got - ref))) if got.shape == ref.shape else float("inf")
    print(f"{name}: max abs error {err:.3g} (bound {bound:.3g})")
    print(("PASS " if err <= bound else "FAIL ") + name)
    return 0 if err <= bound else 1


if __name__ == "__main__":
    sys.exit(main())
