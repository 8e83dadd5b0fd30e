"""Ops whose output sizes depend on the data (NonZero, Compress, Unique, NonMaxSuppression),
inside larger graphs, run several times on one session with data that changes the sizes (and
back): each run must match NumPy, the sizes being read back mid-run and the graph after them
planned for each size (src/plan: op_data_size).

    data_dependent.py LIBVKINFER_SO"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper as h

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
os.environ["VKINFER_LIBRARY"] = sys.argv[1]
import vkinfer  # noqa: E402

TMP = tempfile.mkdtemp()
rng = np.random.default_rng(0)
failures = 0


def check(name, got, want):
    global failures
    ok = got.shape == want.shape and got.dtype == want.dtype and np.allclose(got, want, rtol=1e-5, atol=1e-6)
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": got {got.dtype}{got.shape} {got.ravel()[:12]}, "
                                                 f"want {want.dtype}{want.shape} {want.ravel()[:12]}"))
    failures += not ok


def session(name, nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, name, inputs, outputs, list(inits))
    path = os.path.join(TMP, name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    return vkinfer.Session(path)


def vi(name, t, shape):
    return h.make_tensor_value_info(name, t, shape)


# 1. NonZero feeding Transpose, GatherND and Mul: the positions of x > 0 and twice their values
s = session("nonzero_chain", [
    h.make_node("Constant", [], ["zero"], value=h.make_tensor("zero", TensorProto.FLOAT, [], [0.0])),
    h.make_node("Greater", ["x", "zero"], ["mask"]),
    h.make_node("NonZero", ["mask"], ["idx"]),
    h.make_node("Transpose", ["idx"], ["idx_t"], perm=[1, 0]),
    h.make_node("GatherND", ["x", "idx_t"], ["picked"]),
    h.make_node("Add", ["picked", "picked"], ["y"]),
], [vi("x", TensorProto.FLOAT, [6, 5])], [vi("y", TensorProto.FLOAT, None), vi("idx", TensorProto.INT64, None)])
xs = [rng.standard_normal((6, 5)).astype(np.float32) for _ in range(3)]
xs += [-np.abs(xs[0]), np.abs(xs[1]) + 1, xs[0]]  # none selected, all selected, a size seen before
for k, x in enumerate(xs):
    out = s.run({"x": x})
    idx = np.array(np.nonzero(x > 0), np.int64)
    check(f"nonzero_chain run {k} idx", out["idx"], idx)
    check(f"nonzero_chain run {k} y", out["y"], 2 * x[x > 0])

# profiled: the timestamps span the segments the run is split into
s.set_profiling(True)
out = s.run({"x": xs[1]})
check("nonzero_chain profiled y", out["y"], 2 * xs[1][xs[1] > 0])
prof = s.profile()
check("nonzero_chain profile has every dispatch", np.array(len(prof) >= 3 and all(p["gpu_ms"] >= 0 for p in prof)),
      np.array(True))

# a size found for one input shape is too large for a smaller one: probed again, not planned
s = session("nonzero_shapes", [h.make_node("NonZero", ["x"], ["y"])], [vi("x", TensorProto.FLOAT, ["n"])],
            [vi("y", TensorProto.INT64, None)])
for n in (50, 5, 0, 50, 7):
    x = (rng.random(n) < 0.8).astype(np.float32)
    check(f"nonzero_shapes n={n}", s.run({"x": x})["y"], np.array(np.nonzero(x), np.int64))

# 2. Compress along axis 1 by a condition given at run time, then ReduceSum; a second Compress
#    (of the result, by the data) after the first: two sizes read back in one run
s = session("compress_chain", [
    h.make_node("Compress", ["x", "cond"], ["picked"], axis=1),
    h.make_node("Constant", [], ["axes"], value=h.make_tensor("axes", TensorProto.INT64, [1], [1])),
    h.make_node("ReduceSum", ["picked", "axes"], ["sums"], keepdims=0),
    h.make_node("Constant", [], ["zero"], value=h.make_tensor("zero", TensorProto.FLOAT, [], [0.0])),
    h.make_node("Greater", ["sums", "zero"], ["positive"]),
    h.make_node("Compress", ["sums", "positive"], ["y"], axis=0),
], [vi("x", TensorProto.FLOAT, [8, 7]), vi("cond", TensorProto.BOOL, [7])],
    [vi("picked", TensorProto.FLOAT, None), vi("y", TensorProto.FLOAT, None)])
x = rng.standard_normal((8, 7)).astype(np.float32)
for k in range(6):
    cond = rng.random(7) < [0.5, 0.0, 1.0, 0.3, 0.7, 0.5, 0.5][k % 7]
    out = s.run({"x": x, "cond": cond})
    picked = x[:, cond]
    sums = picked.sum(axis=1)
    check(f"compress_chain run {k} picked", out["picked"], picked)
    check(f"compress_chain run {k} y", out["y"], sums[sums > 0])

# 3. Unique of integers, its counts, and Y + 1
s = session("unique_chain", [
    h.make_node("Unique", ["x"], ["u", "indices", "inverse", "counts"], sorted=1),
    h.make_node("Constant", [], ["one"], value=h.make_tensor("one", TensorProto.INT32, [], [1])),
    h.make_node("Add", ["u", "one"], ["y"]),
], [vi("x", TensorProto.INT32, [40])],
    [vi("y", TensorProto.INT32, None), vi("indices", TensorProto.INT64, None), vi("inverse", TensorProto.INT64, None),
     vi("counts", TensorProto.INT64, None)])
for k, high in enumerate([5, 30, 1, 5, 100]):
    x = rng.integers(0, high, 40).astype(np.int32)
    out = s.run({"x": x})
    u, indices, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    check(f"unique_chain run {k} y", out["y"], u + 1)
    check(f"unique_chain run {k} indices", out["indices"], indices.astype(np.int64))
    check(f"unique_chain run {k} inverse", out["inverse"], inverse.reshape(-1).astype(np.int64))
    check(f"unique_chain run {k} counts", out["counts"], counts.astype(np.int64))


# 4. NonMaxSuppression with constant thresholds, then the kept boxes' class scores gathered
def nms_ref(boxes, scores, max_out, iou_thr, score_thr):
    rows = []
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            order = sorted((i for i in range(scores.shape[2]) if scores[b, c, i] > score_thr),
                           key=lambda i: (-scores[b, c, i], i))
            kept = []
            for i in order:
                if len(kept) == max_out:
                    break
                ok = True
                for j in kept:
                    y0, x0, y1, x1 = boxes[b, i]
                    v0, u0, v1, u1 = boxes[b, j]
                    iw = min(max(x0, x1), max(u0, u1)) - max(min(x0, x1), min(u0, u1))
                    ih = min(max(y0, y1), max(v0, v1)) - max(min(y0, y1), min(v0, v1))
                    if iw <= 0 or ih <= 0:
                        continue
                    inter = iw * ih
                    union = abs((x1 - x0) * (y1 - y0)) + abs((u1 - u0) * (v1 - v0)) - inter
                    if inter / union > iou_thr:
                        ok = False
                        break
                if ok:
                    kept.append(i)
                    rows.append([b, c, i])
    return np.array(rows, np.int64).reshape(-1, 3)


consts = [h.make_tensor("max_out", TensorProto.INT64, [1], [4]), h.make_tensor("iou", TensorProto.FLOAT, [1], [0.4]),
          h.make_tensor("score_thr", TensorProto.FLOAT, [1], [0.3])]
s = session("nms_chain", [
    h.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score_thr"], ["sel"]),
    h.make_node("Constant", [], ["cols"], value=h.make_tensor("cols", TensorProto.INT64, [2], [0, 2])),
    h.make_node("Gather", ["sel", "cols"], ["batch_box"], axis=1),
], [vi("boxes", TensorProto.FLOAT, [2, 30, 4]), vi("scores", TensorProto.FLOAT, [2, 3, 30])],
    [vi("sel", TensorProto.INT64, None), vi("batch_box", TensorProto.INT64, None)], consts)
for k in range(4):
    corner = rng.random((2, 30, 2)).astype(np.float32) * 10
    boxes = np.concatenate([corner, corner + 1 + rng.random((2, 30, 2)).astype(np.float32) * 3], axis=2)
    scores = (rng.random((2, 3, 30)) * (0.2 + 0.3 * k)).astype(np.float32)
    out = s.run({"boxes": boxes, "scores": scores})
    want = nms_ref(boxes, scores, 4, np.float32(0.4), np.float32(0.3))
    check(f"nms_chain run {k} sel ({len(want)} rows)", out["sel"], want)
    check(f"nms_chain run {k} batch_box", out["batch_box"], want[:, [0, 2]])

print(f"{'FAILED' if failures else 'passed'}: {failures} failures")
sys.exit(1 if failures else 0)
