#!/usr/bin/env python3
"""Where the time goes, model by model: exports the models of bench/peers/gpu_peers.py (same seeded
weights, TorchScript exporter, opset 17) and runs `vkinfer bench --profile` on each, printing
its per-op and per-kernel GPU time, slowest dispatches and the share of the run outside the
GPU's span.

    python3 bench/tuning/gpu_profile.py VKINFER [--models efficientnet_b0_b1,...] [--runs 30]
        [--warmup 5] [--precision fp16] [--all] [--keep DIR]

--precision fp16 profiles the fp16 mode; --all adds every dispatch in recorded order."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "models"))
sys.path.insert(0, os.path.join(HERE, "..", "peers"))  # gpu_peers
from torch_export import export_onnx  # noqa: E402
from gpu_peers import DEFAULT, as_tuple, build  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vkinfer")
    ap.add_argument("--models", default=DEFAULT)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--precision")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--keep", help="export into KEEP/NAME/ (m.onnx, in0.npy...) and reuse what is there")
    a = ap.parse_args()
    rc = 0
    for name in a.models.split(","):
        model, inputs = build(name)
        model.eval()
        inputs = as_tuple(inputs)
        with tempfile.TemporaryDirectory() as tmp:
            if a.keep:
                tmp = os.path.join(a.keep, name)
                os.makedirs(tmp, exist_ok=True)
            path = os.path.join(tmp, "m.onnx")
            names = [f"in{i}" for i in range(len(inputs))]
            if not os.path.exists(path):
                export_onnx(model, inputs, path, names, ["out"], 17)
            cmd = [a.vkinfer, "bench", path, "--runs", str(a.runs), "--warmup", str(a.warmup),
                   "--profile-all" if a.all else "--profile"]
            if a.precision:
                cmd += ["--precision", a.precision]
            for n, t in zip(names, inputs):
                p = os.path.join(tmp, n + ".npy")
                np.save(p, t.numpy())
                cmd += ["--input", f"{n}={p}"]
            r = subprocess.run(cmd, capture_output=True, text=True)
        print(f"=== {name}" + (f" ({a.precision})" if a.precision else ""), flush=True)
        print("\n".join(line for line in r.stdout.splitlines() if not line.startswith(("model:", "load:"))))
        if r.returncode:
            print(r.stderr[-800:])
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
