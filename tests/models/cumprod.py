"""CumProd on the GPU against NumPy (ONNX 1.23's node tests of CumProd are float64, which
vkinfer refuses, and int32): float32 and float16, every axis, exclusive and reverse, the axis
as a constant and as a graph input, and X as a constant (folded on the host at plan time).

    cumprod.py VKINFER"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import helper as h
from onnx_compat import np_dtype_to_tensor_dtype

VKINFER = sys.argv[1]
TMP = tempfile.mkdtemp()
rng = np.random.default_rng(0)
failures = 0


def reference(x, axis, exclusive, reverse):
    v = np.flip(x, axis) if reverse else x
    r = np.cumprod(v, axis=axis)
    if exclusive:
        r = np.concatenate([np.ones_like(np.take(r, [0], axis)), np.delete(r, -1, axis)], axis)
    return np.flip(r, axis) if reverse else r


for dtype, tol in ((np.float32, 1e-5), (np.float16, 3e-3)):
    for axis in (0, 1, -1):
        for exclusive in (0, 1):
            for reverse in (0, 1):
                for axis_input in ("const", "input", "folded"):
                    name = f"cumprod_{np.dtype(dtype).name}_axis{axis}_ex{exclusive}_rev{reverse}_{axis_input}"
                    folded = axis_input == "folded"
                    axis_input = axis_input == "input"
                    # values near 1 keep the products in range
                    x = (1 + 0.3 * rng.standard_normal((3, 4, 5))).astype(dtype)
                    want = reference(x.astype(np.float64), axis, exclusive, reverse)
                    t = np_dtype_to_tensor_dtype(np.dtype(dtype))
                    inputs = [] if folded else [h.make_tensor_value_info("x", t, x.shape)]
                    inits = [onnx.numpy_helper.from_array(x, "x")] if folded else []
                    if axis_input:
                        inputs.append(h.make_tensor_value_info("axis", onnx.TensorProto.INT64, []))
                    else:
                        inits.append(h.make_tensor("axis", onnx.TensorProto.INT64, [], [axis]))
                    g = h.make_graph([h.make_node("CumProd", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)],
                                     name, inputs, [h.make_tensor_value_info("y", t, x.shape)], inits)
                    path = os.path.join(TMP, name + ".onnx")
                    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 26)], ir_version=8), path)
                    np.save(os.path.join(TMP, "x.npy"), x)
                    np.save(os.path.join(TMP, "axis.npy"), np.array(axis, dtype=np.int64))
                    args = [VKINFER, "run", path] + ([] if folded else ["--input", "x=" + os.path.join(TMP, "x.npy")])
                    if axis_input:
                        args += ["--input", "axis=" + os.path.join(TMP, "axis.npy")]
                    out = os.path.join(TMP, name)
                    r = subprocess.run(args + ["--output-dir", out], capture_output=True, text=True)
                    if r.returncode:
                        print(f"FAIL {name}: {r.stderr.strip()[-300:]}")
                        failures += 1
                        continue
                    got = np.load(os.path.join(out, "y.npy"))
                    err = float(np.max(np.abs(got.astype(np.float64) - want) / np.maximum(np.abs(want), 1)))
                    ok = got.dtype == dtype and got.shape == x.shape and err <= tol
                    print(("PASS " if ok else "FAIL ") + f"{name}: max error {err:.3g} (relative where |y| > 1)")
                    failures += not ok
sys.exit(1 if failures else 0)
