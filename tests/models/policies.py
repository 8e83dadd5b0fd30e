"""Model parity for robot-policy-shaped networks, built with PyTorch (seeded random weights),
exported to ONNX during the test, run with `vkinfer run`, compared with PyTorch eager.

    policies.py VKINFER CASE [OPSET]

CASE: transformer (ACT-style encoder: attention, LayerNorm, GELU, Linear head), relu_mlp and
relu_mlp_b2 (Linear + ReLU/ReLU6 at batch 16 and 2: fused into the matmul kernels), unet1d
(Diffusion-Policy-style: Conv1d, GroupNorm, Mish, FiLM conditioning, ConvTranspose1d), mlp
(TD-MPC-style: Linear, LayerNorm, Mish, ELU, softmax, var). Passes when max|vkinfer - eager|
<= 1e-4 * max|eager| + 1e-5."""
import os
import sys
import tempfile

import numpy as np
import onnx
import torch
import torch.nn as nn

from torch_export import profiled_dispatches, run_exported


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(64, 14)
        self.pos = nn.Parameter(torch.randn(1, 10, 64))

    def forward(self, x):
        return self.head(self.encoder(x + self.pos))


class UNetBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.norm1 = nn.Conv1d(8, 32, 5, padding=2), nn.GroupNorm(8, 32)
        self.conv2, self.norm2 = nn.Conv1d(32, 32, 5, padding=2), nn.GroupNorm(8, 32)
        self.mish = nn.Mish()
        self.up = nn.ConvTranspose1d(32, 16, 4, stride=2, padding=1)
        self.cond = nn.Sequential(nn.Linear(16, 64), nn.Mish())

    def forward(self, x, t):
        h = self.mish(self.norm1(self.conv1(x)))
        scale, bias = self.cond(t).unsqueeze(-1).chunk(2, dim=1)
        h = self.mish(self.norm2(self.conv2(h * scale + bias)))
        return self.up(h)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.norm, self.l2 = nn.Linear(24, 128), nn.LayerNorm(128), nn.Linear(128, 32)

    def forward(self, x):
        h = nn.functional.elu(self.l2(nn.functional.mish(self.norm(self.l1(x)))))
        return torch.softmax(h, -1) + h.var(dim=-1, keepdim=True)


class ReluMLP(nn.Module):
    """Linear layers followed by ReLU / ReLU6, which the matmul kernels absorb (fusion)."""

    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.l3 = nn.Linear(1024, 64), nn.Linear(64, 256), nn.Linear(256, 10)

    def forward(self, x):
        return self.l3(nn.functional.relu6(self.l2(torch.relu(self.l1(x)))))


def case(name):
    torch.manual_seed(0)
    if name == "transformer":
        return Transformer(), (torch.randn(2, 10, 64),)
    if name == "unet1d":
        return UNetBlock(), (torch.randn(2, 8, 16), torch.randn(2, 16))
    if name == "mlp":
        return MLP(), (torch.randn(4, 24),)
    if name == "relu_mlp":  # batch 16: tiled kernel with K split over workgroups
        return ReluMLP(), (torch.randn(16, 1024),)
    if name == "relu_mlp_b2":  # batch 2: the GEMV-like kernel
        return ReluMLP(), (torch.randn(2, 1024),)
    raise SystemExit(f"unknown case {name}")


def main():
    vkinfer, name = sys.argv[1], sys.argv[2]
    opset = int(sys.argv[3]) if len(sys.argv) > 3 else 14
    model, inputs = case(name)
    model.eval()
    with torch.no_grad():
        ref = model(*inputs).numpy()
    with tempfile.TemporaryDirectory() as tmp:
        run, got = run_exported(vkinfer, model, inputs, tmp, opset)
        named = profiled_dispatches(vkinfer, os.path.join(tmp, "model.onnx"), names=True)
        dispatched = [(k, op) for k, op, _ in named] if named is not None else None
        # attention's outputs moved back by a Transpose (directly or through a Reshape): stored
        # through by the kernel before it (src/ops/matmul_fuse.c mm_store_transposed), claimed
        graph = onnx.load(os.path.join(tmp, "model.onnx"))
        made_by = {o: n for n in graph.graph.node for o in n.output}

        def after_product(n, hops=0):
            src = made_by.get(n.input[0])
            return src is not None and (src.op_type == "MatMul" or (src.op_type == "Reshape" and hops == 0 and
                                                                     after_product(src, 1)))
        back = {n.name for n in graph.graph.node if n.op_type == "Transpose" and after_product(n)}
        stored = len(back - {nm for _, _, nm in named or []})
    if got is None:
        print(f"FAIL {name} opset {opset}: vkinfer exited {run.returncode}")
        return 1
    err = float(np.max(np.abs(got.astype(np.float64) - ref))) if got.shape == ref.shape else float("inf")
    bound = 1e-4 * float(np.max(np.abs(ref))) + 1e-5
    print(f"{name} opset {opset}: shape {got.shape}, max abs error {err:.3g} (bound {bound:.3g})")
    # opset 17: 2 GELU chains (4 nodes each, then the GELU itself into linear1's epilogue), the
    # bias Adds of the feed-forward Linears (4), of the in-projections (2) and of the 3-D head
    # (1), and the 4 LayerNormalizations (into the residual Adds before them) are planned into
    # other nodes' kernels
    # opset 14: the LayerNormalizations are spelled as 9 nodes each (8 fused each, and the
    # ninth into the residual Add); each layer's attention, MatMul -> Softmax -> MatMul, is one
    # dispatch (attention_rows: 2 more each) where the device's kernels take it (GPUs, or
    # VKINFER_ATTENTION_ROWS=1), unless VKINFER_ATTENTION_ROWS=0 or q, k and v are views with a
    # split dim (at batch 2 PyTorch 1.13's head split merges the batch with the heads, [10,2,64]
    # -> [10,8,16]: no copy, and the products and Softmax run as they are; VKINFER_SPLIT_VIEWS=0
    # copies them)
    rows = os.environ.get("VKINFER_ATTENTION_ROWS")  # GPUs by default, not CPU devices' kernels
    gpu_kernels = os.environ.get("VKINFER_MATMUL_KERNELS") == "gpu" or "device: llvmpipe" not in run.stdout
    kernels = {k for k, _ in dispatched or []}
    if name == "transformer":
        if dispatched is None:
            print(f"FAIL {name}: no profile")
            return 1
        copied = [node for k, node in dispatched if node == "Reshape"]
        split_views = os.environ.get("VKINFER_SPLIT_VIEWS") != "0"
        if split_views and copied:
            print(f"FAIL {name}: the head split's Reshapes copied ({len(copied)} dispatches), not views")
            return 1
        rows_expected = rows == "1" or (rows != "0" and gpu_kernels)
        if rows_expected and not split_views and "attention_rows" not in kernels:
            print(f"FAIL {name}: attention_rows did not run (kernels: {', '.join(sorted(kernels))})")
            return 1
        if not rows_expected and "attention_rows" in kernels:
            print(f"FAIL {name}: attention_rows ran where the device's kernels keep three dispatches")
            return 1
        attention = 2 * 2 if "attention_rows" in kernels else 0
        # on GPUs linear2 (K = 256) splits K: the product's reduce pass takes the residual Add
        # and normalizes the rows for the LayerNormalization after it (matmul_splitk_ln), one
        # node more each than the residual Add + LayerNorm kernel
        joined = sum(1 for k, _ in dispatched if k == "matmul_splitk_ln")
        want = {17: 15 + 2 + 4, 14: 15 + 2 + 4 * 9}.get(opset) + attention + joined + stored
        if f" {want} fused into their producer" not in run.stdout:
            print(f"FAIL {name}: expected {want} nodes fused into their producer (GELU chains, bias Adds, LayerNorms)")
            return 1
    if name.startswith("relu_mlp") and " 2 fused into their producer" not in run.stdout:
        print(f"FAIL {name}: the ReLU and ReLU6 were not both fused into their Gemm")
        return 1
    print(("PASS" if err <= bound else "FAIL") + f" {name} opset {opset}")
    return 0 if err <= bound else 1


if __name__ == "__main__":
    sys.exit(main())
