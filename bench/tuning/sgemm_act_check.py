#!/usr/bin/env python3
"""GPU time of a Linear whose activation the float32 product takes as its epilogue, per
matmul_sgemm tile and register block: a fused erf GELU on 64 sums an invocation once ran 15x
slower than on 32 (src/ops/matmul_record.c, sgemm_choose).

    bench/tuning/sgemm_act_check.py VKINFER [--rows 1024,4096] [--act gelu,relu,none]
        [--tiles default,128x128,64x128,64x128x8x8]

Each case is nn.Linear(768, 3072) (+ the activation) on [rows, 768], exported with the
TorchScript exporter at opset 17; prints the GPU ms of the whole graph (its product's
dispatches: the activation is fused; best of 2 profiled runs) per VKINFER_SGEMM_TILE value."""
import argparse
import os
import sys
import tempfile

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "models"))
sys.path.insert(0, HERE)  # bench/tuning/tile_sweep.py
from tile_sweep import gpu_ms  # noqa: E402  (GPU ms of one profiled run, best of `repeat`)
from torch_export import export_onnx  # noqa: E402

ACTS = {"gelu": nn.GELU, "relu": nn.ReLU, "none": nn.Identity}


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
                    env = {} if tile == "default" else {"VKINFER_SGEMM_TILE": tile}
                    ms, _ = gpu_ms(a.vkinfer, path, ["--random-inputs"], env, 2)
                    rate = f"{2 * rows * 768 * 3072 / ms / 1e9:.1f} TFLOP/s" if ms else "-"
                    print(f"rows {rows} {act} {tile}: {ms if ms is not None else 'failed'} ms {rate}", flush=True)


if __name__ == "__main__":
    main()
