"""ScatterND without reduction over many index tuples (more than 64): the three linear passes of
scatter_nd_owned (src/ops/scatter.c) instead of the gather that scans every tuple per element,
for what a masked_scatter exports to (a VLM's image features put into its token sequence: the
tuples from NonZero of a mask at run time, one per element). Each case is an ONNX graph built
here, run by `vkinfer run` and compared exactly with numpy's sequential loop (the last of
duplicate tuples wins), in float32, bfloat16 (cast inside the graph), float16 and int64; the
profile must show the scatter_nd_owned kernels, and a case of 64 tuples keeps scatter_nd.

    scatter_nd_many.py VKINFER"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def reference(data, idx, upd):
    out = data.copy()
    k = idx.shape[-1]
    flat_idx = idx.reshape(-1, k)
    flat_upd = upd.reshape((flat_idx.shape[0],) + data.shape[k:])
    for m in range(flat_idx.shape[0]):
        out[tuple(flat_idx[m])] = flat_upd[m]
    return out


def const_case(name, dtype, shape, k, tuples, rng, dups=True):
    """data (an input) with constant index tuples of length k, some negative, some repeated."""
    data = rng.standard_normal(shape).astype(np.float32)
    idx = np.stack([rng.integers(0, shape[t], tuples) for t in range(k)], axis=-1)
    if dups:
        idx[tuples // 2:tuples // 2 + 8] = idx[:8]  # repeated tuples: the later ones win
    neg = idx.copy()
    neg[::3, 0] -= shape[0]  # negative indices count from the end
    upd = rng.standard_normal((tuples,) + tuple(shape[k:])).astype(np.float32)
    onnx_t = {"fp32": F, "bf16": TensorProto.BFLOAT16, "fp16": TensorProto.FLOAT16, "int64": I64}[dtype]
    if dtype == "int64":
        data, upd = np.round(data * 100).astype(np.int64), np.round(upd * 100).astype(np.int64)
    elif dtype == "fp16":
        data, upd = data.astype(np.float16).astype(np.float32), upd.astype(np.float16).astype(np.float32)
    elif dtype == "bf16":
        data = (data.view(np.uint32) & 0xFFFF0000).view(np.float32)  # exact in bfloat16
        upd = (upd.view(np.uint32) & 0xFFFF0000).view(np.float32)
    io_t = I64 if dtype == "int64" else F
    nodes = []
    if dtype in ("bf16", "fp16"):
        nodes += [helper.make_node("Cast", ["x"], ["xd"], to=onnx_t), helper.make_node("Cast", ["u"], ["ud"], to=onnx_t),
                  helper.make_node("ScatterND", ["xd", "i", "ud"], ["yd"]), helper.make_node("Cast", ["yd"], ["y"], to=F)]
    else:
        nodes += [helper.make_node("ScatterND", ["x", "i", "u"], ["y"])]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", io_t, data.shape),
                                        helper.make_tensor_value_info("u", io_t, upd.shape)],
                          [helper.make_tensor_value_info("y", io_t, data.shape)],
                          [numpy_helper.from_array(neg.astype(np.int64), "i")])
    return g, {"x": data, "u": upd}, reference(data, idx, upd)


def masked_case(rng):
    """masked_scatter as exported: tuples = NonZero(mask) transposed, at run time."""
    shape = (2, 24, 16)
    data = rng.standard_normal(shape).astype(np.float32)
    mask = np.zeros(shape, bool)
    mask[:, 3:19, :] = True
    mask[1, 5, :7] = False
    n = int(mask.sum())
    upd = rng.standard_normal(n).astype(np.float32)
    nodes = [helper.make_node("NonZero", ["m"], ["nz"]), helper.make_node("Transpose", ["nz"], ["i"], perm=[1, 0]),
             helper.make_node("ScatterND", ["x", "i", "u"], ["y"])]
    g = helper.make_graph(nodes, "masked", [helper.make_tensor_value_info("x", F, shape),
                                            helper.make_tensor_value_info("m", TensorProto.BOOL, shape),
                                            helper.make_tensor_value_info("u", F, (n,))],
                          [helper.make_tensor_value_info("y", F, shape)])
    ref = data.copy()
    ref[mask] = upd
    return g, {"x": data, "m": mask, "u": upd}, ref


def vk(vkinfer, args):
    r = subprocess.run([vkinfer, *args], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"FAIL: vkinfer {' '.join(args)} exited {r.returncode}")
    return r.stdout


def main():
    vkinfer = sys.argv[1]
    rng = np.random.default_rng(0)
    cases = []
    for dt in ("fp32", "bf16", "fp16", "int64"):
        cases.append((f"rows_{dt}", const_case("rows", dt, (50, 12), 1, 200, rng), "scatter_nd_owned"))
        cases.append((f"pairs_{dt}", const_case("pairs", dt, (9, 11, 5), 2, 300, rng), "scatter_nd_owned"))
    cases.append(("elements_fp32", const_case("elements", "fp32", (6, 7, 8), 3, 250, rng), "scatter_nd_owned"))
    cases.append(("few_fp32", const_case("few", "fp32", (30, 4), 1, 64, rng), "scatter_nd"))
    cases.append(("masked_fp32", masked_case(rng), "scatter_nd_owned"))
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for name, (g, feeds, ref), kernel in cases:
            path = os.path.join(tmp, f"{name}.onnx")
            save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
            args = []
            for k, v in feeds.items():
                np.save(os.path.join(tmp, f"{k}.npy"), v)
                args += ["--input", f"{k}={tmp}/{k}.npy"]
            vk(vkinfer, ["run", path, *args, "--output-dir", f"{tmp}/out"])
            got = np.load(f"{tmp}/out/y.npy")
            prof = vk(vkinfer, ["bench", path, *args, "--profile", "--runs", "1", "--warmup", "0"])
            kernels = set(k.split("_bf16")[0].split("_f16")[0] for k in re.findall(r"\bscatter_nd\w*", prof))
            exact = got.shape == ref.shape and np.array_equal(got, ref.astype(got.dtype))
            good = exact and kernels == {kernel}
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} {name:14} exact {exact}, kernels {sorted(kernels)} (expected {kernel})")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
