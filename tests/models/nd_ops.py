"""GatherND and ScatterND cases ONNX 1.12's node tests lack, against NumPy: ScatterND's max and
min reductions with duplicate indices, and both ops on float16 (their _f16 kernels where the
device has 16-bit storage) and int32 data.

    nd_ops.py VKINFER"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper as h
from onnx_compat import np_dtype_to_tensor_dtype

VKINFER = sys.argv[1]
TMP = tempfile.mkdtemp()
rng = np.random.default_rng(0)
failures = 0


def run(name, node, inputs, want):
    global failures
    vi = lambda n, a: h.make_tensor_value_info(n, np_dtype_to_tensor_dtype(a.dtype), a.shape)
    g = h.make_graph([node], name, [vi(k, v) for k, v in inputs.items()], [vi("y", want)])
    path = os.path.join(TMP, name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 18)]), path)
    cmd = [VKINFER, "run", path, "--output-dir", os.path.join(TMP, name)]
    for k, v in inputs.items():
        np.save(os.path.join(TMP, k + ".npy"), v)
        cmd += ["--input", f"{k}={os.path.join(TMP, k + '.npy')}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print(f"FAIL {name}: {r.stderr.strip()[-300:]}")
        failures += 1
        return
    got = np.load(os.path.join(TMP, name, "y.npy"))
    ok = got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": got {got.ravel()[:8]}, want {want.ravel()[:8]}"))
    failures += not ok


def scatter_nd_ref(data, indices, updates, reduction):
    out = data.copy()
    f = {"none": lambda a, b: b, "add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[reduction]
    for idx in np.ndindex(indices.shape[:-1]):
        at = tuple(indices[idx])
        out[at] = f(out[at], updates[idx])
    return out


for dtype in (np.float32, np.float16, np.int32):
    tag = np.dtype(dtype).name
    data = (rng.standard_normal((4, 5, 6)) * 4).astype(dtype)
    indices = np.array([[1, 2], [3, 0], [1, 2], [0, 4], [3, 0]], np.int64)  # duplicates on purpose
    updates = (rng.standard_normal((5, 6)) * 4).astype(dtype)
    for red in ("add", "mul", "max", "min"):
        run(f"scatternd_{red}_{tag}", h.make_node("ScatterND", ["data", "indices", "updates"], ["y"], reduction=red),
            {"data": data, "indices": indices, "updates": updates}, scatter_nd_ref(data, indices, updates, red))
    # batch_dims 1: per batch, tuples of one index into dimension 1
    gi = np.array([[[1], [4]], [[0], [0]], [[2], [3]], [[4], [1]]], np.int64)
    want = np.stack([data[b][gi[b][:, 0]] for b in range(4)])
    run(f"gathernd_batch1_{tag}", h.make_node("GatherND", ["data", "indices"], ["y"], batch_dims=1),
        {"data": data, "indices": gi}, want)
    gi2 = np.array([[0, 4, 5], [3, -1, 0]], np.int64)  # full tuples, a negative index
    run(f"gathernd_scalars_{tag}", h.make_node("GatherND", ["data", "indices"], ["y"]),
        {"data": data, "indices": gi2}, np.array([data[0, 4, 5], data[3, 4, 0]], dtype))
sys.exit(1 if failures else 0)
