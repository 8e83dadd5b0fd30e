"""Preparation time against graph size: the chain of blocks from ExecuTorch's partitioner
repro (Linear, then a * sigmoid(a) + elu(a)), at 50..N blocks, exported with PyTorch and
planned by vkinfer. Prints plan time per block (linear growth keeps it flat) and checks the
output against PyTorch eager.

    /usr/bin/python3 bench/peers/plan_scaling.py VKINFER [--blocks 50,100,200,400,800]"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "models"))
from torch_export import export_onnx  # noqa: E402


class Blocks(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(32, 32) for _ in range(n))

    def forward(self, x):
        for layer in self.layers:
            a = layer(x)
            x = a * torch.sigmoid(a) + torch.nn.functional.elu(a)
        return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vkinfer")
    ap.add_argument("--blocks", default="50,100,200,400,800")
    args = ap.parse_args()
    ok = True
    print("| blocks | ONNX nodes | dispatches | plan ms | plan ms per block | max abs err vs eager |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(b) for b in args.blocks.split(",")]:
            torch.manual_seed(0)
            model = Blocks(n).eval()
            x = torch.randn(1, 32)
            with torch.no_grad():
                ref = model(x).numpy()
            path = os.path.join(tmp, f"blocks{n}.onnx")
            export_onnx(model, x, path, ["x"], ["y"], 13)
            import onnx
            nodes = len(onnx.load(path).graph.node)
            np.save(os.path.join(tmp, "x.npy"), x.numpy())
            out = os.path.join(tmp, "out")
            run = subprocess.run([args.vkinfer, "run", path, "--input", "x=" + os.path.join(tmp, "x.npy"), "--output-dir", out],
                                 capture_output=True, text=True)
            if run.returncode:
                print(run.stderr, file=sys.stderr)
                return 1
            err = float(np.abs(np.load(os.path.join(out, "y.npy")) - ref).max())
            ok &= err <= 1e-4 * float(np.abs(ref).max()) + 1e-5
            bench = subprocess.run([args.vkinfer, "bench", path, "--input", "x=" + os.path.join(tmp, "x.npy"), "--runs", "3",
                                    "--warmup", "1", "--json"], capture_output=True, text=True, check=True)
            b = json.loads(bench.stdout.strip().splitlines()[-1])
            print(f"| {n} | {nodes} | {b['dispatches']} | {b['plan_ms']:.1f} | {b['plan_ms'] / n:.3f} | {err:.2e} |", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
