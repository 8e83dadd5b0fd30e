#!/usr/bin/env python3
"""GPU time of a Linear whose activation the float32 product takes as its epilogue, per
matmul_sgemm tile and register block: a fused erf GELU on 64 sums an invocation once ran 15x
slower than on 32 (src/ops/matmul.c, sgemm_choose).

    bench/sgemm_act_check.py VKINFER [--rows 1024,4096] [--act gelu,relu,none]
        [--tiles default,128x128,64x128,64x128x8x8]

Each case is nn.Linear(768, 3072) (+ the activation) on [rows, 768], exported with the
TorchScript exporter at opset 17; prints the GPU ms of its product's dispatches (best of 2
profiled runs) per VKINFER_SGEMM_TILE value."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))
from torch_export import export_onnx  # noqa: E402

ACTS = {"gelu": nn.GELU, "relu": nn.ReLU, "none": nn.Identity}


def product_ms(vkinfer, path, tile):
    env = dict(os.environ)
    if tile != "default":
        env["VKINFER_SGEMM_TILE"] = tile
    best = None
    for _ in range(2):
        r = subprocess.run([vkinfer, "bench", path, "--random-inputs", "--runs", "3", "--warmup", "3", "--profile-all"],
                           capture_output=True, text=True, env=env)
        if r.returncode:
            return None
        t = sum(float(m) for m in re.findall(r"^\s+\d+\s+([\d.]+) ms\s+matmul", r.stdout, re.M))
        best = t if best is None or t < best else best
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vkinfer")
    ap.add_argument("--rows", default="1024,4096")
    ap.add_argument("--act", default="gelu,relu,none")
    ap.add_argument("--tiles", default="default,128x128,64x128,64x128x8x8")
    a = ap.parse_args()
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        for rows in (int(r) for r in a.rows.split(",")):
            for act in a.act.split(","):
                model = nn.Sequential(nn.Linear(768, 3072), ACTS[act]()).eval()
                path = os.path.join(tmp, f"linear_{rows}_{act}.onnx")
                export_onnx(model, (torch.randn(rows, 768),), path, ["in0"], ["out"], 17)
                for tile in a.tiles.split(","):
                    ms = product_ms(a.vkinfer, path, tile)
                    rate = f"{2 * rows * 768 * 3072 / ms / 1e9:.1f} TFLOP/s" if ms else "-"
                    print(f"rows {rows} {act} {tile}: {ms if ms is not None else 'failed'} ms {rate}", flush=True)


if __name__ == "__main__":
    main()
