#!/usr/bin/env python3
"""MatMul speed and correctness of vkinfer's kernels (matmul_coopmat_f16 on tensor cores,
matmul_tiled[_f16] elsewhere), side by side with torch where it has CUDA.

    bench/peers/matmul_bench.py [--vkinfer build/vkinfer] [--runs 20] [--check] [--only NAME]

Default: benchmark. For each product (M=N=K=4096 in fp16 and fp32, [563,512]x[512,512] in fp16
and fp32, BERT-base's [8*128,768]x[768,3072] in fp16) it builds a one-MatMul ONNX model
(onnx.helper, opset 17), runs `vkinfer bench --json --profile` on seeded inputs and prints the
GPU time of the MatMul's dispatches (timestamps, one profiled run) with its TFLOP/s, the
host-to-host median of whole runs, and the kernels that ran; fp16 products run again with
VKINFER_DISABLE_FEATURES=coopmat (the scalar kernel) for comparison. Where torch has CUDA it
times torch.matmul on the same inputs: host to host (upload, product, download) and GPU time
(CUDA events, median). vkinfer's result is checked against torch's (or numpy's) fp32 product:
fp16 max|err| <= 2e-2 * max|ref| (inputs: normal, A scaled by 1/sqrt(K)), fp32 1e-3.

--check: correctness of the cooperative-matrix kernels on awkward products: M, N, K not
multiples of the tiles (with and without rows of 8 halves, the aligned kernel's condition), batched and broadcast MatMul, Gemm with transB=1 / transA=1 and a C
bias with alpha and beta, split K, a fused Relu, a fused bias + erf-GELU, 128 tiles with ragged edges, and an fp32 model
in the fp16 mode (fp32 words out). Each is compared with numpy in fp32 on the fp16-rounded
inputs (max|err| <= 5e-3 * max|ref|), and where `vkinfer devices` reports cooperative
matrices every product must run a matmul_coopmat_* kernel (and no matmul_tiled). Exit status 1 on any failure.
VKINFER_COOPMAT=khr in the environment runs the KHR aligned kernel where the device has both
extensions (NV is the default there; src/vk/device.c).

Needs only python3, numpy and onnx (torch optional)."""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

ONNX_DT = {np.float16: TensorProto.FLOAT16, np.float32: TensorProto.FLOAT}


def build_model(path, inputs, nodes, output, out_dtype, initializers=()):
    """inputs: [(name, array)] graph inputs; initializers: [(name, array)]; nodes: onnx nodes
    ending in `output`."""
    vi = [helper.make_tensor_value_info(n, ONNX_DT[a.dtype.type], list(a.shape)) for n, a in inputs]
    inits = [numpy_helper.from_array(a, n) for n, a in initializers]
    out = helper.make_tensor_value_info(output, ONNX_DT[out_dtype], None)
    graph = helper.make_graph(nodes, "matmul_bench", vi, [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # readable by onnx 1.12 and later
    save(model, path)


def vk(args, cmd, env=None):
    run = subprocess.run([args.vkinfer] + cmd, capture_output=True, text=True,
                         env=dict(os.environ, **(env or {})))
    if run.returncode != 0:
        raise RuntimeError(f"vkinfer {' '.join(cmd)} exited {run.returncode}:\n{run.stdout}\n{run.stderr}")
    return run.stdout


def input_flags(tmp, inputs):
    flags = []
    for n, a in inputs:
        p = os.path.join(tmp, n + ".npy")
        np.save(p, a)
        flags += ["--input", f"{n}={p}"]
    return flags


def run_vkinfer(args, tmp, model, inputs, env=None, precision=None):
    out_dir = os.path.join(tmp, "out")
    cmd = ["run", model, "--output-dir", out_dir] + input_flags(tmp, inputs)
    if precision:
        cmd += ["--precision", precision]
    vk(args, cmd, env)
    return np.load(os.path.join(out_dir, "y.npy"))


def matmul_kernels(args, tmp, model, inputs, env=None, precision=None):
    """The shaders of the MatMul/Gemm dispatches, from one profiled run's text report."""
    cmd = ["bench", model, "--runs", "1", "--warmup", "0", "--profile"] + input_flags(tmp, inputs)
    if precision:
        cmd += ["--precision", precision]
    out = vk(args, cmd, env)
    return sorted(set(m.group(1) for m in re.finditer(r"^\s+[\d.]+ ms\s+(\S+)\s+(MatMul|Gemm)\b", out, re.M)))


def has_coopmat(args):
    """Whether the default device ('*' in `vkinfer devices`) reports cooperative matrices."""
    blocks = re.split(r"\n(?=[* ] \d+: )", "\n" + vk(args, ["devices"]))
    default = [blk for blk in blocks if blk.startswith("* ")]
    return bool(default) and "cooperative matrix: yes" in default[0]


def rel_err(got, ref):
    ref = np.asarray(ref, np.float64)
    return float(np.max(np.abs(got.astype(np.float64) - ref)) / max(np.max(np.abs(ref)), 1e-30))


# ---------------------------------------------------------------------------- benchmark

BENCH = [  # name, M, N, K, dtype
    ("4096_f16", 4096, 4096, 4096, np.float16),
    ("4096_f32", 4096, 4096, 4096, np.float32),
    ("563x512x512_f16", 563, 512, 512, np.float16),
    ("563x512x512_f32", 563, 512, 512, np.float32),
    ("bert_1024x3072x768_f16", 1024, 3072, 768, np.float16),
]


def torch_times(a, b, runs):
    import torch
    if not torch.cuda.is_available():
        return None
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    da, db = ta.cuda(), tb.cuda()
    for _ in range(3):
        (ta.cuda() @ tb.cuda()).cpu()
    host = []
    for _ in range(runs):
        t0 = time.perf_counter()
        y = (ta.cuda() @ tb.cuda()).cpu()
        host.append((time.perf_counter() - t0) * 1e3)
    gpu = []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(runs):
        start.record()
        da @ db
        end.record()
        end.synchronize()
        gpu.append(start.elapsed_time(end))
    return float(np.median(host)), float(np.median(gpu)), y.float().numpy()


def bench(args):
    try:
        import torch
        cuda = torch.cuda.is_available()
        ref_note = "torch (CUDA)" if cuda else "numpy"
    except ImportError:
        cuda, ref_note = False, "numpy"
    print(f"reference: {ref_note}; coopmat on this device: {has_coopmat(args)}")
    header = f"{'product':30} {'kernels':44} {'GPU ms':>8} {'TFLOP/s':>8} {'h2h ms':>8}  check"
    print(header)
    ok = True
    rng = np.random.default_rng(0)
    for name, M, N, K, dt in BENCH:
        if args.only and args.only not in name:
            continue
        a = (rng.standard_normal((M, K)) / np.sqrt(K)).astype(dt)
        b = rng.standard_normal((K, N)).astype(dt)
        flop = 2.0 * M * N * K
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "m.onnx")
            build_model(model, [("a", a), ("b", b)], [helper.make_node("MatMul", ["a", "b"], ["y"])], "y", dt)
            ref64 = a.astype(np.float64) @ b.astype(np.float64)
            got = run_vkinfer(args, tmp, model, [("a", a), ("b", b)])
            err = rel_err(got, ref64)
            bound = 2e-2 if dt == np.float16 else 1e-3
            ok &= err <= bound
            variants = [("", {})] + ([(" (coopmat off)", {"VKINFER_DISABLE_FEATURES": "coopmat"})] if dt == np.float16 else [])
            for label, env in variants:
                js = vk(args, ["bench", model, "--json", "--profile", "--runs", str(args.runs), "--warmup", "3"]
                        + input_flags(tmp, [("a", a), ("b", b)]), env)
                res = json.loads(js[js.index("{"):])
                gpu_ms = res.get("gpu_ms_by_op", {}).get("MatMul", float("nan"))
                kernels = ",".join(matmul_kernels(args, tmp, model, [("a", a), ("b", b)], env))
                check = f"max|err|/max|ref| {err:.2g} (<= {bound:g}) {'ok' if err <= bound else 'FAIL'}" if not label else ""
                print(f"{name + label:30} {kernels:44} {gpu_ms:8.3f} {flop / gpu_ms / 1e9:8.2f} "
                      f"{res['median_ms']:8.3f}  {check}")
            if cuda:
                h2h, gpu, y = torch_times(a, b, args.runs)
                terr = rel_err(got, y.astype(np.float64))
                print(f"{name + ' (torch)':30} {'torch.matmul':44} {gpu:8.3f} {flop / gpu / 1e9:8.2f} {h2h:8.3f}  "
                      f"vkinfer vs torch: {terr:.2g}")
    return ok


# ---------------------------------------------------------------------------- --check

def f16(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float16)


def check_cases(rng):
    """(name, inputs, initializers, nodes, reference(inputs, inits) in float64, precision)"""
    def mm(a, b):
        return np.matmul(a.astype(np.float64), b.astype(np.float64))

    cases = []
    for M, N, K in [(200, 72, 130), (65, 129, 100), (64, 64, 64), (2050, 2100, 300)]:
        a, b = f16(rng, (M, K), K ** -0.5), f16(rng, (K, N))
        cases.append((f"matmul_{M}x{N}x{K}", [("a", a), ("b", b)], [], [helper.make_node("MatMul", ["a", "b"], ["y"])],
                      lambda i, w: mm(i[0][1], i[1][1]), None))
    a, b = f16(rng, (3, 100, 80), 80 ** -0.5), f16(rng, (3, 80, 96))
    cases.append(("matmul_batched_3x100x96x80", [("a", a), ("b", b)], [], [helper.make_node("MatMul", ["a", "b"], ["y"])],
                  lambda i, w: mm(i[0][1], i[1][1]), None))
    a, b = f16(rng, (2, 3, 70, 64), 0.125), f16(rng, (64, 90))
    cases.append(("matmul_broadcast_2x3x70x90x64", [("a", a), ("b", b)], [], [helper.make_node("MatMul", ["a", "b"], ["y"])],
                  lambda i, w: mm(i[0][1], i[1][1]), None))
    a, b = f16(rng, (64, 4096), 4096 ** -0.5), f16(rng, (4096, 72))
    cases.append(("matmul_splitk_64x72x4096", [("a", a), ("b", b)], [], [helper.make_node("MatMul", ["a", "b"], ["y"])],
                  lambda i, w: mm(i[0][1], i[1][1]), None))
    a, b = f16(rng, (128, 256), 1 / 16), f16(rng, (256, 192))
    cases.append(("matmul_relu_fused_128x192x256", [("a", a), ("b", b)], [],
                  [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Relu", ["p"], ["y"])],
                  lambda i, w: np.maximum(mm(i[0][1], i[1][1]), 0), None))
    # bias Add and erf-GELU (the TorchScript exporter's five nodes) in the product's epilogue
    a, b, cv = f16(rng, (256, 256), 1 / 16), f16(rng, (256, 512)), f16(rng, (512,))
    half, sqrt2 = np.array(0.5, np.float16), np.array(np.sqrt(2.0), np.float16)
    one = np.array(1.0, np.float16)
    erf = np.vectorize(math.erf)
    cases.append(("matmul_bias_gelu_fused_256x512x256", [("a", a), ("b", b), ("c", cv)],
                  [("half", half), ("sqrt2", sqrt2), ("one", one)],
                  [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Add", ["p", "c"], ["x"]),
                   helper.make_node("Div", ["x", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
                   helper.make_node("Add", ["e", "one"], ["f"]), helper.make_node("Mul", ["x", "f"], ["g"]),
                   helper.make_node("Mul", ["g", "half"], ["y"])],
                  lambda i, w: (lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2.0))))(
                      mm(i[0][1], i[1][1]) + i[2][1].astype(np.float64)), None))
    for M, N, K in [(150, 120, 100), (2048, 2100, 200)]:
        a, b, cv = f16(rng, (M, K), K ** -0.5), f16(rng, (N, K)), f16(rng, (N,))
        cases.append((f"gemm_transB_bias_{M}x{N}x{K}", [("a", a), ("b", b), ("c", cv)], [],
                      [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
                      lambda i, w: 0.5 * mm(i[0][1], i[1][1].T) + 2.0 * i[2][1].astype(np.float64), None))
    a, b, cv = f16(rng, (100, 150), 0.1), f16(rng, (100, 120)), f16(rng, (150, 120))
    cases.append(("gemm_transA_matrixC_150x120x100", [("a", a), ("b", b), ("c", cv)], [],
                  [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1)],
                  lambda i, w: mm(i[0][1].T, i[1][1]) + i[2][1].astype(np.float64), None))
    # rows of 8 halves: matmul_coopmat_f16_aligned, with ragged M/N/K, transA, a full-tile Relu,
    # a batch and fp32 words out
    a, b = f16(rng, (563, 264), 264 ** -0.5), f16(rng, (264, 520))
    cases.append(("matmul_aligned_ragged_563x520x264", [("a", a), ("b", b)], [],
                  [helper.make_node("MatMul", ["a", "b"], ["y"])], lambda i, w: mm(i[0][1], i[1][1]), None))
    a, b = f16(rng, (2, 256, 72), 72 ** -0.5), f16(rng, (2, 72, 200))
    cases.append(("matmul_aligned_batched_2x256x200x72", [("a", a), ("b", b)], [],
                  [helper.make_node("MatMul", ["a", "b"], ["y"])], lambda i, w: mm(i[0][1], i[1][1]), None))
    a, b = f16(rng, (1024, 256), 1 / 16), f16(rng, (256, 1024))
    cases.append(("matmul_aligned_relu_1024x1024x256", [("a", a), ("b", b)], [],
                  [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Relu", ["p"], ["y"])],
                  lambda i, w: np.maximum(mm(i[0][1], i[1][1]), 0), None))
    a, b, cv = f16(rng, (96, 136), 0.1), f16(rng, (96, 120)), f16(rng, (136, 120))
    cases.append(("gemm_aligned_transA_matrixC_136x120x96", [("a", a), ("b", b), ("c", cv)], [],
                  [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, alpha=0.5)],
                  lambda i, w: 0.5 * mm(i[0][1].T, i[1][1]) + i[2][1].astype(np.float64), None))
    a, b = f16(rng, (300, 128), 128 ** -0.5), f16(rng, (264, 128))
    cases.append(("gemm_aligned_transB_300x264x128", [("a", a), ("b", b)], [],
                  [helper.make_node("Gemm", ["a", "b"], ["y"], transB=1)],
                  lambda i, w: mm(i[0][1], i[1][1].T), None))
    x, wt = rng.standard_normal((96, 200)).astype(np.float32), (rng.standard_normal((200, 128)) / 10).astype(np.float32)
    cases.append(("fp16_mode_aligned_fp32_out_96x128x200", [("x", x)], [("w", wt)],
                  [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("MatMul", ["r", "w"], ["y"])],
                  lambda i, w: mm(np.maximum(i[0][1], 0).astype(np.float16), w[0][1].astype(np.float16)), "fp16"))
    # an fp32 model in the fp16 mode: weights and the Relu's output held as halves, the graph
    # output as fp32 words (OUT_WORDS)
    x, wt = rng.standard_normal((96, 200)).astype(np.float32), (rng.standard_normal((200, 130)) / 10).astype(np.float32)
    cases.append(("fp16_mode_fp32_out_96x130x200", [("x", x)], [("w", wt)],
                  [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("MatMul", ["r", "w"], ["y"])],
                  lambda i, w: mm(np.maximum(i[0][1], 0).astype(np.float16), w[0][1].astype(np.float16)), "fp16"))
    # bfloat16 products (matmul_coopmat2_bf16 where the device has VK_KHR_shader_bfloat16's
    # cooperative matrices, else matmul_tiled_bf16): float32 inputs cast to bfloat16 in the
    # graph, the product cast back; the reference multiplies the bfloat16-rounded inputs
    def bf(x):
        u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
        return ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)

    def casts(names, body):
        return [helper.make_node("Cast", [n], [n + "_h"], to=TensorProto.BFLOAT16) for n in names] + body + \
               [helper.make_node("Cast", ["p"], ["y"], to=TensorProto.FLOAT)]

    def f32(shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    for M, N, K in [(200, 72, 130), (2050, 2100, 300)]:
        a, b = f32((M, K), K ** -0.5), f32((K, N))
        cases.append((f"bf16_matmul_{M}x{N}x{K}", [("a", a), ("b", b)], [],
                      casts(["a", "b"], [helper.make_node("MatMul", ["a_h", "b_h"], ["p"])]),
                      lambda i, w: mm(bf(i[0][1]), bf(i[1][1])), "bf16"))
    a, b = f32((3, 100, 80), 80 ** -0.5), f32((3, 80, 96))
    cases.append(("bf16_matmul_batched_3x100x96x80", [("a", a), ("b", b)], [],
                  casts(["a", "b"], [helper.make_node("MatMul", ["a_h", "b_h"], ["p"])]),
                  lambda i, w: mm(bf(i[0][1]), bf(i[1][1])), "bf16"))
    a, b, cv = f32((150, 100), 0.1), f32((120, 100)), f32((120,))
    cases.append(("bf16_gemm_transB_bias_150x120x100", [("a", a), ("b", b), ("c", cv)], [],
                  casts(["a", "b", "c"], [helper.make_node("Gemm", ["a_h", "b_h", "c_h"], ["p"], transB=1, alpha=0.5, beta=2.0)]),
                  lambda i, w: 0.5 * mm(bf(i[0][1]), bf(i[1][1]).T) + 2.0 * bf(i[2][1]).astype(np.float64), "bf16"))
    return cases


def check(args):
    coop = has_coopmat(args)
    print(f"cooperative matrices on this device: {coop} "
          f"({'a matmul_coopmat kernel must run' if coop else 'only the scalar kernels can be checked here'})")
    rng = np.random.default_rng(1)
    ok = True
    for name, inputs, inits, nodes, ref_fn, precision in check_cases(rng):
        if args.only and args.only not in name:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "m.onnx")
            out_dt = np.float32 if precision else np.float16
            build_model(model, inputs, nodes, "y", out_dt, inits)
            ref = ref_fn(inputs, inits)
            bf16 = precision == "bf16"  # a bfloat16 model, not a precision mode
            mode = None if bf16 else precision
            try:
                got = run_vkinfer(args, tmp, model, inputs, precision=mode)
                kernels = matmul_kernels(args, tmp, model, inputs, precision=mode)
            except RuntimeError as e:
                print(f"FAIL {name}: {e}")
                ok = False
                continue
            err = rel_err(got, ref) if got.shape == ref.shape else float("inf")
            # split K adds matmul_splitk_reduce_f16; nothing may fall back to matmul_tiled
            coop_ran = any(k.startswith("matmul_coopmat") for k in kernels) and not any(k.startswith("matmul_tiled") for k in kernels)
            # bfloat16: 8 bits of mantissa in Y; its kernel is printed, not required (the
            # device report does not say whether bfloat16 cooperative matrices exist)
            bound = 1e-2 if bf16 else 5e-3
            good = err <= bound and (bf16 or not coop or coop_ran)
            ok &= good
            print(f"{'PASS' if good else 'FAIL'} {name:34} max|err|/max|ref| {err:.2g} (<= {bound:g})  kernels {','.join(kernels)}")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vkinfer", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "vkinfer"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--check", action="store_true", help="correctness of the cooperative-matrix kernel instead")
    ap.add_argument("--only", help="only the cases whose name contains this")
    args = ap.parse_args()
    ok = check(args) if args.check else bench(args)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
