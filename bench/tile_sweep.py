#!/usr/bin/env python3
"""GPU time of one fp16 MatMul (B a constant, as a Linear layer's weight) per tensor-core tile
shape, for tuning the tile choice of src/ops/matmul_coopmat.c on a device.

    bench/tile_sweep.py [--vkinfer build/vkinfer] [--shapes 1024x768x3072,...] [--tiles 64x64x32x128,...]
        [--dtype float32 --env VKINFER_TILED_TILE --tiles default,32,64,128] [--transb]

Each shape MxNxK is one ONNX MatMul [M,K] x [K,N] (float16, opset 17; --transb: a Gemm of B
stored [N,K]); each tile is
VKINFER_COOPMAT2_TILE's BMxBNxBKxLOCAL ("default" is the kernel's own choice). Prints the GPU
time of the product's dispatches (split-K's reduce included) from one profiled run (best of
--repeat), TFLOP/s, and the kernels that ran; with torch on CUDA, torch.matmul's GPU time too."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from matmul_bench import build_model, input_flags  # noqa: E402
from onnx import helper  # noqa: E402

DEFAULT_SHAPES = "1024x768x3072,1024x3072x768,1024x2304x768,1024x768x768,4096x4096x4096"
DEFAULT_TILES = "default,64x64x32x128,64x128x32x128,128x64x32x128,128x128x32x128,128x128x32x256,128x128x64x256,64x64x64x128"


def gpu_ms(vkinfer, model, flags, env, repeat):
    best, kernels = None, set()
    for _ in range(repeat):
        r = subprocess.run([vkinfer, "bench", model, "--runs", "3", "--warmup", "3", "--profile-all"] + flags,
                           capture_output=True, text=True, env=dict(os.environ, **env))
        if r.returncode:
            return None, r.stderr.strip().splitlines()[-1:] or ["failed"]
        m = re.search(r"^GPU time:\s+([\d.]+) ms", r.stdout, re.M)
        t = float(m.group(1)) if m else None
        kernels |= set(re.findall(r"^\s+[\d.]+ ms\s+(matmul\S*)", r.stdout, re.M))
        if t is not None and (best is None or t < best):
            best = t
    return best, sorted(kernels)


def torch_ms(M, N, K, dtype_name):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    dtype = getattr(torch, dtype_name)
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    for _ in range(5):
        a @ b
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(20):
        s.record()
        a @ b
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    return float(np.median(ts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vkinfer", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "vkinfer"))
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--tiles", default=DEFAULT_TILES)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dtype", default="float16", choices=["float16", "float32"])
    ap.add_argument("--env", default="VKINFER_COOPMAT2_TILE", help="the variable each tile sets (VKINFER_TILED_TILE: fp32)")
    ap.add_argument("--transb", action="store_true", help="B stored [N,K] (Gemm transB=1, a Linear's weight as exported)")
    ap.add_argument("--batch", type=int, default=0,
                    help="Z > 0: a convolution's product instead, W [M,K] (the constant) x X [Z,K,N] (the input), "
                         "as a 1x1 Conv at batch Z runs it")
    ap.add_argument("--epilogue", default="none", choices=["none", "bias", "bias_relu"],
                    help="an Add of a bias (per column; per row with --batch) and a Relu after the product, "
                         "which the product takes as its epilogue")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        for shape in a.shapes.split(","):
            M, N, K = (int(v) for v in shape.split("x"))
            dt = np.float16 if a.dtype == "float16" else np.float32
            path = os.path.join(tmp, f"mm_{shape}.onnx")
            if a.batch:
                x = (rng.standard_normal((a.batch, K, N)) / np.sqrt(K)).astype(dt)
                w = rng.standard_normal((M, K)).astype(dt)
                nodes = [helper.make_node("MatMul", ["w", "a"], ["p"])]
                bias = rng.standard_normal((M, 1)).astype(dt)
            else:
                x = (rng.standard_normal((M, K)) / np.sqrt(K)).astype(dt)
                w = rng.standard_normal((N, K) if a.transb else (K, N)).astype(dt)
                nodes = [helper.make_node("Gemm", ["a", "w"], ["p"], transB=1) if a.transb
                         else helper.make_node("MatMul", ["a", "w"], ["p"])]
                bias = rng.standard_normal((N,)).astype(dt)
            inits = [("w", w)]
            if a.epilogue != "none":
                nodes.append(helper.make_node("Add", ["p", "bias"], ["q" if a.epilogue == "bias_relu" else "y"]))
                inits.append(("bias", bias))
                if a.epilogue == "bias_relu":
                    nodes.append(helper.make_node("Relu", ["q"], ["y"]))
            else:
                nodes[0].output[0] = "y"
            build_model(path, [("a", x)], nodes, "y", dt, initializers=inits)
            flags = input_flags(tmp, [("a", x)])
            flop = 2.0 * M * N * K * max(a.batch, 1)
            t = None if a.batch else torch_ms(M, N, K, a.dtype)
            if t:
                print(f"{shape} torch {t:.4f} ms {flop / t / 1e9:.1f} TFLOP/s", flush=True)
            for tile in a.tiles.split(","):
                env = {} if tile == "default" else {a.env: tile}
                ms, kernels = gpu_ms(a.vkinfer, path, flags, env, a.repeat)
                rate = f"{flop / ms / 1e9:.1f} TFLOP/s" if ms else "-"
                print(f"{shape} {tile} {ms if ms is not None else '-'} ms {rate} {' '.join(kernels)}", flush=True)


if __name__ == "__main__":
    main()
