"""Plan-time fusion (docs/architecture.md, "Fusion"): each model is exported by the TorchScript
exporter, run by `vkinfer run` with fusion on and with VKINFER_NO_FUSION=1, and compared with
PyTorch eager; the fused plan must have at least the expected number of dispatches fewer and
at least that many nodes "fused into their producer". A `control` case builds a pattern that
must NOT fuse (an intermediate read twice, a residual of a batched product) and expects 0.
Opset 14 exports spell LayerNormalization as nine nodes, which are planned as one.

    fusion.py VKINFER [fp16|bf16]          (FUSION_CASES=a,b runs only those cases)

Run it with VKINFER_MATMUL_KERNELS=cpu and =gpu so that both MatMul kernel families take the
fused C operand. fp16: the fp16 execution mode, bound 1e-2 * max|ref|. bf16: the models in
bfloat16 (their constants exported as bfloat16: sqrt(2) is 1.4140625, which the GELU pattern
must still take), against bfloat16 eager, bound 3e-2 * max|ref|. Passes when
max|vkinfer - eager| <= 1e-4 * max|eager| + 1e-5 (fp32)."""
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

from torch_export import profiled_dispatches, run_exported


class BiasRelu(nn.Module):
    """3-D Linear = MatMul + Add(bias): the Add and the Relu fold into the MatMul (2 per layer)."""

    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(64, 96), nn.Linear(96, 32)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


class Residual(nn.Module):
    """x + Linear(x) without bias: a residual of the output's shape is C (1 per layer); a
    Relu after it is the clamp (1)."""

    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(64, 64, bias=False), nn.Linear(64, 64, bias=False)

    def forward(self, x):
        h = torch.relu(self.l1(x) + x)
        return h + self.l2(h)  # residual first in the Add


class ResidualTwice(nn.Module):
    """ViT's blocks: x + Linear(LayerNorm(x)) with a bias (a 3-D Linear: MatMul, then the bias
    Add), the sum read by the next LayerNorm and the next residual Add. The bias is the
    product's C and the residual Add its R: the residual's reader is found through the bias
    Add that the product claimed a moment before, which is shaped only when planned
    (op_fuse_add_find takes the claimed node's shape from the value it was claimed on). Two
    blocks: 2 bias and 2 residual Adds fewer."""

    def __init__(self):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(64), nn.LayerNorm(64)
        self.l1, self.l2 = nn.Linear(64, 64), nn.Linear(64, 64)

    def forward(self, x):
        x = x + self.l1(self.n1(x))
        return x + self.l2(self.n2(x))


class ResidualViews(nn.Module):
    """torchvision ViT's attention residual at batch 1: the out-projection (a 2-D Gemm) viewed as
    [S, 1, D], transposed to [1, S, D] (only a unit axis moves) and added to the stream: the
    views keep the elements' order, so the Add is the Gemm's R. A Transpose that moves a real
    axis after the Reshape keeps its own Add (R would pair the wrong elements)."""

    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(64, 64), nn.Linear(64, 64)

    def forward(self, x, y):
        h = self.l1(x).reshape(12, 1, 64).transpose(0, 1) + y
        g = self.l2(x).reshape(3, 4, 64).transpose(0, 1) + y.reshape(4, 3, 64)
        return torch.cat([h.flatten(), g.flatten()])


def gelu_hf(x):  # Hugging Face's: 0.5 applied to x first
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


def gelu_half_first(x):  # 0.5 applied to (1 + erf) first, Mul by 1/sqrt(2)
    return x * (0.5 * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0)))))


class ElementwiseActs(nn.Module):
    """ResNet's residual join Add + Relu, and Mul + Clip: the element-wise kernel applies the
    activation (1 each)."""

    def forward(self, x, y):
        return torch.relu(x + torch.sigmoid(y)) + torch.clamp(x * y, -0.5, 0.5)


class TransposedProducts(nn.Module):
    """Transposes that only a MatMul reads are read in place as permuted views (3 here: a
    head split [B,S,H,D] -> [B,H,S,D] on both sides, K^T as [B,H,D,S]); the one also read by
    an Add is copied, and so is the [S,B,D] -> [B,S,D] one times a weight (as a view it
    would cut one product of all rows into one small product per batch). Exactly 3 fewer."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(6, 5) * 0.3)
        self.w2 = nn.Parameter(torch.randn(8, 3) * 0.3)

    def forward(self, x, y):
        x, y = x * 2.0, torch.tanh(y)             # intermediates (the fp16 mode holds them as halves)
        q = x.transpose(1, 2)                     # [2,4,6,8] -> [2,6,4,8]
        k = y.permute(0, 2, 3, 1)                 # [2,7,6,8] -> [2,6,8,7]
        s = torch.matmul(q, k)                    # [2,6,4,7]
        v = y.transpose(1, 2)                     # [2,6,7,8]
        o = torch.matmul(s, v)                    # [2,6,4,8]
        t = x.transpose(2, 3)                     # [2,4,8,6], read by the MatMul and the Add
        u = x.transpose(0, 1)                     # [4,2,6,8], times a weight: copied
        return o.sum() + torch.matmul(t, self.w).sum() + t.sum() + torch.matmul(u, self.w2).sum()


class ScaledProducts(nn.Module):
    """A scale that only a MatMul reads is the product's alpha (q / 8 and K^T * 0.5: 2 fewer),
    and the Transpose before the scaled K^T is a view too (1 fewer), as is the one read
    directly (1 fewer); the scale also read by a sum stays a kernel. Exactly 4 fewer."""

    def forward(self, x, y):
        x, y = x * 2.0, torch.tanh(y)             # [2,6,4,8], [2,6,7,8]
        q = x / 8.0
        k = y.transpose(-1, -2) * 0.5             # [2,6,8,7]
        u = x * 3.0                               # read by a MatMul and by the sum
        return torch.matmul(q, k).sum() + torch.matmul(u, (y + 1.0).transpose(-1, -2)).sum() + u.sum()


class ReshapedHeads(nn.Module):
    """PyTorch 2's head split: [S, B*H, D] -> Transpose -> Reshape [B, H, S, D] -> scale or
    K^T -> MatMul. The Reshape keeps the Transpose's strides, so both Transposes, the K^T
    and the scale are views (exactly 4 fewer); a Reshape that merges axes the Transpose
    separated ([B*H, S*D]) copies instead, as the Transpose did before."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(40, 3) * 0.3)

    def forward(self, x, y):
        x, y = x * 2.0, torch.tanh(y)                               # [5, 6, 8]: S=5, B*H=6, D=8
        q = x.transpose(0, 1).reshape(2, 3, 5, 8) * 0.5
        k = y.transpose(0, 1).reshape(2, 3, 5, 8).transpose(-1, -2)
        m = torch.matmul((y + 1.0).transpose(0, 1).reshape(6, 40), self.w)
        return torch.matmul(q, k).sum() + m.sum()


class LateScale(nn.Module):
    """Attention's scale as the TorchScript exporter writes it for nn.MultiheadAttention: computed
    from a Shape (Shape, Gather, Cast, Sqrt) after the Transpose of K in the graph's order.
    Planned as soon as its inputs are (src/plan/plan.c, plan_order), the scale is known when
    the Transpose is planned: K^T and the scale are views (exactly 2 fewer). Exported with a
    dynamic batch axis, so that the exporter keeps the Shape (a static one it folds)."""
    onnx_dynamic_axes = {"in0": {0: "batch"}, "in1": {0: "batch"}}

    def forward(self, q, k):
        q, k = torch.tanh(q), torch.tanh(k)                          # [2,3,5,8], [2,3,7,8]
        kt = k.transpose(-1, -2)
        scale = torch.sqrt(torch.tensor(q.size(-1), dtype=q.dtype))
        return torch.matmul(q, kt / scale)


class ShapeScaledHeads(nn.Module):
    """PyTorch 2's nn.MultiheadAttention: the scale is computed from the Shape of the query after
    its head split, so the Shape reads the view chain (it needs only dims) and the scale is
    unknown when the Transpose is planned, but made from dims only (planned as a constant):
    both Transposes, K^T and the two scales are views (exactly 5 fewer)."""
    onnx_dynamic_axes = {"in0": {1: "batch"}, "in1": {1: "batch"}}

    def forward(self, x, y):
        x, y = x * 2.0, torch.tanh(y)                               # [5, 6, 8]: S=5, B*H=6, D=8
        q = x.transpose(0, 1).reshape(-1, 3, 5, 8)
        k = y.transpose(0, 1).reshape(-1, 3, 5, 8).transpose(-1, -2)
        scale = torch.sqrt(torch.sqrt(torch._shape_as_tensor(q)[-1].to(q.dtype)))
        return torch.matmul(q / scale, k / scale)


class ShapeVectorScale(nn.Module):
    """A scale made from dims that is not a scalar ([2,3,5,4] as floats, along the last axis):
    Q's Transpose was planned as a view expecting a constant scalar, and the Mul reads that
    permuted view through its strides (1 fewer: once it was copied first); K's Transposes are
    views (2): exactly 3 fewer."""
    onnx_dynamic_axes = {"in0": {1: "batch"}, "in1": {1: "batch"}}

    def forward(self, x, y):
        x, y = x * 2.0, torch.tanh(y)                               # [5, 6, 4]
        q = x.transpose(0, 1).reshape(-1, 3, 5, 4)
        q = q * (torch._shape_as_tensor(q).to(q.dtype) / 4.0)
        return torch.matmul(q, y.transpose(0, 1).reshape(-1, 3, 5, 4).transpose(-1, -2))


class UnitAxisTransposes(nn.Module):
    """Transposes that move only axes of size 1 keep the elements' order: reshapes, whoever
    reads them (PyTorch 2's batch-first attention at batch 1 turns [1, S, D] into [S, 1, D]
    and back): 2 fewer; the transpose of two longer axes is a permuted view that the Mul after
    it reads through its strides (1): exactly 3 fewer."""

    def forward(self, x):                                            # [1, 5, 8]
        h = torch.tanh(x).transpose(0, 1)                            # [5, 1, 8]
        g = (h + 1.0).transpose(0, 1)                                # [1, 5, 8]
        return g * 2.0 + (torch.sigmoid(x).transpose(1, 2) * 3.0).sum()


class RowViews(nn.Module):
    """Rows that lie together are read in place, not copied: a Gather of one index, a Slice
    and both pieces of a Split along the outermost axis. Rows of 128 elements keep every
    offset a multiple of 256 bytes in each precision. 4 fewer, and the Mul and Add of the sums
    one pass (binary_chain): exactly 5."""

    def forward(self, x):
        h = x * 2.0                               # [6,4,32], an intermediate
        a = h[1]                                  # Gather, index 1
        b = h[2:4]                                # Slice
        c, d = torch.split(h, [2, 4], 0)          # Split
        return a.sum() + b.sum() * c.sum() + (d * 3.0).sum()


class RejoinedPieces(nn.Module):
    """ACT's encoder input: a map cut into its rows (`list(t)`: a Split into 12 pieces and
    their Squeezes) and stacked back after two more tokens (Unsqueezes and a Concat). The
    pieces are views (12 fewer) and, consecutive in their root, one copy in the Concat
    instead of 12 (11 fewer): exactly 23. Rows of 128 elements keep every offset a multiple
    of 256 bytes in each precision."""

    def forward(self, x, a, b):                   # x [12, 1, 128], a and b [1, 128]
        h = torch.tanh(x)
        return torch.stack([a * 2.0, b] + list(h), 0) * 3.0


class RowViewOutput(nn.Module):
    """A row view whose Reshape is the graph output: downloaded (or converted, in the fp16
    mode) from inside its root. Exactly 1 fewer."""

    def forward(self, x):
        return (x * 2.0)[3].reshape(128)


class Gelus(nn.Module):
    """Three erf-GELU spellings, 4 nodes fused each, each GELU then into its product's epilogue,
    plus a bias Add on each Linear."""

    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.l3 = nn.Linear(32, 128), nn.Linear(128, 64), nn.Linear(64, 16)

    def forward(self, x):
        h = nn.functional.gelu(self.l1(x))
        h = gelu_hf(self.l2(h))
        return gelu_half_first(self.l3(h))


def mish(x):  # as torch exports nn.functional.mish, which torch 1.13 lacks for bfloat16
    return x * torch.tanh(nn.functional.softplus(x))


class Mishes(nn.Module):
    """Mish as opset < 18 exports spell it, Mul(x, Tanh(Softplus(x))), on a matrix and on a
    4-D map (2 nodes fused each); a Softplus also read elsewhere keeps its three nodes."""

    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(24, 40)

    def forward(self, x, y):
        s = nn.functional.softplus(y)
        kept = y * torch.tanh(s) + s
        return mish(self.l1(x)).sum() + mish(y * 3.0).sum() + kept.sum()


class Silus(nn.Module):
    """SiLU as every exporter before opset 24 spells it, Mul(x, Sigmoid(x)), and a lone Sigmoid,
    after the producers whose kernels apply them: a 3x3 Conv, a depthwise Conv, a 1x1 Conv (2
    fewer each), a Linear (2), a Conv into a Sigmoid (1, EfficientNet's squeeze-excitation); a
    SiLU of an input runs as one element-wise pass (1); a Sigmoid also read elsewhere keeps
    both nodes (0). 10 in all."""

    def __init__(self):
        super().__init__()
        self.c3 = nn.Conv2d(4, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.c1 = nn.Conv2d(8, 12, 1)
        self.se = nn.Conv2d(12, 12, 1)
        self.fc = nn.Linear(12, 6)

    def forward(self, x, y):
        h = nn.functional.silu(self.c3(x))
        h = nn.functional.silu(self.dw(h))
        h = nn.functional.silu(self.c1(h))
        g = torch.sigmoid(self.se(h.mean((2, 3), keepdim=True)))
        h = h * g
        f = nn.functional.silu(self.fc(h.mean((2, 3))))
        s = torch.sigmoid(y)
        kept = y * s + s
        return torch.cat([h.flatten(), f.flatten(), nn.functional.silu(y * 2.0).flatten(), kept.flatten()])


class NormActs(nn.Module):
    """Activations after LayerNormalization and after products: LayerNorm + Mish (the Mish
    pattern's 3 nodes, then the Mish into the LayerNorm), Linear + ELU (1), a residual Add +
    LayerNorm + Tanh (the LayerNorm into the Add, the Tanh into that: 2), Conv + Tanh (1).
    7 in all."""

    def __init__(self):
        super().__init__()
        self.l1, self.ln1, self.l2, self.ln2 = nn.Linear(24, 40), nn.LayerNorm(40), nn.Linear(40, 40), nn.LayerNorm(40)
        self.conv = nn.Conv1d(4, 6, 3)

    def forward(self, x, r, y):
        h = mish(self.ln1(self.l1(x)))
        h = nn.functional.elu(self.l2(h))
        g = torch.tanh(self.ln2(h + r))
        return torch.cat([g.flatten(), torch.tanh(self.conv(y)).flatten()])


class GroupNorms(nn.Module):
    """PyTorch's GroupNorm as opsets < 18 export it (Reshape, InstanceNormalization, Reshape,
    Mul by the weight, Add of the bias): the norm kernel applies both affine maps and the
    activation after them. A Conv1d block of Diffusion Policy's U-Net (GroupNorm + Mish: the
    Mul, the Add and the Mish pattern's 3 nodes, 5) and a 2-D GroupNorm + SiLU (the Mul, the Add,
    the SiLU pattern's 2 nodes: 4); 9 in all."""

    def __init__(self):
        super().__init__()
        self.conv1, self.gn1 = nn.Conv1d(4, 16, 3, padding=1), nn.GroupNorm(4, 16)
        self.conv2, self.gn2 = nn.Conv2d(3, 12, 3), nn.GroupNorm(3, 12)
        for gn in (self.gn1, self.gn2):  # not the initial ones and zeros
            nn.init.normal_(gn.weight)
            nn.init.normal_(gn.bias)

    def forward(self, x, y):
        a = mish(self.gn1(self.conv1(x)))
        b = nn.functional.silu(self.gn2(self.conv2(y)))
        return torch.cat([a.flatten(), b.flatten()])


class TwoSteps(nn.Module):
    """Two element-wise ops in one pass (binary_chain): FiLM's x * scale + shift, scale and
    shift cut from one conditioning vector, then a ReLU (the Add and the ReLU: 2); a
    difference the other way round, c - a / b, b broadcast (the Sub: 1); ConvNeXt's layer scale
    of a permuted tensor plus the residual (the Add: 1; the Transpose a view). At least 4
    fused, 5 dispatches fewer."""

    def __init__(self):
        super().__init__()
        self.gamma = nn.Parameter(torch.randn(4, 1, 1))

    def forward(self, x, cond, a, b, h, res):
        scale, shift = cond.unsqueeze(-1).chunk(2, dim=1)
        f = torch.relu(x * scale + shift)
        d = torch.tanh(a) - torch.tanh(a) / b
        g = self.gamma * torch.tanh(h).permute(0, 3, 1, 2) + res
        return torch.cat([f.flatten(), d.flatten(), g.flatten()])


class StridedSlices(nn.Module):
    """Strided Slices that only an element-wise op reads are views it reads in place, at their
    strides and first element: FiLM's chunk of a conditioning vector into scale and shift (2, and
    the Mul and the Add one pass: 1), every second column minus the others (2), and a slice
    scaled before a product (2: the product reads the slice at its first element and takes
    the scale as its alpha). Exactly 7 fewer."""

    def forward(self, x, cond, y, z, w):
        x, cond, y, z = torch.tanh(x), torch.tanh(cond), torch.tanh(y), torch.tanh(z)  # intermediates
        scale, shift = cond.unsqueeze(-1).chunk(2, dim=1)
        f = x * scale + shift
        g = y[:, ::2] - y[:, 1::2]
        h = (z[:, 2:8] * 0.5) @ w
        return torch.cat([f.flatten(), g.flatten(), h.flatten()])


class TransposedElementwise(nn.Module):
    """ConvNeXt's block end: an NHWC tensor permuted back to NCHW, times a per-channel layer
    scale, plus the residual; and a difference of a permuted tensor and a broadcast one. The
    two Transposes that an element-wise op reads are permuted views it reads through their
    strides (2 fewer), the Slices of x row views (2), the layer scale and the residual Add one
    pass (binary_chain, 1): 5 dispatches fewer, exactly."""

    def __init__(self):
        super().__init__()
        self.gamma = nn.Parameter(torch.randn(4, 1, 1))

    def forward(self, x, r, y):
        x, y = torch.tanh(x), torch.tanh(y)  # intermediates, as in a model (the fp16 mode's inputs are words)
        a = self.gamma * x.permute(0, 3, 1, 2) + r
        b = y.permute(2, 0, 1) - x[:1, :1].permute(3, 0, 1, 2).reshape(4, 1, 6)
        return torch.cat([a.flatten(), b.flatten()])


class ConvNeXtBlock(nn.Module):
    """ConvNeXt's block and downsampling layer in NCHW: a depthwise 7x7 convolution permuted to
    channels-last, LayerNorm, Linear + GELU + Linear, permuted back, times a per-channel layer
    scale, plus the input; then a LayerNorm over the channels between two permutes and a 2x2
    convolution of stride 2. The LayerNorm between the permutes normalizes the channels in
    place of both copies (always); the GPU depthwise kernel stores through the permute after it
    (VKINFER_CONV_KERNELS=gpu, or a GPU); a split-K reduce takes the permute back, the layer
    scale and the residual (GPU MatMul kernels with split K forced). The profile checks each."""

    def __init__(self, c=16):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.ln = nn.LayerNorm(c, eps=1e-6)
        self.l1 = nn.Linear(c, 4 * c)
        self.l2 = nn.Linear(4 * c, c)
        self.gamma = nn.Parameter(torch.randn(c, 1, 1))
        self.ln2 = nn.LayerNorm(c, eps=1e-6)
        self.down = nn.Conv2d(c, 2 * c, 2, stride=2)

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.l2(torch.nn.functional.gelu(self.l1(self.ln(y))))
        x = self.gamma * y.permute(0, 3, 1, 2) + x
        x = self.ln2(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return self.down(x)


class PackedQKV(nn.Module):
    """PyTorch 2's nn.MultiheadAttention export: the packed in-projection's [S, B, 3E] unflattened to
    [S, B, 3, E], unsqueezed, transposed so that the q/k/v axis leads, squeezed, and split by
    three Gathers of constant indices; then heads, scaled Q K^T, Softmax, P V, the heads moved
    back and the out-projection. The Transpose is a permuted view and each Gather a view of it
    (no copy: the profile names no Transpose of the split), on every kernel family."""

    def __init__(self, e=32, heads=4):
        super().__init__()
        self.e, self.h = e, heads
        self.inp = nn.Linear(e, 3 * e)
        self.out = nn.Linear(e, e)

    def forward(self, x):
        s, b, e = x.shape
        proj = self.inp(x).reshape(s, b, 3, e).unsqueeze(0).transpose(0, -2).squeeze(-2)
        q, k, v = proj[0], proj[1], proj[2]
        hd = e // self.h
        q = q.reshape(s, b * self.h, hd).transpose(0, 1)
        k = k.reshape(s, b * self.h, hd).transpose(0, 1)
        v = v.reshape(s, b * self.h, hd).transpose(0, 1)
        a = torch.softmax((q * hd ** -0.5) @ k.transpose(1, 2), dim=-1) @ v
        return self.out(a.transpose(0, 1).reshape(s, b, e))


class ConvTransposeRelu(nn.Module):
    """ConvTranspose (1-D and 2-D: strides, dilation, pads, output padding, no bias) + ReLU:
    the kernels apply the ReLU (1 each; on CPU devices the col2im gather after the product)."""

    def __init__(self):
        super().__init__()
        self.up2 = nn.ConvTranspose2d(5, 7, (3, 2), stride=(3, 2), padding=(1, 0), output_padding=(1, 1),
                                      dilation=(2, 1), bias=False)
        self.up1 = nn.ConvTranspose1d(6, 4, 5, stride=2, padding=2, output_padding=1)

    def forward(self, x, y):
        return torch.cat([torch.relu(self.up2(x)).flatten(), torch.relu(self.up1(y)).flatten()])


class Residuals(nn.Module):
    """Residuals that C cannot take are the product's R (added before the activation): a batched
    product's (C has no batch strides) on the tiled kernels, and on GEMV (8 rows), which adds it
    in a pass of its own after a product without it; a 3-D Linear's after its bias (C); ResNet's
    shortcut after a 1x1 convolution with a bias at batch 2, and the Relu after it. At least 5
    fewer dispatches where convolutions run as products (VKINFER_CONV_KERNELS=gemm): the tiled
    batched residual, the bias and the residual of the Linear, the second conv's Add and Relu
    (the GEMV residual saves none; the CPU MatMul kernels take it); at least 4 on lavapipe's own
    convolution kernels, which take no residual (the element-wise Add takes the Relu there).
    Three fewer before residuals were taken."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(2, 64, 64) * 0.1)
        self.lin = nn.Linear(64, 64)
        self.conv1, self.conv2 = nn.Conv2d(32, 32, 3, padding=1), nn.Conv2d(32, 32, 1)

    def forward(self, x, s, img):
        m = torch.matmul(x, self.w) + x  # [2,32,64] x [2,64,64]
        g = torch.matmul(s, self.w) + s  # [2,8,64]: GEMV
        h = self.lin(m) + m
        y = torch.relu(self.conv2(torch.relu(self.conv1(img))) + img)
        return torch.cat([h.flatten(), g.flatten(), y.flatten()])


class Control(nn.Module):
    """Patterns that must not fuse: the Erf output is also read elsewhere; a batched product's
    residual whose product is also read elsewhere; a bias Add whose MatMul output is also read
    again. Only pairs of element-wise ops run as one pass (binary_chain): 1 + e with x *, then
    * 0.5 with + e, and p + b with * p; exactly 3 fewer."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(2, 16, 16) * 0.2)
        self.b = nn.Parameter(torch.randn(16))

    def forward(self, x):
        e = torch.erf(x / math.sqrt(2.0))
        g = x * (1.0 + e) * 0.5 + e
        m = torch.matmul(g, self.w)  # [2,8,16] x [2,16,16]: batched
        r = m + g
        p = torch.matmul(r, self.w[0])
        return (p + self.b) * p + m.sum(-1, keepdim=True)


class AttentionRows(nn.Module):
    """MatMul(Q, K^T) * scale -> Softmax -> MatMul(P, V) as one dispatch (attention_rows): 37
    keys (not a multiple of the workgroup), head size 16, values of 24 columns, V broadcast
    over the outer batch dim, and a second attention whose scores are read twice (not fused).
    The Softmax and the second MatMul fused (2; 3 fewer dispatches with the scale, a view of q
    that the product takes as its alpha)."""

    def forward(self, q, k, v):
        att = torch.softmax(torch.matmul(q * 0.25, k.transpose(-1, -2)), dim=-1) @ v
        s = torch.matmul(q, k.transpose(-1, -2))
        return torch.cat([att.flatten(), (torch.softmax(s, dim=-1) @ k).flatten(), s[..., 0].flatten()])


class AttentionRowsScaled(nn.Module):
    """Attention as written by hand (minGPT, VQ-BeT): softmax((Q K^T) * s) V and softmax((Q K^T)
    / d) V, the scale after the product. One dispatch each (attention_rows, the scale its alpha):
    3 fewer each than MatMul, Mul, Softmax, MatMul; 1 fewer each with the scale alone folded."""

    def forward(self, q, k, v):
        v6 = v[:, :, :6]  # planned before the products (attention_rows needs V planned)
        a = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * 0.125, dim=-1) @ v
        b = torch.softmax(torch.matmul(k[:, :, :5], q.transpose(-1, -2)) / 3.0, dim=-1) @ v6
        return torch.cat([a.flatten(), b.flatten()])


class AttentionLong(nn.Module):
    """Key sequences longer than attention_rows takes on GPUs (attention_tile: blocks of 16 query
    rows, keys in chunks of 32 or 64 with an online softmax): ViT's shape cut down, 150 keys (a
    partial last chunk), 40 queries (a partial last block), heads of 64 read as strided views of
    one [S, 3 * 2 * 64] projection (q, k, v and the heads cut from its columns), values of 48
    columns for the second, softmax((Q K^T) / 8) as written by hand; large scores (x 6) so that
    the running max moves between chunks. The Softmax and the second MatMul fused in each."""

    def forward(self, x, w):
        qkv = (x @ w).reshape(150, 3, 2, 64).permute(1, 2, 0, 3)  # [3, heads, S, 64]
        q, k, v = qkv[0][:, :40], qkv[1], qkv[2]
        a = torch.softmax(torch.matmul(q * 6.0, k.transpose(-1, -2)) / 8.0, dim=-1) @ v
        b = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / 8.0, dim=-1) @ v[..., :48]
        return torch.cat([a.flatten(), b.flatten()])


class HeadsBack(nn.Module):
    """The heads moved back beside the sequence after attention, before the out-projection:
    [B, H, S, D] -> [B, S, H, D] -> [B, S, H D] (PyTorch 2's and Hugging Face's spelling) and
    [B H, S, D] -> [S, B H, D] (the TorchScript exporter's nn.MultiheadAttention). The attention
    kernel stores through the Transpose's layout (src/ops/matmul_fuse.c mm_store_transposed): no
    Transpose dispatched (checked through the profile); on CPU devices' kernels, where attention
    stays three dispatches, the P V product (matmul_cpu, matmul_cpu_small) stores through."""

    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(48, 32), nn.Linear(16, 8)

    def forward(self, q, k, v):
        v2 = v.reshape(6, 60, 16)  # planned before the products (attention_rows needs V planned)
        a = torch.softmax(q @ k.transpose(-1, -2) * 0.25, dim=-1) @ v  # [2, 3, 20, 16]
        h = self.l1(a.transpose(1, 2).reshape(2, 20, 48))
        b = torch.softmax(q.reshape(6, 20, 16) @ k.reshape(6, 60, 16).transpose(-1, -2), dim=-1) @ v2
        g = self.l2(b.transpose(0, 1))  # [20, 6, 16]
        return torch.cat([h.flatten(), g.flatten()])


class Encoder(nn.Module):
    """BERT-shaped layers (small): attention, bias Adds, GELU, residual Adds, LayerNorm."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(64, 4, 256, dropout=0.0, batch_first=True, activation="gelu")
        self.enc = nn.TransformerEncoder(layer, 2)

    def forward(self, x):
        return self.enc(x)


class FrozenBN(nn.Module):
    """torchvision's FrozenBatchNorm2d (LeRobot's ACT backbone): x * scale + shift, the scale and
    shift computed from buffers in the graph, which the exporters leave as a Mul and an Add."""

    def __init__(self, n):
        super().__init__()
        self.register_buffer("weight", torch.rand(n) + 0.5)
        self.register_buffer("bias", torch.randn(n) * 0.1)
        self.register_buffer("running_mean", torch.randn(n) * 0.1)
        self.register_buffer("running_var", torch.rand(n) + 0.5)

    def forward(self, x, shift=True):
        scale = self.weight.reshape(1, -1, 1, 1) * (self.running_var.reshape(1, -1, 1, 1) + 1e-5).rsqrt()
        out = x * scale
        return out + (self.bias.reshape(1, -1, 1, 1) - self.running_mean.reshape(1, -1, 1, 1) * scale) if shift else out


class FrozenBNConvs(nn.Module):
    """Convolutions followed by FrozenBN: the Mul and the Add fold into W and the bias, the Relu
    and the residual Add after them into the convolution's epilogue as without them (1 + 1 + 1
    Relu for the first; 2 + residual + Relu for the second; a Mul without an Add for the
    third). Not folded: a Mul of a convolution read twice, and a Mul by a per-column constant."""

    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.c3, self.c4 = nn.Conv2d(16, 8, 1), nn.Conv2d(8, 8, 3, padding=1)
        self.c5 = nn.Conv2d(8, 8, 1)
        self.b1, self.b2, self.b3, self.b4 = FrozenBN(16), FrozenBN(16), FrozenBN(8), FrozenBN(8)
        self.cols = nn.Parameter(torch.rand(1, 1, 1, 12) + 0.5)

    def forward(self, x):
        h = torch.relu(self.b1(self.c1(x)))
        h = torch.relu(self.b2(self.c2(h)) + h)
        g = self.b3(self.c3(h), shift=False)
        u = self.c4(g)
        u = self.b4(u) + u  # read twice: not folded
        return torch.cat([g.flatten(), u.flatten(), (self.c5(u) * self.cols).flatten()])


class SlicedHeads(nn.Module):
    """q, k and v cut from one projection's columns (PyTorch 1.13's MultiheadAttention export),
    each through a Reshape and a Transpose, q scaled by a constant: the Slices are strided views
    that the products read in place from their first elements (3 fewer dispatches a set, the
    scale's Mul 1 more). The first set starts on whole 4s (the CPU kernel's texels, the GPU
    kernels' vec4 loads; k, q, v in that order, so that q and v start past 0), the second at columns 1, 25 and 49 of a 73-wide projection (the CPU
    kernel packs them, the GPU kernels load scalars); the third has 8 keys, which GPUs' kernels
    run as attention_rows, reading all three slices in place (v, k, q in that order)."""

    def __init__(self):
        super().__init__()
        self.p1, self.p2, self.p3 = nn.Linear(32, 96), nn.Linear(32, 73), nn.Linear(32, 48)

    def forward(self, x, x8):
        s = x.shape[0]
        qkv = self.p1(x)
        k, q, v = qkv[:, :32], qkv[:, 32:64], qkv[:, 64:]
        q = q.reshape(s, 4, 8).transpose(0, 1) * 0.3
        a = torch.softmax(q @ k.reshape(s, 4, 8).permute(1, 2, 0), dim=-1) @ v.reshape(s, 4, 8).transpose(0, 1)
        qkv = self.p2(x)
        q, k, v = qkv[:, 1:25], qkv[:, 25:49], qkv[:, 49:73]
        q = q.reshape(s, 4, 6).transpose(0, 1) * 0.5
        b = torch.softmax(q @ k.reshape(s, 4, 6).permute(1, 2, 0), dim=-1) @ v.reshape(s, 4, 6).transpose(0, 1)
        qkv = self.p3(x8)
        v, k, q = qkv[:, :16], qkv[:, 16:32], qkv[:, 32:]
        v = v.reshape(8, 2, 8).transpose(0, 1)  # planned before the products, as attention_rows needs
        q = q.reshape(8, 2, 8).transpose(0, 1) * 0.25
        c = torch.softmax(q @ k.reshape(8, 2, 8).permute(1, 2, 0), dim=-1) @ v
        return torch.cat([a.flatten(), b.flatten(), c.flatten()])


class ResidualTransposed(nn.Module):
    """PyTorch 1.13's batch-first encoder layer: the attention's [S, B, E] output transposed
    back to [B, S, E] just before the residual Add + LayerNorm. norm_rows reads the transposed
    operand in place (X's rows through two strides, src/ops/normalization.c), either operand
    order, and rows of 6 (not whole texels: lavapipe's word kernel): each Transpose, Add and
    LayerNorm one dispatch, each Linear's bias Add in its product (3 fewer each; no Transpose
    copied)."""

    def __init__(self):
        super().__init__()
        self.lin1, self.lin2, self.lin3 = nn.Linear(16, 16), nn.Linear(16, 16), nn.Linear(6, 6)
        self.norm, self.norm6 = nn.LayerNorm(16), nn.LayerNorm(6)

    def forward(self, x, h, x6, h6):
        a = self.norm(x + self.lin1(h).transpose(0, 1))
        b = self.norm(self.lin2(h).transpose(0, 1) + a)
        c = self.norm6(x6 + self.lin3(h6).transpose(0, 1))
        return torch.cat([a.flatten(), b.flatten(), c.flatten()])


class SquareStep(nn.Module):
    """A variance written out (x - mean, squared as Mul(d, d), then its mean: the policy MLP's
    torch.var) and a sum doubled as Add(s, s): the second node reads the first's result as both
    operands, and the two run as one binary_chain pass (1 fewer each)."""

    def forward(self, x):
        d = x - x.mean(-1, keepdim=True)
        s = x + 1.5
        return torch.cat([(d * d).mean(-1).flatten(), (s + s).flatten()])


class PreNormBlocks(nn.Module):
    """ViT's pre-norm blocks: the residual stream h = h + Linear(LayerNorm(h)) is read by the
    next block's LayerNormalization and by the next residual Add; with split K forced
    (model/fusion_residuals_splitk), each product's reduce pass also normalizes its rows for
    the LayerNormalization after it (matmul_splitk_ln: n2 and n3 not dispatched; checked
    through the profile). Block 2 reads its stream through a unit-axis view (torchvision ViT's
    out-projection: [S, D] viewed as [S, 1, D] and transposed to [1, S, D]), and has Scale and B
    of one element each way; a Linear + GELU whose LayerNorm-free reader keeps its reduce."""

    def __init__(self):
        super().__init__()
        self.n1, self.n2, self.n3 = nn.LayerNorm(48), nn.LayerNorm(48), nn.LayerNorm(48)
        self.l1, self.l2, self.l3 = nn.Linear(48, 48), nn.Linear(48, 48), nn.Linear(48, 48)
        with torch.no_grad():
            for n in (self.n1, self.n2, self.n3):
                n.weight.uniform_(0.5, 1.5)
                n.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        h = x + self.l1(self.n1(x))
        s = x.shape[1]
        h = h + self.l2(self.n2(h)[0]).reshape(s, 1, 48).transpose(0, 1)
        g = torch.nn.functional.gelu(self.l3(h))
        return torch.cat([self.n3(h).flatten(), g.flatten()])


class SplitHeads(nn.Module):
    """q, k and v cut from one projection at batch 2 and 3, sequence first ([S, B, 3E], as PyTorch
    1.13's MultiheadAttention has it): each head split's Reshape [S, B, E] -> [S, B*H, D] merges
    the batch with the heads, whose strides differ, so the view carries that dim as two (a split
    dim) to the products through the Transposes and the scale: no Slice and no Reshape copied.
    The first set on whole 4s, the second at columns 1, 25 and 49 of a 73-wide projection with
    70 keys (past attention_rows' 64 on GPUs), its scale after the first product."""

    def __init__(self):
        super().__init__()
        self.p1, self.p2 = nn.Linear(32, 96), nn.Linear(24, 73)

    def forward(self, x, y):
        s, b = x.shape[0], x.shape[1]
        qkv = self.p1(x)
        q, k, v = qkv[..., :32], qkv[..., 32:64], qkv[..., 64:]
        q = q.reshape(s, b * 4, 8).transpose(0, 1) * 0.3
        a = torch.softmax(q @ k.reshape(s, b * 4, 8).permute(1, 2, 0), dim=-1) @ v.reshape(s, b * 4, 8).transpose(0, 1)
        s, b = y.shape[0], y.shape[1]
        qkv = self.p2(y)
        q, k, v = qkv[..., 1:25], qkv[..., 25:49], qkv[..., 49:73]
        q = q.reshape(s, b * 2, 12).transpose(0, 1)
        c = torch.softmax((q @ k.reshape(s, b * 2, 12).permute(1, 2, 0)) * 0.5, dim=-1) @ v.reshape(s, b * 2, 12).transpose(0, 1)
        return torch.cat([a.flatten(), c.flatten()])


class RMSNorms(nn.Module):
    """RMSNorm as Llama-style models write it (PyTorch has no exportable RMSNorm op before
    opset 23), each on its own input (the exporter would share a common mean of squares):
    Hugging Face's Llama norm (float32 sums, cast back to the input's dtype before the weight),
    Gemma's x * (1 + w), a norm without a weight whose normalized x is multiplied by a computed
    scale (pi05's adaptive norm: fused up to x * r, the scale's Mul left), x * x for the square,
    and x / sqrt(.) for x * rsqrt(.). Each is one RMSNormalization dispatch (src/plan/fuse.c,
    match_rms_norm): 6 fewer for the first two (Pow, ReduceMean, Add, Sqrt, Reciprocal, two
    Muls; a Cast to the same type is no dispatch), 4 for the third, 6 and 5 for the last two. A
    norm whose 1/rms is also read elsewhere is not fused."""

    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.rand(48) + 0.5)
        self.w2 = nn.Parameter(torch.randn(48) * 0.1)
        self.w4 = nn.Parameter(torch.rand(48) + 0.5)
        self.cond = nn.Linear(16, 48)

    def forward(self, x1, x2, x3, x4, x5, x6, c):
        x1, x2, x3, x4, x5, x6 = (torch.tanh(x) * 3 for x in (x1, x2, x3, x4, x5, x6))  # intermediates
        h = x1.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        a = self.w1 * h.to(x1.dtype)
        b = x2 * torch.rsqrt(x2.pow(2).mean(-1, keepdim=True) + 1e-6) * (1.0 + self.w2)
        s = 1.0 + self.cond(c).unsqueeze(1)  # [B, 1, 48]
        d = x3 * torch.rsqrt(x3.pow(2).mean(-1, keepdim=True) + 1e-5) * s
        e = x4 * torch.rsqrt((x4 * x4).mean(-1, keepdim=True) + 1e-5) * self.w4
        g = x5 / torch.sqrt(x5.pow(2).mean(-1, keepdim=True) + 1e-5) * self.w4
        r = torch.rsqrt(x6.pow(2).mean(-1, keepdim=True) + 1e-5)  # read twice: not fused
        f = x6 * r * self.w1 + r
        return torch.cat([a.flatten(), b.flatten(), d.flatten(), e.flatten(), g.flatten(), f.flatten()])


# name: (model, inputs, opset, dispatches fewer at least). Seeded: the inputs (and the models'
# weights, made per run) are the same every run, so that a bound is met or missed for good
# (unseeded, transposed_products' sums of bfloat16 products missed theirs about one run in 5).
torch.manual_seed(0)
CASES = {
    "bias_relu": (BiasRelu, (torch.randn(2, 10, 64),), 17, 3),
    "residual": (Residual, (torch.randn(3, 7, 64),), 17, 3),
    "residual_twice": (ResidualTwice, (torch.randn(1, 20, 64),), 17, 4),
    # the first Add (at least 1 fewer; the second keeps its Add and its Transpose's copy)
    "residual_views": (ResidualViews, (torch.randn(12, 64), torch.randn(1, 12, 64)), 17, 1),
    "gelus": (Gelus, (torch.randn(2, 5, 32),), 17, 18),
    "transposed_products": (TransposedProducts, (torch.randn(2, 4, 6, 8), torch.randn(2, 7, 6, 8)), 17, 3),
    "elementwise_acts": (ElementwiseActs, (torch.randn(2, 3, 16, 16), torch.randn(2, 3, 16, 16)), 17, 2),
    "mishes": (Mishes, (torch.randn(3, 24), torch.randn(2, 5, 7, 9)), 17, 4),
    "conv_transpose_relu": (ConvTransposeRelu, (torch.randn(3, 5, 4, 6), torch.randn(2, 6, 9)), 17, 2),
    "control": (Control, (torch.randn(2, 8, 16),), 17, 3),
    "residuals": (Residuals, (torch.randn(2, 32, 64), torch.randn(2, 8, 64), torch.randn(2, 32, 8, 8)), 17, 5),
    "scaled_products": (ScaledProducts, (torch.randn(2, 6, 4, 8), torch.randn(2, 6, 7, 8)), 17, 4),
    "reshaped_heads": (ReshapedHeads, (torch.randn(5, 6, 8), torch.randn(5, 6, 8)), 17, 4),
    "late_scale": (LateScale, (torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8)), 17, 2),
    "shape_scaled_heads": (ShapeScaledHeads, (torch.randn(5, 6, 8), torch.randn(5, 6, 8)), 17, 5),
    "shape_vector_scale": (ShapeVectorScale, (torch.randn(5, 6, 4), torch.randn(5, 6, 4)), 17, 3),
    "unit_axis_transposes": (UnitAxisTransposes, (torch.randn(1, 5, 8),), 17, 3),
    "row_views": (RowViews, (torch.randn(6, 4, 32),), 17, 5),
    "row_view_output": (RowViewOutput, (torch.randn(6, 4, 32),), 17, 1),
    # per layer: the GELU's 4 nodes and the GELU itself (into linear1's epilogue), the
    # feed-forward's 2 bias Adds, the in-projection's bias Add, the 2 LayerNormalizations
    # (into the residual Adds before them)
    "attention_rows": (AttentionRows, (torch.randn(2, 3, 5, 16), torch.randn(2, 3, 37, 16), torch.randn(1, 3, 37, 24)),
                       17, 2),
    "encoder": (Encoder, (torch.randn(1, 12, 64),), 17, 2 * (4 + 1 + 2 + 1 + 2)),
    # opset 14: LayerNormalization spelled as 9 nodes, 2 per layer, planned as one each, and
    # that one into the residual Add before it
    "encoder_opset14": (Encoder, (torch.randn(1, 12, 64),), 14, 2 * (4 + 1 + 2 + 1 + 2 * 8 + 2)),
    # (new cases go last: the inputs above come from one seeded stream, in this order)
    "silus": (Silus, (torch.randn(2, 4, 9, 11), torch.randn(3, 10)), 17, 10),
    "norm_acts": (NormActs, (torch.randn(5, 24), torch.randn(5, 40), torch.randn(2, 4, 9)), 17, 7),
    "transposed_elementwise": (TransposedElementwise, (torch.randn(2, 5, 6, 4), torch.randn(2, 4, 5, 6),
                                                       torch.randn(7, 6, 4)), 17, 5),
    "group_norms": (GroupNorms, (torch.randn(2, 4, 10), torch.randn(2, 3, 7, 9)), 13, 9),
    "two_steps": (TwoSteps, (torch.randn(2, 8, 5), torch.randn(2, 16), torch.randn(3, 7), torch.rand(7) + 0.5,
                             torch.randn(2, 5, 6, 4), torch.randn(2, 4, 5, 6)), 17, 4),
    "strided_slices": (StridedSlices, (torch.randn(2, 8, 5), torch.randn(2, 16), torch.randn(3, 12), torch.randn(4, 10),
                                       torch.randn(6, 4)), 17, 7),
    "rejoined_pieces": (RejoinedPieces, (torch.randn(12, 1, 128), torch.randn(1, 128), torch.randn(1, 128)), 17, 23),
    "frozen_bn": (FrozenBNConvs, (torch.randn(2, 3, 12, 12),), 17, 8),
    "attention_rows_scaled": (AttentionRowsScaled, (torch.randn(2, 3, 6, 16), torch.randn(2, 3, 37, 16),
                                                    torch.randn(1, 3, 37, 24)), 17, 6),
    # at least the 3 bias Adds, the 3 scales and the 9 Slices (SLICE_VIEWS: no Slice dispatch
    # left); with the Slices copied, 13-14 fewer
    "sliced_heads": (SlicedHeads, (torch.randn(70, 32), torch.randn(8, 32)), 17, 15),
    # the 6 Slices and the 6 Reshapes (no Slice or Reshape dispatch left), and the scale
    "split_heads": (SplitHeads, (torch.randn(20, 2, 32), torch.randn(70, 3, 24)), 17, 12),
    "residual_transposed": (ResidualTransposed, (torch.randn(3, 5, 16), torch.randn(5, 3, 16), torch.randn(3, 5, 6),
                                                 torch.randn(5, 3, 6)), 17, 9),
    "square_step": (SquareStep, (torch.randn(4, 32),), 17, 2),
    # the bias and residual Adds of l1 and l2, l3's bias Add and its GELU's nodes (4 + 1)
    "pre_norm_blocks": (PreNormBlocks, (torch.randn(1, 20, 48),), 17, 9),
    "attention_long": (AttentionLong, (torch.randn(150, 32), torch.randn(32, 384) * 0.2), 17, 4),
    # the Softmaxes and second MatMuls, and the two Transposes (stored through)
    "heads_back": (HeadsBack, (torch.randn(2, 3, 20, 16), torch.randn(2, 3, 60, 16), torch.randn(2, 3, 60, 16)), 17, 6),
    # the LayerNorm's two permutes (views), l1's bias Add and GELU, l2's bias Add, the layer scale's
    # Add (into its Mul's pass); more where the kernels below apply (CHANNELS_LAST)
    "convnext_block": (ConvNeXtBlock, (torch.randn(1, 16, 12, 12),), 17, 6),
    # at batch 2 the split-K reduce keeps the layer scale's pass (the product's rows span two
    # of the permute's runs); the rest as at batch 1
    "convnext_block_batch2": (ConvNeXtBlock, (torch.randn(2, 16, 12, 12),), 17, 6),
    # the split's Transpose and Gathers as views (no Transpose dispatch left), the heads' views, the
    # scale; at batch 2 (90 keys: attention_tile on GPU kernels) the Transpose stays a copy (the
    # heads' views would need split dims, which attention's kernels do not read)
    "packed_qkv": (PackedQKV, (torch.randn(40, 1, 32),), 17, 9),
    "packed_qkv_long": (PackedQKV, (torch.randn(90, 2, 32),), 17, 2),
    "rms_norms": (RMSNorms, tuple(torch.randn(2, 7, 48) for _ in range(6)) + (torch.randn(2, 16),), 17,
                  6 + 6 + 4 + 6 + 5),
}


# cases without a bfloat16 eager reference
NO_BF16_REFERENCE = {"conv_transpose_relu"}

# cases whose saving is views (planned as aliases, not "fused into their producer")
VIEWS = {"transposed_products", "scaled_products", "reshaped_heads", "late_scale", "shape_scaled_heads",
         "shape_vector_scale", "unit_axis_transposes", "row_views", "row_view_output", "transposed_elementwise", "strided_slices",
         "rejoined_pieces", "sliced_heads", "split_heads", "residual_transposed", "packed_qkv"}
# cases whose Slices (and Reshapes), or Transposes, must all be views: the fused plan's profile
# names no dispatch of such a node
SLICE_VIEWS = {"sliced_heads": "Slice|Reshape", "split_heads": "Slice|Reshape", "residual_transposed": "Transpose",
               "packed_qkv": "Transpose|Squeeze|Gather"}
# cases whose LayerNormalizations after split-K products join the reduce pass where split K is
# forced on the GPU kernels (model/fusion_residuals_splitk): the profile names only these
SPLIT_K_FORCED = os.environ.get("VKINFER_MM_MIN_SPLIT_K") is not None and \
    os.environ.get("VKINFER_MATMUL_KERNELS") in ("gpu", "sgemm")
LN_JOINED = {"pre_norm_blocks": ["/n1/LayerNormalization"]}
# cases whose Transposes after attention are stored through by the kernel before them (the
# attention kernel where attention is one dispatch: GPU kernels, or attention_rows /
# attention_tile forced; else the P V product): the profile names none of these Transposes
ATTENTION_FUSED = os.environ.get("VKINFER_MATMUL_KERNELS") == "gpu" or \
    os.environ.get("VKINFER_ATTENTION_ROWS") in ("1", "tile")
STORED_THROUGH = {"heads_back": ["/Transpose_1", "/Transpose_3"]}  # the heads moved back (not K^T's)
EXACT = (VIEWS - set(SLICE_VIEWS)) | {"control"}  # exactly `fewer` dispatches fewer, not at least
# ConvNeXt's block (ConvNeXtBlock): the fused plan's profile names no dispatch of the LayerNorm's
# permutes; none of the permute after the depthwise convolution where that runs on the GPU kernel
# (it stores through); no Mul (the layer scale's pass) where a split-K reduce takes it (GPU
# MatMul kernels, split K forced, batch 1)
CHANNELS_LAST = {"convnext_block", "convnext_block_batch2"}
CONV_ON_GPU_KERNELS = os.environ.get("VKINFER_CONV_KERNELS") == "gpu"
# post-norm encoders of few rows on the GPU MatMul kernels (GEMV, which takes no R): each residual
# Add is left to the LayerNormalization after it (one norm_rows pass for both), so the fused
# plan's profile names no element-wise "binary" pass (float32)
RESIDUAL_INTO_NORM = {"encoder", "encoder_opset14"}


# Half products on a device with tensor cores take no residual as R (src/ops/matmul_fuse.c,
# mm_fuse_residual: their kernels have no R, and the Add is left to what reads it, such as the
# LayerNormalization after it), so in the fp16 mode and on bfloat16 models there these cases
# save fewer dispatches: the bias Adds of residual_twice, the views of residual_views (no node
# fused), the tiled batched residual's and the convolutions' of residuals, pre_norm_blocks'
# residual Adds.
TENSOR_CORE_HALF = {"residual_twice": 2, "residual_views": 2, "residuals": 3, "pre_norm_blocks": 7}


def plan_line(run):
    m = re.search(r"plan: (\d+) dispatches, \d+ GPU nodes, (\d+) fused into their producer", run.stdout)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def main():
    vkinfer = sys.argv[1]
    fp16 = len(sys.argv) > 2 and sys.argv[2] == "fp16"
    bf16 = len(sys.argv) > 2 and sys.argv[2] == "bf16"
    failed = 0
    only = os.environ.get("FUSION_CASES")  # a comma-separated subset (the conv kernel runs)
    devices = subprocess.run([vkinfer, "devices"], capture_output=True, text=True).stdout
    cpu_device = any(line.startswith("*") and "(cpu)" in line for line in devices.splitlines())
    default = [blk for blk in re.split(r"\n(?=[* ] \d+: )", "\n" + devices) if blk.startswith("* ")]
    tensor_cores = bool(default) and "cooperative matrix: yes" in default[0]
    for name, (cls, inputs, opset, fewer) in CASES.items():
        if only and name not in only.split(","):
            continue
        if name == "residuals" and os.environ.get("VKINFER_CONV_KERNELS") != "gemm":
            fewer = 4
        counts_only = False  # dispatches fewer, whatever fused them
        if (fp16 or bf16) and tensor_cores and name in TENSOR_CORE_HALF:
            fewer, counts_only = TENSOR_CORE_HALF[name], name == "residual_views"
        if name == "heads_back" and cpu_device and not ATTENTION_FUSED:
            fewer = 2  # the three dispatches each; the Transposes stored through by the P V product
        if name.startswith("attention_") and cpu_device and os.environ.get("VKINFER_MATMUL_KERNELS") != "gpu" and \
                os.environ.get("VKINFER_ATTENTION_ROWS") not in ("1", "tile"):
            print(f"not run here: {name} (CPU devices' kernels keep the three dispatches; "
                  "model/fusion_gpu and model/fusion_attention_rows_cpu run it)")
            continue
        if (fp16 or bf16) and name == "attention_long":
            print(f"not run in half: {name} (attention_tile reads fp32 words; on GPUs half Q, K and V keep the "
                  "three dispatches for more than 64 keys)")
            continue
        if bf16 and name in ("packed_qkv", "packed_qkv_long"):
            print(f"not run in bf16: {name} (torch 1.13 exports its scale of a bfloat16 q as a float32 Mul, "
                  "so the graph mixes dtypes; the fp32 and fp16 runs cover it)")
            continue
        if bf16 and name in NO_BF16_REFERENCE:
            print(f"not run in bf16: {name} (torch 1.13 has no bfloat16 ConvTranspose on CPU; "
                  "the fp32 and fp16 runs cover it)")
            continue
        torch.manual_seed(0)
        model = cls().eval()
        if bf16:  # the whole model and its inputs in bfloat16; constants are exported as bfloat16
            model = model.to(torch.bfloat16)
            inputs = tuple(t.to(torch.bfloat16) for t in inputs)
        with torch.no_grad():
            ref = model(*inputs).float().numpy()
        results = {}
        for mode in ("fused", "unfused"):
            if mode == "unfused":
                os.environ["VKINFER_NO_FUSION"] = "1"
            else:
                os.environ.pop("VKINFER_NO_FUSION", None)
            sliced = []
            with tempfile.TemporaryDirectory() as tmp:
                run, got = run_exported(vkinfer, model, inputs, tmp, opset, ["--precision", "fp16"] if fp16 else [])
                # the fused plan's dispatches (kernel, op type, node name), where a check reads them
                stored = name in STORED_THROUGH and not ((fp16 or bf16) and cpu_device and not ATTENTION_FUSED)
                joined = name in LN_JOINED and SPLIT_K_FORCED
                named = None
                into_norm = name in RESIDUAL_INTO_NORM and not (fp16 or bf16) and \
                    (os.environ.get("VKINFER_MATMUL_KERNELS") == "gpu" or not cpu_device)
                if mode == "fused" and (stored or joined or name in SLICE_VIEWS or name in CHANNELS_LAST or into_norm):
                    named = profiled_dispatches(vkinfer, os.path.join(tmp, "model.onnx"),
                                                ["--precision", "fp16"] if fp16 else [], names=True)
                # (not the fp16 mode's and bfloat16 models' half products on CPU devices: GPU kernels
                # without the layout, attention three dispatches)
                if stored and mode == "fused":
                    copies = [nm for _, op, nm in named or [] if op == "Transpose" and nm in STORED_THROUGH[name]]
                    if named is None or copies:
                        print(f"FAIL {name}: Transposes dispatched ({copies}), not stored through by the kernel before them")
                        failed += 1
                if joined and mode == "fused":
                    lns = [nm for _, op, nm in named or [] if op == "LayerNormalization"]
                    if named is None or lns != LN_JOINED[name]:
                        print(f"FAIL {name}: LayerNormalization dispatches {lns}, expected only {LN_JOINED[name]}")
                        failed += 1
                if into_norm and mode == "fused":
                    passes = [nm for kernel, _, nm in named or [] if kernel == "binary"]
                    if named is None or passes:
                        print(f"FAIL {name}: residual Adds as passes of their own {passes or '(no profile)'}")
                        failed += 1
                if name in CHANNELS_LAST and mode == "fused":
                    gpu_conv = CONV_ON_GPU_KERNELS or not cpu_device
                    unwanted = {"/Transpose_2", "/Transpose_3"} | ({"/Transpose"} if gpu_conv else set())
                    left = [nm for _, op, nm in named or [] if op == "Transpose" and nm in unwanted]
                    if SPLIT_K_FORCED and name == "convnext_block":
                        left += [nm for _, op, nm in named or [] if op == "Mul"]
                    if named is None or left:
                        print(f"FAIL {name}: {left or '(no profile)'} dispatched, not folded into the kernels around them")
                        failed += 1
                if name in SLICE_VIEWS and mode == "fused":
                    sliced = [k for k, op, _ in named or [] if re.fullmatch(SLICE_VIEWS[name], op)]
                    if named is None:
                        sliced = ["(no profile)"]
            if sliced:
                print(f"FAIL {name}: {SLICE_VIEWS[name]} nodes copied by {sliced}, not read in place")
                failed += 1
            if got is None:
                print(f"FAIL {name} {mode}: vkinfer exited {run.returncode}")
                failed += 1
                continue
            err = float(np.max(np.abs(got.astype(np.float64) - ref))) if got.shape == ref.shape else float("inf")
            bound = (3e-2 if bf16 else 1e-2 if fp16 else 1e-4) * float(np.max(np.abs(ref))) + 1e-5
            dispatches, fused = plan_line(run)
            results[mode] = (dispatches, fused)
            ok = err <= bound
            print(f"{'PASS' if ok else 'FAIL'} {name} {mode}: max abs error {err:.3g} (bound {bound:.3g}), "
                  f"{dispatches} dispatches, {fused} fused")
            failed += not ok
        os.environ.pop("VKINFER_NO_FUSION", None)
        if len(results) == 2:
            (d_on, f_on), (d_off, f_off) = results["fused"], results["unfused"]
            if fewer == 0:
                if d_on != d_off:
                    print(f"FAIL {name}: nothing should fuse, yet {d_off} -> {d_on} dispatches")
                    failed += 1
            elif d_off - d_on < fewer or (f_on - f_off < fewer and name not in VIEWS and not counts_only) or \
                    (name in EXACT and d_off - d_on != fewer):
                print(f"FAIL {name}: {d_off} -> {d_on} dispatches, {f_off} -> {f_on} fused; expected at least {fewer} fewer")
                failed += 1
            else:
                print(f"{name}: {d_off} -> {d_on} dispatches")
    print("PASS" if not failed else f"FAIL ({failed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
