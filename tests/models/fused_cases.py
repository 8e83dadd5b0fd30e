"""Runs ONNX graphs built in a test script through `vkinfer run` with fusion on and with
VKINFER_NO_FUSION=1, compares every output with its numpy reference (within 1e-5, or the case's
own bound, of the larger of 1 and max|ref|) and checks that the fused plan has exactly the expected number of dispatches
fewer. Shared by scatter_slices.py, same_nodes.py and rms_widened.py."""
import os
import re
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import helper


def run(vkinfer, path, inputs, out_dir, no_fusion):
    """(dispatches, {output name: array}) of one `vkinfer run` writing into out_dir (the inputs are
    saved beside the model); raises RuntimeError on failure."""
    cmd = [vkinfer, "run", path, "--output-dir", out_dir]
    for k, v in inputs.items():
        f = os.path.join(os.path.dirname(path), "in_" + k + ".npy")
        np.save(f, v)
        cmd += ["--input", f"{k}={f}"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, VKINFER_NO_FUSION=no_fusion))
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip() or r.stdout.strip())
    outs = {f[:-4]: np.load(os.path.join(out_dir, f)) for f in os.listdir(out_dir) if f.endswith(".npy")}
    return int(re.search(r"plan: (\d+) dispatches", r.stdout).group(1)), outs


def check_cases(vkinfer, cases, opset):
    """cases: name -> (build, fewer) or (build, fewer, rtol), build() -> (GraphProto, {input: array},
    {output: reference}); rtol (default 1e-5) times the larger of 1 and max|ref| bounds the error.
    Prints a PASS/FAIL line per check; returns the number of failures."""
    failed = 0
    for name, (build, fewer, *rtol) in cases.items():
        g, inputs, refs = build()
        counts = []
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.onnx")
            onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)
            for no_fusion in ("0", "1"):
                try:
                    n, outs = run(vkinfer, path, inputs, os.path.join(tmp, "out" + no_fusion), no_fusion)
                except RuntimeError as e:
                    print(f"FAIL {name} (no_fusion={no_fusion}): {e}")
                    failed += 1
                    continue
                missing = [k for k in refs if k not in outs]
                err = max(float(np.abs(outs[k].astype(np.float64) - v).max()) for k, v in refs.items() if k in outs)
                tol = (rtol[0] if rtol else 1e-5) * max(1.0, max(float(np.abs(v).max()) for v in refs.values()))
                ok = not missing and err <= tol
                print(f"{'PASS' if ok else 'FAIL'} {name} (no_fusion={no_fusion}): max abs error {err:.3g}"
                      f"{f', outputs missing: {missing}' if missing else ''}, {n} dispatches")
                failed += not ok
                counts.append(n)
        if len(counts) == 2:
            ok = counts[1] - counts[0] == fewer
            print(f"{'PASS' if ok else 'FAIL'} {name}: {counts[1]} -> {counts[0]} dispatches (expected {fewer} fewer)")
            failed += not ok
    print("PASS" if not failed else f"FAIL ({failed})")
    return failed
