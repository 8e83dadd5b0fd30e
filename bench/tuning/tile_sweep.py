#!/usr/bin/env python3
"""GPU time of one fp16 MatMul (B a constant, as a Linear layer's weight) per tensor-core tile
shape, for tuning the tile choice of src/ops/matmul_coopmat.c on a device.

    bench/tuning/tile_sweep.py [--vkinfer build/vkinfer] [--shapes 1024x768x3072,...] [--tiles 64x64x32x128,...]
        [--dtype float32 --env VKINFER_TILED_TILE --tiles default,32,64,128] [--transb]
        [--dtype bfloat16] [--check] [--env VKINFER_COOPMAT2_EXP --tiles default,dims]

Each shape MxNxK is one ONNX MatMul [M,K] x [K,N] (float16, opset 17; --transb: a Gemm of B
stored [N,K]); each tile is
VKINFER_COOPMAT2_TILE's BMxBNxBKxLOCAL ("default" is the kernel's own choice). Prints the GPU
time of the product's dispatches (split-K's reduce included) from one profiled run (best of
--repeat), TFLOP/s, and the kernels that ran; with torch on CUDA, torch.matmul's GPU time too.
--dtype bfloat16: float32 input and weight cast to bfloat16 in the graph and the product cast
back (the time is the matmul kernels' alone). --check: each tile's product is also compared
with numpy's float32 product of the rounded inputs (max|err|/max|ref| <= 1e-2 passes).
--env names any variable whose values --tiles lists (VKINFER_COOPMAT2_EXP=dims: issue 37's
candidate, src/ops/matmul_coopmat.c)."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))  # matmul_bench
from matmul_bench import build_model, input_flags  # noqa: E402
from onnx import helper  # noqa: E402

DEFAULT_SHAPES = "1024x768x3072,1024x3072x768,1024x2304x768,1024x768x768,4096x4096x4096"
DEFAULT_TILES = "default,64x64x32x128,64x128x32x128,128x64x32x128,128x128x32x128,128x128x32x256,128x128x64x256,64x64x64x128"


def matmul_kernel_ms(report):
    """The summed time of the matmul* kernels in a --profile-all report's "by kernel" table
    (a bfloat16 model's Casts left out), or None where it has none."""
    m = re.search(r"^by kernel:\n((?:  \S.*\n)+)", report, re.M)
    times = re.findall(r"^\s+(matmul\S*)\s+([\d.]+) ms", m.group(1), re.M) if m else []
    return sum(float(t) for _, t in times) if times else None


def gpu_ms(vkinfer, model, flags, env, repeat):
    best, kernels = None, set()
    for _ in range(repeat):
        r = subprocess.run([vkinfer, "bench", model, "--runs", "3", "--warmup", "3", "--profile-all"] + flags,
                           capture_output=True, text=True, env=dict(os.environ, **env))
        if r.returncode:
            return None, r.stderr.strip().splitlines()[-1:] or ["failed"]
        m = re.search(r"^GPU time:\s+([\d.]+) ms", r.stdout, re.M)
        t = matmul_kernel_ms(r.stdout) or (float(m.group(1)) if m else None)
        kernels |= set(re.findall(r"^\s+[\d.]+ ms\s+(matmul\S*)", r.stdout, re.M))
        if t is not None and (best is None or t < best):
            best = t
    return best, sorted(kernels)


def bf16_round(x):
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)


def product_error(vkinfer, model, flags, env, ref, tmp):
    """max|err|/max|ref| of one run's output against ref, or a line of the failure."""
    out = os.path.join(tmp, "out")
    r = subprocess.run([vkinfer, "run", model, "--output-dir", out] + flags, capture_output=True, text=True,
                       env=dict(os.environ, **env))
    if r.returncode:
        return (r.stderr.strip().splitlines() or ["failed"])[-1]
    got = np.load(os.path.join(out, "y.npy")).astype(np.float32)
    if got.shape != ref.shape:
        return f"shape {got.shape} against {ref.shape}"
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))


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
    ap.add_argument("--vkinfer", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "vkinfer"))
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--tiles", default=DEFAULT_TILES)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dtype", default="float16", choices=["float16", "float32", "bfloat16"])
    ap.add_argument("--env", default="VKINFER_COOPMAT2_TILE", help="the variable each tile sets (VKINFER_TILED_TILE: fp32)")
    ap.add_argument("--transb", action="store_true", help="B stored [N,K] (Gemm transB=1, a Linear's weight as exported)")
    ap.add_argument("--batch", type=int, default=0,
                    help="Z > 0: a convolution's product instead, W [M,K] (the constant) x X [Z,K,N] (the input), "
                         "as a 1x1 Conv at batch Z runs it")
    ap.add_argument("--epilogue", default="none", choices=["none", "bias", "bias_relu"],
                    help="an Add of a bias (per column; per row with --batch) and a Relu after the product, "
                         "which the product takes as its epilogue")
    ap.add_argument("--check", action="store_true", help="compare each tile's product with numpy's")
    a = ap.parse_args()
    bf16 = a.dtype == "bfloat16"
    if bf16 and (a.batch or a.epilogue != "none"):
        ap.error("--dtype bfloat16 takes neither --batch nor --epilogue")
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        for shape in a.shapes.split(","):
            M, N, K = (int(v) for v in shape.split("x"))
            dt = np.float16 if a.dtype == "float16" else np.float32  # bfloat16: float32 cast in the graph
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
            if bf16:
                x, w = bf16_round(x), bf16_round(w)
                inits = [("w", w)]
                cast = [helper.make_node("Cast", [n], [n + "_h"], to=TensorProto.BFLOAT16) for n in ("a", "w")]
                nodes = cast + [helper.make_node("Gemm", ["a_h", "w_h"], ["p"], transB=1) if a.transb
                                else helper.make_node("MatMul", ["a_h", "w_h"], ["p"]),
                                helper.make_node("Cast", ["p"], ["y"], to=TensorProto.FLOAT)]
            build_model(path, [("a", x)], nodes, "y", dt, initializers=inits)
            flags = input_flags(tmp, [("a", x)])
            ref = None
            if a.check:
                if a.batch or a.epilogue != "none":
                    ap.error("--check takes neither --batch nor --epilogue")
                ref = x.astype(np.float32) @ (w.T if a.transb else w).astype(np.float32)
            flop = 2.0 * M * N * K * max(a.batch, 1)
            t = None if a.batch else torch_ms(M, N, K, a.dtype)
            if t:
                print(f"{shape} torch {t:.4f} ms {flop / t / 1e9:.1f} TFLOP/s", flush=True)
            for tile in a.tiles.split(","):
                env = {} if tile == "default" else {a.env: tile}
                ms, kernels = gpu_ms(a.vkinfer, path, flags, env, a.repeat)
                rate = f"{flop / ms / 1e9:.1f} TFLOP/s" if ms else "-"
                check = ""
                if ref is not None:
                    err = product_error(a.vkinfer, path, flags, env, ref, tmp)
                    check = f" err {err:.2g} {'ok' if err <= 1e-2 else 'FAIL'}" if isinstance(err, float) else f" err: {err} FAIL"
                print(f"{shape} {tile} {ms if ms is not None else '-'} ms {rate} {' '.join(kernels)}{check}", flush=True)


if __name__ == "__main__":
    main()
