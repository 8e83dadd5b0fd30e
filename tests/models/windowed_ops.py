"""Single ops on tensors larger than one binding (VKINFER_MAX_BINDING_BYTES=262144; X is
[8,16,32,32] float32, 512 KiB): Pad (constant, a runtime constant value, reflect, edge),
Resize (nearest, linear), Concat, Transpose, reductions over inner axes and over the outermost
one (in two stages: windows of rows into partial results, then those), Softmax and Gather of an
embedding table split their work into windows; each matches numpy with and without the limit,
in more dispatches with it; so do the views and fused passes of a Transpose or a strided Slice
read by an element-wise op, two element-wise ops and PyTorch's opset < 18 GroupNorm. What cannot
split is a clear error: a Pad of axis 0, ArgMax over the outermost axis (partial indices do not
combine).

    windowed_ops.py VKINFER"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

VKINFER = sys.argv[1]
TMP = tempfile.mkdtemp()
LIMIT = 262144
rng = np.random.default_rng(0)
X = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)
np.save(os.path.join(TMP, "x.npy"), X)
np.save(os.path.join(TMP, "v.npy"), np.array(2.5, np.float32))
failures = 0


def run(name, limit, feeds):
    env = dict(os.environ)
    env.pop("VKINFER_MAX_BINDING_BYTES", None)
    if limit:
        env["VKINFER_MAX_BINDING_BYTES"] = str(limit)
    out = os.path.join(TMP, f"{name}_{limit}")
    flags = []
    for k in feeds:
        flags += ["--input", f"{k}={os.path.join(TMP, k + '.npy')}"]
    r = subprocess.run([VKINFER, "run", os.path.join(TMP, name + ".onnx"), *flags, "--output-dir", out],
                       capture_output=True, text=True, env=env)
    if r.returncode:
        return None, 0, r.stderr.strip()
    n = int([line for line in r.stdout.splitlines() if line.startswith("plan:")][0].split()[1])
    return np.load(os.path.join(out, "y.npy")), n, ""


def model(name, nodes, inits=(), extra_inputs=()):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, list(X.shape)), *extra_inputs],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    m.ir_version = 8
    onnx.save(m, os.path.join(TMP, name + ".onnx"))


def case(name, nodes, ref, inits=(), feeds=("x",), extra_inputs=()):
    global failures
    model(name, nodes, inits, extra_inputs)
    plain, n_plain, why = run(name, 0, feeds)
    win, n_win, why_w = run(name, LIMIT, feeds)
    tol = 1e-5 * float(np.abs(ref).max()) + 1e-6
    ok = plain is not None and win is not None and plain.shape == ref.shape and win.shape == ref.shape and \
        float(np.abs(plain - ref).max()) <= tol and float(np.abs(win - ref).max()) <= tol and n_win > n_plain
    print(("PASS " if ok else "FAIL ") + f"{name}: {n_plain} dispatches plain, {n_win} windowed {why} {why_w}")
    failures += not ok


def refused(name, nodes, words, inits=()):
    global failures
    model(name, nodes, inits)
    y, _, why = run(name, LIMIT, ("x",))
    ok = y is None and all(w in why for w in words)
    print(("PASS " if ok else "FAIL ") + f"{name} refused: {why[-200:]}")
    failures += not ok


def ints(name, values):
    return nh.from_array(np.array(values, np.int64), name)


pads = ints("pads", [0, 0, 1, 2, 0, 0, 2, 1])
np_pads = ((0, 0), (0, 0), (1, 2), (2, 1))
case("pad_constant", [h.make_node("Pad", ["x", "pads", "c"], ["y"])], np.pad(X, np_pads, constant_values=0.5),
     [pads, nh.from_array(np.array(0.5, np.float32), "c")])
case("pad_runtime_value", [h.make_node("Pad", ["x", "pads", "v"], ["y"])], np.pad(X, np_pads, constant_values=2.5),
     [pads], ("x", "v"), [h.make_tensor_value_info("v", T.FLOAT, [])])
case("pad_reflect", [h.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")], np.pad(X, np_pads, mode="reflect"), [pads])
case("pad_edge", [h.make_node("Pad", ["x", "pads"], ["y"], mode="edge")], np.pad(X, np_pads, mode="edge"), [pads])
case("resize_nearest", [h.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest")], X.repeat(2, 2).repeat(2, 3),
     [nh.from_array(np.array([1, 1, 2, 2], np.float32), "s")])
lin = np.empty((8, 16, 32, 64), np.float64)  # linear, half_pixel, along the last axis only
pos = (np.arange(64) + 0.5) / 2 - 0.5
lo = np.clip(np.floor(pos).astype(int), 0, 31)
hi = np.clip(lo + 1, 0, 31)
w = np.clip(pos - np.floor(pos), 0, 1)
w[pos < 0] = 0
lin = X[..., lo] * (1 - w) + X[..., hi] * w
case("resize_linear", [h.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")], lin.astype(np.float32),
     [nh.from_array(np.array([1, 1, 1, 2], np.float32), "s")])
case("concat", [h.make_node("Concat", ["x", "x"], ["y"], axis=1)], np.concatenate([X, X], 1))
case("transpose", [h.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])], X.transpose(0, 2, 3, 1))
case("reduce_inner", [h.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0)], X.mean((2, 3)), [ints("axes", [2, 3])])
case("softmax", [h.make_node("Softmax", ["x"], ["y"], axis=-1)],
     (np.exp(X - X.max(-1, keepdims=True)) / np.exp(X - X.max(-1, keepdims=True)).sum(-1, keepdims=True)))
table = rng.standard_normal((4096, 64)).astype(np.float32)  # 1 MiB embedding table
idx = rng.integers(0, 4096, (8, 32))
# (the indices an input: a constant table at constant indices is folded at plan time)
np.save(os.path.join(TMP, "idx.npy"), idx)
case("gather_table", [h.make_node("Gather", ["table", "idx"], ["y"])], table[idx],
     [nh.from_array(table, "table")], ("x", "idx"), [h.make_tensor_value_info("idx", T.INT64, list(idx.shape))])
refused("pad_axis0", [h.make_node("Pad", ["x", "p0"], ["y"])], ["Pad", "axis 0"], [ints("p0", [1, 0, 0, 0, 0, 0, 0, 0])])
# reductions over the outermost dim: windows of its rows reduced into partial results, then those
case("reduce_all_sum", [h.make_node("ReduceSum", ["x"], ["y"], keepdims=0)], X.sum(dtype=np.float64).astype(np.float32))
case("reduce_all_max", [h.make_node("ReduceMax", ["x"], ["y"], keepdims=1)], X.max(keepdims=True))
case("reduce_axis0_mean", [h.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0)], X.mean(0), [ints("axes", [0])])
case("reduce_axes02_l2", [h.make_node("ReduceL2", ["x", "axes"], ["y"], keepdims=1)],
     np.sqrt((X.astype(np.float64) ** 2).sum((0, 2), keepdims=True)).astype(np.float32), [ints("axes", [0, 2])])
case("reduce_all_logsumexp", [h.make_node("ReduceLogSumExp", ["x"], ["y"], keepdims=0)],
     np.log(np.exp(X.astype(np.float64)).sum()).astype(np.float32))
case("reduce_axis0_sumsquare", [h.make_node("ReduceSumSquare", ["x", "axes"], ["y"], keepdims=0)],
     (X.astype(np.float64) ** 2).sum(0).astype(np.float32), [ints("axes", [0])])
refused("argmax_axis0", [h.make_node("ArgMax", ["x"], ["y"], axis=0)], ["ArgMax", "maxStorageBufferRange", "exactly"])
# views and passes that fuse where tensors fit one binding, and split into windows where they do
# not: a Transpose and a strided Slice read by element-wise ops (views read in place), two
# element-wise ops (one pass), PyTorch's opset < 18 GroupNorm (one norm pass of whole images)
tx = np.tanh(X)
bias16 = rng.standard_normal(16).astype(np.float32)
case("transpose_add", [h.make_node("Tanh", ["x"], ["t"]), h.make_node("Transpose", ["t"], ["p"], perm=[0, 2, 3, 1]),
                       h.make_node("Add", ["p", "b"], ["y"])], tx.transpose(0, 2, 3, 1) + bias16,
     [nh.from_array(bias16, "b")])
case("slice_mul", [h.make_node("Tanh", ["x"], ["t"]), h.make_node("Slice", ["t", "s0", "s1", "ax"], ["q"]),
                   h.make_node("Mul", ["q", "two"], ["y"])], tx[:, :8] * 2.0,
     [ints("s0", [0]), ints("s1", [8]), ints("ax", [1]), nh.from_array(np.array(2.0, np.float32), "two")])
scale4 = rng.standard_normal((16, 1, 1)).astype(np.float32)
case("two_steps", [h.make_node("Tanh", ["x"], ["t"]), h.make_node("Mul", ["t", "g"], ["m"]),
                   h.make_node("Add", ["m", "x"], ["y"])], tx * scale4 + X, [nh.from_array(scale4, "g")])
gw = rng.standard_normal((16, 1, 1)).astype(np.float32)
gb = rng.standard_normal((16, 1, 1)).astype(np.float32)
xg = X.reshape(8, 4, -1).astype(np.float64)
gn = ((xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-5)).reshape(X.shape) * gw + gb
case("group_norm_pattern",
     [h.make_node("Reshape", ["x", "g_shape"], ["r"]),
      h.make_node("InstanceNormalization", ["r", "ones", "zeros"], ["n"], epsilon=1e-5),
      h.make_node("Shape", ["x"], ["x_shape"]), h.make_node("Reshape", ["n", "x_shape"], ["rb"]),
      h.make_node("Mul", ["rb", "gw"], ["gm"]), h.make_node("Add", ["gm", "gb"], ["y"])], gn.astype(np.float32),
     [ints("g_shape", [0, 4, -1]), nh.from_array(np.ones(4, np.float32), "ones"), nh.from_array(np.zeros(4, np.float32), "zeros"),
      nh.from_array(gw, "gw"), nh.from_array(gb, "gb")])
print("PASS" if not failures else f"FAIL ({failures})")
sys.exit(1 if failures else 0)
