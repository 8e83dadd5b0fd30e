"""Out-of-range indices at run time (graph inputs, so the plan cannot check them): the index ops
never read or write outside their buffers and do what their files document. Gather,
GatherElements and GatherND clamp each index into its dimension (after negative indices count
from the end); ScatterElements and ScatterND skip an update whose index (or any entry of its
index tuple) is out of range; OneHot writes the off value for an index outside [-depth, depth).
ONNX calls such indices an error; a runtime that cannot raise one from the GPU must at least
stay inside its buffers. Validation layers are on (VKINFER_VALIDATION=1 in ctest).

    oob_indices.py VKINFER"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

failures = passes = 0


def check(name, ok, detail=""):
    global failures, passes
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    failures += not ok
    passes += bool(ok)


def model(node, inputs, out_shape, out_type=TensorProto.FLOAT, opset=13):
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, t, a.shape) for n, t, a in inputs],
                          [helper.make_tensor_value_info("y", out_type, out_shape)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def run(vkinfer, m, feeds, tmp):
    path = os.path.join(tmp, "m.onnx")
    onnx.save(m, path)
    cmd = [vkinfer, "run", path, "--output-dir", os.path.join(tmp, "out")]
    for name, a in feeds.items():
        np.save(os.path.join(tmp, name + ".npy"), a)
        cmd += ["--input", f"{name}={os.path.join(tmp, name + '.npy')}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print(r.stdout, r.stderr)
        return None
    return np.load(os.path.join(tmp, "out", "y.npy"))


def clamp(idx, dim):
    idx = np.where(idx < 0, idx + dim, idx)
    return np.clip(idx, 0, dim - 1)


def main():
    vkinfer = sys.argv[1]
    F, I = TensorProto.FLOAT, TensorProto.INT64
    data = np.arange(15, dtype=np.float32).reshape(5, 3)
    with tempfile.TemporaryDirectory() as tmp:
        # Gather, axis 0
        idx = np.array([7, -9, 2, -1], np.int64)
        got = run(vkinfer, model(helper.make_node("Gather", ["x", "i"], ["y"], axis=0),
                                 [("x", F, data), ("i", I, idx)], [4, 3]), {"x": data, "i": idx}, tmp)
        want = data[clamp(idx, 5)]
        check("Gather clamps out-of-range indices", got is not None and np.array_equal(got, want), got)
        # GatherElements, axis 1
        d2 = np.arange(12, dtype=np.float32).reshape(3, 4)
        idx = np.array([[-10, 9, 1, 0], [2, 3, -1, 40], [0, 0, 5, -5]], np.int64)
        got = run(vkinfer, model(helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1),
                                 [("x", F, d2), ("i", I, idx)], [3, 4]), {"x": d2, "i": idx}, tmp)
        want = np.take_along_axis(d2, clamp(idx, 4), axis=1)
        check("GatherElements clamps out-of-range indices", got is not None and np.array_equal(got, want), got)
        # GatherND
        d3 = np.arange(20, dtype=np.float32).reshape(4, 5)
        idx = np.array([[9, 1], [-1, 7], [2, 2]], np.int64)
        got = run(vkinfer, model(helper.make_node("GatherND", ["x", "i"], ["y"]),
                                 [("x", F, d3), ("i", I, idx)], [3]), {"x": d3, "i": idx}, tmp)
        want = d3[clamp(idx[:, 0], 4), clamp(idx[:, 1], 5)]
        check("GatherND clamps each index into its dimension", got is not None and np.array_equal(got, want), got)
        # ScatterElements, axis 1: out-of-range updates are skipped
        base = np.zeros((3, 4), np.float32)
        idx = np.array([[0, 9], [-1, -9], [2, 1]], np.int64)
        upd = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
        got = run(vkinfer, model(helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1),
                                 [("x", F, base), ("i", I, idx), ("u", F, upd)], [3, 4]),
                  {"x": base, "i": idx, "u": upd}, tmp)
        want = base.copy()
        for r in range(3):
            for k in range(2):
                j = idx[r, k] + (4 if idx[r, k] < 0 else 0)
                if 0 <= j < 4:
                    want[r, j] = upd[r, k]
        check("ScatterElements skips out-of-range updates", got is not None and np.array_equal(got, want), got)
        # ScatterND: a tuple with any out-of-range entry is skipped
        idx = np.array([[1, 2], [5, 0], [0, -7], [3, 4]], np.int64)
        upd = np.array([10, 20, 30, 40], np.float32)
        got = run(vkinfer, model(helper.make_node("ScatterND", ["x", "i", "u"], ["y"]),
                                 [("x", F, d3), ("i", I, idx), ("u", F, upd)], [4, 5]),
                  {"x": d3, "i": idx, "u": upd}, tmp)
        want = d3.copy()
        want[1, 2], want[3, 4] = 10, 40
        check("ScatterND skips index tuples with an out-of-range entry", got is not None and np.array_equal(got, want), got)
        # OneHot: an index outside [-depth, depth) gives the off value everywhere
        idx = np.array([1, 7, -1, -9], np.int64)
        depth = np.array(4, np.int64)
        vals = np.array([0, 1], np.float32)
        m = model(helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=-1),
                  [("i", I, idx), ("d", I, depth), ("v", F, vals)], [4, 4], opset=11)
        got = run(vkinfer, m, {"i": idx, "d": depth, "v": vals}, tmp)
        want = np.zeros((4, 4), np.float32)
        want[0, 1], want[2, 3] = 1, 1
        check("OneHot writes the off value for out-of-range indices", got is not None and np.array_equal(got, want), got)
    print(f"{passes} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
