"""Products of few rows on matmul_gemv_wide (src/ops/matmul_gemv.c): a weight read 16 bytes an
invocation, along its columns (MatMul's [K, N]) or its rows (Gemm's transB [N, K]), K split
across workgroups (the *_fin kernels, whose last workgroup of a column block adds the slices)
or not, in fp32, fp16 and bf16 storage, with Gemm's alpha, beta, C and a fused Relu. Each case
is an ONNX graph built here (input and output float32, cast to and from the product's dtype)
and run by `vkinfer run` with the GPU kernels (VKINFER_MATMUL_KERNELS=gpu, so that fp32 takes
them on lavapipe too), compared with numpy on the dtype-rounded operands: max|err| <= tol *
max|ref| (fp32 1e-5, fp16 2e-3, bf16 1e-2: the output's rounding). The profile must name the
kernel each case expects; unaligned cases keep matmul_gemv; VKINFER_MM_GEMV_WIDE=0 gives
matmul_gemv and the same numbers.

    gemv_wide.py VKINFER"""
import os
import re
import subprocess
import sys
import tempfile
import zlib

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

F = TensorProto.FLOAT
DTYPES = {"fp32": TensorProto.FLOAT, "fp16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}
TOL = {"fp32": 1e-5, "fp16": 2e-3, "bf16": 1e-2}
ENV = dict(os.environ, VKINFER_MATMUL_KERNELS="gpu")


def rounded(x, dtype):
    """x rounded to dtype's values (float32 array) and its ONNX tensor bytes."""
    x = x.astype(np.float32)
    if dtype == "fp32":
        return x, x
    if dtype == "fp16":
        h = x.astype(np.float16)
        return h.astype(np.float32), h
    u = x.view(np.uint32)
    b = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return (b.astype(np.uint32) << 16).view(np.float32), b


def initializer(name, x, dtype):
    r, raw = rounded(x, dtype)
    t = helper.make_tensor(name, DTYPES[dtype], x.shape, raw.tobytes(), raw=True)
    return r, t


def case(name, dtype, m, k, n, gemm=False, bias=None, relu=False, alpha=1.0, beta=1.0, expect="matmul_gemv_wide_fin"):
    """x[m, k] (float32, cast to dtype) times a weight: MatMul's [k, n], or Gemm's transB [n, k]
    with C ('row': [n], 'full': [m, n]) and alpha, beta; an optional Relu; cast back."""
    rng = np.random.default_rng(zlib.crc32(f"{name} {dtype}".encode()))
    x = rng.standard_normal((m, k), dtype=np.float32)
    xr = rounded(x, dtype)[0]
    inits, nodes = [], [helper.make_node("Cast", ["x"], ["xh"], to=DTYPES[dtype])]
    if gemm:
        w, t = initializer("w", rng.standard_normal((n, k), dtype=np.float32) / np.sqrt(k), dtype)
        inits.append(t)
        ref = alpha * (xr.astype(np.float64) @ w.T.astype(np.float64))
        ins = ["xh", "w"]
        if bias:
            cshape = (n,) if bias == "row" else (m, n)
            cv, ct = initializer("c", rng.standard_normal(cshape, dtype=np.float32), dtype)
            inits.append(ct)
            ref = ref + beta * cv.astype(np.float64)
            ins.append("c")
        nodes.append(helper.make_node("Gemm", ins, ["p"], transB=1, alpha=alpha, beta=beta))
    else:
        w, t = initializer("w", rng.standard_normal((k, n), dtype=np.float32) / np.sqrt(k), dtype)
        inits.append(t)
        ref = xr.astype(np.float64) @ w.astype(np.float64)
        nodes.append(helper.make_node("MatMul", ["xh", "w"], ["p"]))
    last = "p"
    if relu:
        nodes.append(helper.make_node("Relu", ["p"], ["r"]))
        ref = np.maximum(ref, 0)
        last = "r"
    nodes.append(helper.make_node("Cast", [last], ["y"], to=F))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", F, x.shape)],
                          [helper.make_tensor_value_info("y", F, (m, n))], inits)
    return name, dtype, g, x, ref, expect


def cases():
    out = []
    for dt in ("fp32", "fp16", "bf16"):
        out += [
            case("matmul_m1_split", dt, 1, 1024, 512),                      # columns contiguous, K split
            case("matmul_m3_split", dt, 3, 520, 264),                       # a partial column block
            case("matmul_m8_one_slice", dt, 8, 40, 128, expect="matmul_gemv_wide"),  # K under one slice
            case("gemm_m1_split_bias_relu", dt, 1, 2048, 40, gemm=True, bias="row", relu=True, alpha=0.5,
                 beta=2.0),                                                  # rows contiguous, K split
            case("gemm_m5_full_c", dt, 5, 1032, 24, gemm=True, bias="full", beta=-1.0),
            case("gemm_m2_one_slice", dt, 2, 256, 72, gemm=True, bias="row", expect="matmul_gemv_wide"),
            case("matmul_unaligned_n", dt, 2, 64, 30, expect="matmul_gemv"),  # N not whole runs
        ]
    return out


def vk(vkinfer, args, env):
    r = subprocess.run([vkinfer, *args], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"FAIL: vkinfer {' '.join(args)} exited {r.returncode}")
    return r.stdout + r.stderr


def main():
    vkinfer = sys.argv[1]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for name, dtype, g, x, ref, expect in cases():
            path = os.path.join(tmp, f"{name}_{dtype}.onnx")
            save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
            np.save(os.path.join(tmp, "x.npy"), x)
            errs = []
            for label, env in (("wide", ENV), ("off", dict(ENV, VKINFER_MM_GEMV_WIDE="0"))):
                od = os.path.join(tmp, f"out_{label}")
                vk(vkinfer, ["run", path, "--input", f"x={tmp}/x.npy", "--output-dir", od], env)
                got = np.load(os.path.join(od, "y.npy")).astype(np.float64)
                errs.append(float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30)))
                prof = vk(vkinfer, ["bench", path, "--random-inputs", "--profile", "--runs", "1", "--warmup", "0"], env)
                kernels = set(re.findall(r"\bmatmul_gemv\w*", prof))
                want = expect if label == "wide" else "matmul_gemv"
                want = want if dtype == "fp32" else f"{want}_{dtype.replace('fp16', 'f16')}"
                if kernels != {want}:
                    print(f"FAIL {name} {dtype} ({label}): kernels {sorted(kernels)}, expected {want}")
                    ok = False
            good = max(errs) <= TOL[dtype]
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} {name:26} {dtype}: max|err|/max|ref| wide {errs[0]:.4g}, "
                  f"matmul_gemv {errs[1]:.4g} (tol {TOL[dtype]:g}); {expect}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
