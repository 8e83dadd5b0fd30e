#!/usr/bin/python3
"""`make demo`: MobileNetV2 from PyTorch to ONNX, run by PyTorch eager and by vkinfer, compared.

usage: /usr/bin/python3 tools/demo.py path/to/vkinfer [--runs N] [--warmup N] [--keep DIR]
Seeded random weights (no download), so the comparison is exact-ish and repeatable. Exits
non-zero if vkinfer fails or if max|vkinfer - torch| > 1e-4 * max|torch| + 1e-5.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np


def run(cmd):
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        print(f"demo: vkinfer failed with exit status {p.returncode}", file=sys.stderr)
        sys.exit(1)
    return p.stdout


def export_mobilenet(folder):
    import torch
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v2(weights=None)
    # Freshly initialised BatchNorm statistics (mean 0, var 1) let activations shrink layer
    # after layer until the logits are ~1e-9, which would make any comparison pass. One
    # seeded calibration pass in train mode gives every BatchNorm real statistics, so the
    # logits are O(1) like a trained network's.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = None  # cumulative average over the calibration batch
    with torch.no_grad():
        model.train()(torch.randn(8, 3, 224, 224))
    model.eval()
    image = torch.from_numpy(np.random.default_rng(0).standard_normal((1, 3, 224, 224), dtype=np.float32))
    onnx_path = os.path.join(folder, "mobilenet_v2.onnx")
    with torch.no_grad():
        torch.onnx.export(model, image, onnx_path, opset_version=13, input_names=["input"], output_names=["logits"],
                          do_constant_folding=True)
    return model, image, onnx_path


def time_torch(model, image, warmup, runs):
    import torch

    with torch.no_grad():
        reference = model(image).numpy()
        for _ in range(warmup):
            model(image)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            model(image)
            times.append((time.perf_counter() - t0) * 1e3)
    return reference, float(np.median(times))


def top5(logits):
    flat = logits.reshape(-1)
    idx = np.argsort(-flat, kind="stable")[:5]
    return [(int(i), float(flat[i])) for i in idx]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vkinfer", help="path of the vkinfer binary")
    ap.add_argument("--runs", type=int, default=10, help="timed runs of each engine (default 10)")
    ap.add_argument("--warmup", type=int, default=3, help="warm-up runs of each engine (default 3)")
    ap.add_argument("--keep", metavar="DIR", help="keep the model, input and output in DIR")
    args = ap.parse_args()
    vkinfer = os.path.abspath(args.vkinfer)
    if not os.access(vkinfer, os.X_OK):
        print(f"demo: {vkinfer} is not an executable (build it first: make vkinfer)", file=sys.stderr)
        return 2

    folder = tempfile.mkdtemp(prefix="vkinfer-demo-")
    try:
        print("exporting torchvision mobilenet_v2 (seeded random weights) to ONNX opset 13...", flush=True)
        model, image, onnx_path = export_mobilenet(folder)
        input_path = os.path.join(folder, "input.npy")
        np.save(input_path, image.numpy())
        reference, torch_ms = time_torch(model, image, args.warmup, args.runs)

        out_dir = os.path.join(folder, "out")
        run([vkinfer, "run", onnx_path, "--input", "input=" + input_path, "--output-dir", out_dir])
        result = np.load(os.path.join(out_dir, "logits.npy"))
        bench = json.loads(run([vkinfer, "bench", onnx_path, "--input", "input=" + input_path, "--warmup",
                                str(args.warmup), "--runs", str(args.runs), "--json"]))

        if result.shape != reference.shape:
            print(f"demo: vkinfer's logits have shape {result.shape}, PyTorch's {reference.shape}", file=sys.stderr)
            return 1
        diff = float(np.max(np.abs(result.astype(np.float64) - reference.astype(np.float64))))
        scale = float(np.max(np.abs(reference)))
        tolerance = 1e-4 * scale + 1e-5

        print()
        print("MobileNetV2 [1,3,224,224], seeded random weights and input")
        print(f"{'rank':>4}  {'PyTorch class':>13} {'score':>12}   {'vkinfer class':>13} {'score':>12}")
        for r, ((ti, ts), (vi, vs)) in enumerate(zip(top5(reference), top5(result)), 1):
            print(f"{r:>4}  {ti:>13} {ts:>12.6g}   {vi:>13} {vs:>12.6g}")
        print(f"max |vkinfer - PyTorch| = {diff:.3g} (max |PyTorch| = {scale:.3g}, tolerance {tolerance:.3g})")
        print(f"PyTorch eager (CPU):  median {torch_ms:.2f} ms over {args.runs} runs")
        print(f"vkinfer ({bench['device']}): median {bench['median_ms']:.2f} ms over {bench['runs']} runs "
              f"(p10 {bench['p10_ms']:.2f}, p90 {bench['p90_ms']:.2f}; plan {bench['plan_ms']:.1f} ms, "
              f"{bench['dispatches']} dispatches)")
        if args.keep:
            shutil.copytree(folder, args.keep, dirs_exist_ok=True)
            print(f"kept the model, input and outputs in {args.keep}")
        if not np.isfinite(diff) or diff > tolerance:
            print("demo: FAIL, vkinfer's logits differ from PyTorch's beyond the tolerance", file=sys.stderr)
            return 1
        print("demo: OK, vkinfer matches PyTorch")
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
