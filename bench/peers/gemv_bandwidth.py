#!/usr/bin/env python3
"""Batch-1 products (GEMV) against memory bandwidth: how close vkinfer's x @ W at one row comes
to the rate the GPU copies memory, the bound on every batch-1 policy step of a large model.

    python3 bench/peers/gemv_bandwidth.py VKINFER [--dtypes bf16,fp16,fp32] [--runs 20] [--transb]

For each weight shape [K, N] (a VLA's MLP and attention projections, a 2B language model's MLP
and a 257k-token head) and dtype, a one-MatMul ONNX model x[1, K] @ W[K, N] (W an initializer)
runs under `vkinfer bench --profile --json`; the MatMul's GPU time (timestamps) gives the
weight bytes read per second. The reference is a device-to-device copy of 1 GiB timed with
CUDA events by torch (bytes read + bytes written per second), where torch has CUDA, and
vkinfer's own copy kernel on 256 MiB (a Concat of two inputs: every byte read and written
once). Prints a markdown table; the share is of the larger of the two copy rates."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

SHAPES = [(960, 2560), (2560, 960), (2048, 16384), (16384, 2048), (4096, 14336), (2048, 257152)]
ONNX_DTYPE = {"fp32": TensorProto.FLOAT, "fp16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}
SIZE = {"fp32": 4, "fp16": 2, "bf16": 2}


def weight(name, k, n, dtype, rng):
    w = (rng.standard_normal((k, n), dtype=np.float32) / np.sqrt(k)).astype(np.float32)
    if dtype == "fp32":
        raw = w.tobytes()
    elif dtype == "fp16":
        raw = w.astype(np.float16).tobytes()
    else:  # bfloat16: the top half of each float32 (round to nearest even)
        u = w.view(np.uint32)
        raw = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16).tobytes()
    return helper.make_tensor(name, ONNX_DTYPE[dtype], [k, n], raw, raw=True)


def gemv_model(path, k, n, dtype, rng, transb=False):
    """x[1, k] @ W: MatMul of W [k, n], or (transb) Gemm of W [n, k] with transB=1, as a Linear
    layer's weight lies."""
    node = (helper.make_node("Gemm", ["x", "w"], ["y"], transB=1) if transb
            else helper.make_node("MatMul", ["x", "w"], ["y"]))
    g = helper.make_graph([node], "gemv",
                          [helper.make_tensor_value_info("x", ONNX_DTYPE[dtype], [1, k])],
                          [helper.make_tensor_value_info("y", ONNX_DTYPE[dtype], [1, n])],
                          [weight("w", n, k, dtype, rng) if transb else weight("w", k, n, dtype, rng)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path, save_as_external_data=True,
              location=os.path.basename(path) + ".data")


def copy_model(path, elems):
    """y = Concat(a, b) of two float32 inputs of elems / 2 each: every byte read once and written
    once by vkinfer's copy kernel."""
    h = elems // 2
    g = helper.make_graph([helper.make_node("Concat", ["a", "b"], ["y"], axis=0)], "copy",
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, [h]) for n in ("a", "b")],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2 * h])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def profile(vkinfer, path, runs, shape=None):
    cmd = [vkinfer, "bench", path, "--random-inputs", "--runs", str(runs), "--warmup", "3", "--json", "--profile"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip() or r.stdout.strip())
    return json.loads(r.stdout.strip().splitlines()[-1])


def op_ms(b, op):
    ms = b.get("gpu_ms_by_op", {}).get(op)
    if ms is None:
        raise KeyError(f"no {op} in the profile: {b.get('gpu_ms_by_op')}")
    return ms


def torch_copy_gbps():
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    src = torch.empty(2**28, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(20):
        start.record()
        dst.copy_(src)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return 2 * src.numel() * 4 / (np.median(times) * 1e-3) / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("vkinfer")
    ap.add_argument("--dtypes", default="bf16,fp16,fp32")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--shapes", help="KxN,KxN... (default: the list in the source)")
    ap.add_argument("--transb", action="store_true", help="Gemm with W [N, K] and transB=1 (a Linear's weight) "
                    "instead of MatMul with W [K, N]")
    a = ap.parse_args()
    shapes = [tuple(map(int, s.split("x"))) for s in a.shapes.split(",")] if a.shapes else SHAPES
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "copy.onnx")
        copy_model(path, 2**26)
        b = profile(a.vkinfer, path, a.runs)
        copy_ms = op_ms(b, "Concat")
        vk_copy = 2 * 2**26 * 4 / (copy_ms * 1e-3) / 1e9
        ref = torch_copy_gbps()
        print(f"device: {b.get('device')}")
        print(f"copy bandwidth (read + write): vkinfer's copy kernel {vk_copy:.0f} GB/s"
              + (f", torch device-to-device copy {ref:.0f} GB/s" if ref else ""))
        best = max(vk_copy, ref or 0)
        print()
        print("| W [K, N] | dtype | MiB | MatMul GPU ms | GB/s | of copy bandwidth |")
        print("|---|---|---|---|---|---|")
        for k, n in shapes:
            for dt in a.dtypes.split(","):
                path = os.path.join(tmp, f"gemv_{k}_{n}_{dt}.onnx")
                gemv_model(path, k, n, dt, rng, a.transb)
                try:
                    b = profile(a.vkinfer, path, a.runs)
                except RuntimeError as e:
                    print(f"| {k}x{n} | {dt} | | failed: {str(e)[:100]} | | |")
                    continue
                ms = op_ms(b, "Gemm" if a.transb else "MatMul")
                mib = k * n * SIZE[dt] / 2**20
                gbps = k * n * SIZE[dt] / (ms * 1e-3) / 1e9
                print(f"| {k}x{n} | {dt} | {mib:.0f} | {ms:.3f} | {gbps:.0f} | {100 * gbps / best:.0f}% |",
                      flush=True)
                os.remove(path)
                os.remove(path + ".data")


if __name__ == "__main__":
    sys.exit(main())
