"""Views with a split dim (src/ops/shape.c): a Reshape that merges a batch axis with attention's
heads over a strided Slice, [S, B, E] cut from [S, B, 3E] -> [S, B*H, D], whose merged dim no
single stride describes. Each case against PyTorch eager; the ones marked `view` must leave no
Reshape dispatch (the view reached the product), the others are where the view must not be made
or must be copied after all (the split dim would be a product's row or inner dim, a second
Reshape cuts it again, the two operands split one batch dim differently, a Softmax between):
their Reshapes may copy, their numbers must match.

    tests/models/split_views.py VKINFER [fp16]
(fp16: the fp16 mode, whose bound is looser)"""
import os
import sys
import tempfile

import numpy as np
import torch

from torch_export import Fn, profiled_dispatches, report, run_exported


def heads(t, s, bh, d):
    return t.reshape(s, bh, d)


def cases():
    torch.manual_seed(0)
    r = torch.randn
    # the policy's form: q, k, v cut at whole 4s, transposed into [B*H, S, D]; K^T by a permute
    def attention(x):
        s, b = x.shape[0], x.shape[1]
        q, k, v = x[..., :32], x[..., 32:64], x[..., 64:96]
        q = heads(q, s, b * 4, 8).transpose(0, 1)
        k = heads(k, s, b * 4, 8).permute(1, 2, 0)
        v = heads(v, s, b * 4, 8).transpose(0, 1)
        return torch.softmax(q @ k, dim=-1) @ v
    yield "attention", attention, (r(6, 3, 96),), True
    # q's split dim as the product's rows (no Transpose: [S, B*H, D] x [D, N]): no view, a copy
    yield "split_as_rows", lambda x, w: heads(x[..., 8:40], 5, 8, 16) @ w, (r(5, 4, 48), r(16, 7)), False
    # one operand split, the other a plain weight broadcast over the batch dims
    yield "broadcast_weight", lambda x, w: heads(x[..., 4:36], 7, 6, 16).transpose(0, 1) @ w, \
        (r(7, 3, 40), r(16, 5)), True
    # the split view reshaped again, [B*H, S, D] -> [B, H, S, D] (the split dim cut back into its
    # parts): copied by that Reshape, right all the same
    yield "reshaped_again", lambda x: (heads(x[..., :24], 5, 6, 8).transpose(0, 1).reshape(2, 3, 5, 8) @
                                       heads(x[..., 24:48], 5, 6, 8).permute(1, 2, 0).reshape(2, 3, 8, 5)), \
        (r(5, 2, 48),), False
    # the two operands split their batch dim differently (2 x 8 and 4 x 4): the second planned
    # must copy
    yield "different_splits", lambda x, y: (heads(x[..., :32], 5, 16, 4).transpose(0, 1) @
                                            heads(y[..., 8:24], 5, 16, 4).permute(1, 2, 0)), \
        (r(5, 2, 40), r(5, 4, 48)), False
    # a scale between the Transpose and the product, and 4-D batch dims through a permute of a
    # 4-D view ([S, B, H, D] read as heads without merging: plain strides)
    yield "scaled", lambda x: (heads(x[..., :32], 9, 8, 8).transpose(0, 1) * 0.5) @ \
        heads(x[..., 32:64], 9, 8, 8).permute(1, 2, 0), (r(9, 2, 64),), True


def main():
    vkinfer = sys.argv[1]
    fp16 = len(sys.argv) > 2 and sys.argv[2] == "fp16"
    extra = ["--precision", "fp16"] if fp16 else []
    failed = []
    for name, fn, inputs, view in cases():
        model = Fn(fn).eval()
        with torch.no_grad():
            ref = model(*inputs).numpy()
        with tempfile.TemporaryDirectory() as tmp:
            run, got = run_exported(vkinfer, model, inputs, tmp, 17, extra)
            dispatched = profiled_dispatches(vkinfer, os.path.join(tmp, "model.onnx"), extra)
        ok = got is not None and got.shape == ref.shape
        err = float(np.max(np.abs(got.astype(np.float64) - ref))) if ok else float("inf")
        bound = (1e-2 if fp16 else 1e-4) * float(np.max(np.abs(ref))) + 1e-5
        ok = ok and err <= bound
        copied = [node for _, node in dispatched or [] if node == "Reshape"]
        if dispatched is None:
            print(f"FAIL {name}: no profile")
            ok = False
        elif view and copied and os.environ.get("VKINFER_SPLIT_VIEWS") != "0":
            print(f"FAIL {name}: {len(copied)} Reshape dispatches; the head split should be a view")
            ok = False
        print(("PASS" if ok else "FAIL") + f" {name}: max abs error {err:.3g} (bound {bound:.3g}), "
              f"{len(copied)} Reshape copies")
        if not ok:
            failed.append(name)
    return report(failed)


if __name__ == "__main__":
    sys.exit(main())
