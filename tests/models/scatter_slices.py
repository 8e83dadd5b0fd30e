"""Slice assignment as the dynamo exporter writes it (`out = torch.empty_like(x); out[..., :h] =
a; out[..., h:] = b`, SmolVLA's rotary embedding): Transposes that move the assigned axis first,
ScatterNDs along it, the Transpose back. src/plan/fuse.c plans the chain as one
vkinfer.ScatterSlices node (src/ops/scatter.c). Each case is an ONNX graph built here, run by
`vkinfer run` with fusion on and with VKINFER_NO_FUSION=1, and compared with numpy's ScatterND
and Transpose (1e-5: the inputs pass a Tanh first, so that they are intermediates); the fused
plan must have exactly the expected number of dispatches fewer. Index tuples that are not
consecutive rows cost a copy each (rope_reversed, tuples: more dispatches than unfused, still
exact); the exporter's slice assignments are consecutive rows.

    scatter_slices.py VKINFER"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from fused_cases import check_cases

F = TensorProto.FLOAT


def scatter_nd(data, idx, upd):
    out = data.copy()
    for t in np.ndindex(idx.shape[:-1]):
        out[tuple(idx[t])] = upd[t]
    return out


def const(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(arr, name))


def rope_like(dims_indices=False, reverse=False):
    """[1, S, H, 16]: u1, u2 [1, S, H, 8] moved last-axis-first (perm 3,1,2,0), scattered into rows
    0-7 and 8-15 of a zero buffer [16, S, H, 1], moved back to [1, H, S, 16] (perm 3,2,1,0).
    dims_indices: the indices computed by a Range/Unsqueeze subgraph (an unoptimized export);
    reverse: the second piece's rows in reverse order (one copy per row)."""
    s, h = 11, 4
    rng = np.random.default_rng(1)
    u1, u2 = rng.standard_normal((1, s, h, 8), dtype=np.float32), rng.standard_normal((1, s, h, 8), dtype=np.float32)
    data = np.zeros((16, s, h, 1), np.float32)
    i1 = np.arange(8, dtype=np.int64).reshape(8, 1)
    i2 = (np.arange(15, 7, -1) if reverse else np.arange(8, 16)).astype(np.int64).reshape(8, 1)
    nodes = [helper.make_node("Tanh", ["x1"], ["a"]), helper.make_node("Tanh", ["x2"], ["b"]),
             helper.make_node("Transpose", ["a"], ["ta"], perm=[3, 1, 2, 0]),
             helper.make_node("Transpose", ["b"], ["tb"], perm=[3, 1, 2, 0])]
    inits = [numpy_helper.from_array(data, "data")]
    if dims_indices:
        nodes += [const("c0", np.array(0, np.int64)), const("c8", np.array(8, np.int64)),
                  const("c16", np.array(16, np.int64)), const("c1", np.array(1, np.int64)),
                  const("ax", np.array([1], np.int64)),
                  helper.make_node("Range", ["c0", "c8", "c1"], ["r1"]),
                  helper.make_node("Range", ["c8", "c16", "c1"], ["r2"]),
                  helper.make_node("Unsqueeze", ["r1", "ax"], ["i1"]),
                  helper.make_node("Unsqueeze", ["r2", "ax"], ["i2"])]
    else:
        inits += [numpy_helper.from_array(i1, "i1"), numpy_helper.from_array(i2, "i2")]
    nodes += [helper.make_node("ScatterND", ["data", "i1", "ta"], ["s1"]),
              helper.make_node("ScatterND", ["s1", "i2", "tb"], ["s2"]),
              helper.make_node("Transpose", ["s2"], ["y"], perm=[3, 2, 1, 0])]
    ta, tb = np.tanh(u1).transpose(3, 1, 2, 0), np.tanh(u2).transpose(3, 1, 2, 0)
    ref = scatter_nd(scatter_nd(data, i1, ta), i2, tb).transpose(3, 2, 1, 0)
    g = helper.make_graph(nodes, "rope", [helper.make_tensor_value_info("x1", F, u1.shape),
                                          helper.make_tensor_value_info("x2", F, u2.shape)],
                          [helper.make_tensor_value_info("y", F, ref.shape)], inits)
    return g, {"x1": u1, "x2": u2}, {"y": ref}


def partial():
    """One piece over rows 4-9 of a data input [16, 5, 3] (data copied first), no Transpose after;
    u [5, 3, 6] moved by perm 2,0,1."""
    rng = np.random.default_rng(2)
    data, u = rng.standard_normal((16, 5, 3), dtype=np.float32), rng.standard_normal((5, 3, 6), dtype=np.float32)
    idx = np.arange(4, 10, dtype=np.int64).reshape(6, 1)
    nodes = [helper.make_node("Tanh", ["x"], ["a"]), helper.make_node("Tanh", ["d"], ["dt"]),
             helper.make_node("Transpose", ["a"], ["ta"], perm=[2, 0, 1]),
             helper.make_node("ScatterND", ["dt", "idx", "ta"], ["y"])]
    ref = scatter_nd(np.tanh(data), idx, np.tanh(u).transpose(2, 0, 1))
    g = helper.make_graph(nodes, "partial", [helper.make_tensor_value_info("d", F, data.shape),
                                             helper.make_tensor_value_info("x", F, u.shape)],
                          [helper.make_tensor_value_info("y", F, ref.shape)], [numpy_helper.from_array(idx, "idx")])
    return g, {"d": data, "x": u}, {"y": ref}


def tuples():
    """Index tuples of two (one row of a [4, 5, 6] data each, a negative index among them):
    updates [3, 6] = Transpose(u [6, 3]); each tuple its own copy after the data's."""
    rng = np.random.default_rng(3)
    data, u = rng.standard_normal((4, 5, 6), dtype=np.float32), rng.standard_normal((6, 3), dtype=np.float32)
    idx = np.array([[0, 1], [3, -1], [2, 2]], np.int64)
    nodes = [helper.make_node("Tanh", ["x"], ["a"]), helper.make_node("Tanh", ["d"], ["dt"]),
             helper.make_node("Transpose", ["a"], ["ta"], perm=[1, 0]),
             helper.make_node("ScatterND", ["dt", "idx", "ta"], ["y"])]
    ref = scatter_nd(np.tanh(data), idx, np.tanh(u).T)
    g = helper.make_graph(nodes, "tuples", [helper.make_tensor_value_info("d", F, data.shape),
                                            helper.make_tensor_value_info("x", F, u.shape)],
                          [helper.make_tensor_value_info("y", F, ref.shape)], [numpy_helper.from_array(idx, "idx")])
    return g, {"d": data, "x": u}, {"y": ref}


def control():
    """The first ScatterND's result also read elsewhere: only it and its Transpose are one node
    (the second ScatterND and the Transpose after stay): exactly 1 fewer."""
    g, inputs, ref = rope_like()
    g.node.append(helper.make_node("ReduceSum", ["s1"], ["extra"], keepdims=0))
    extra = scatter_nd(np.zeros((16, 11, 4, 1), np.float32), np.arange(8).reshape(8, 1),
                       np.tanh(inputs["x1"]).transpose(3, 1, 2, 0)).sum()
    g.output.append(helper.make_tensor_value_info("extra", F, []))
    return g, inputs, dict(ref, extra=np.array(extra, np.float32))


# name: (builder, dispatches fewer: exactly)
CASES = {
    "rope": (rope_like, 3),  # 2 Transposes in, 2 ScatterNDs, 1 Transpose out -> 2 copies
    "rope_dims_indices": (lambda: rope_like(dims_indices=True), 3),
    "rope_reversed": (lambda: rope_like(reverse=True), -4),  # the reversed piece: one copy per row (8)
    "partial": (partial, 0),  # Transpose + ScatterND -> the data's copy + the piece's
    "tuples": (tuples, -2),  # Transpose + ScatterND -> the data's copy + one copy per tuple (3)
    "control": (control, 1),
}


def main():
    return 1 if check_cases(sys.argv[1], CASES, 18) else 0


if __name__ == "__main__":
    sys.exit(main())
