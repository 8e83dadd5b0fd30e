"""LpNormalization (no node test in ONNX 1.12's data) against NumPy: p = 1 and 2, several
axes, a zero vector, float32 and float16.

    lp_normalization.py VKINFER"""
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

for dtype, tol in ((np.float32, 1e-6), (np.float16, 2e-3)):
    for p in (1, 2):
        for axis in (-1, 0, 1):
            name = f"lpnorm_p{p}_axis{axis}_{np.dtype(dtype).name}"
            x = rng.standard_normal((3, 4, 5)).astype(dtype)
            x[1, :, 2] = 0  # a zero vector along axis 1 stays zero
            ref = x.astype(np.float64)
            norm = np.sum(np.abs(ref), axis=axis, keepdims=True) if p == 1 else np.sqrt(np.sum(ref * ref, axis=axis, keepdims=True))
            want = np.where(norm != 0, ref / np.where(norm != 0, norm, 1), 0)
            t = np_dtype_to_tensor_dtype(np.dtype(dtype))
            g = h.make_graph([h.make_node("LpNormalization", ["x"], ["y"], axis=axis, p=p)], name,
                             [h.make_tensor_value_info("x", t, x.shape)], [h.make_tensor_value_info("y", t, x.shape)])
            path = os.path.join(TMP, name + ".onnx")
            onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path)
            np.save(os.path.join(TMP, "x.npy"), x)
            out = os.path.join(TMP, name)
            r = subprocess.run([VKINFER, "run", path, "--input", "x=" + os.path.join(TMP, "x.npy"), "--output-dir", out],
                               capture_output=True, text=True)
            if r.returncode:
                print(f"FAIL {name}: {r.stderr.strip()[-300:]}")
                failures += 1
                continue
            got = np.load(os.path.join(out, "y.npy"))
            err = float(np.max(np.abs(got.astype(np.float64) - want)))
            ok = got.dtype == dtype and got.shape == x.shape and err <= tol
            print(("PASS " if ok else "FAIL ") + f"{name}: max abs error {err:.3g}")
            failures += not ok
sys.exit(1 if failures else 0)
