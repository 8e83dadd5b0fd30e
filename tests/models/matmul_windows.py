"""Batched MatMul whose operands are larger than one binding (VKINFER_MAX_BINDING_BYTES=8192)
runs as windows of consecutive batches: the same numbers as without the limit, in more
dispatches. A 2-D product whose constant B is larger than a binding (a classifier head) runs as
blocks of B's columns cut at plan time, with a Gemm's bias and a fused Relu; a single product
whose B is a graph input larger than a binding is a clear error.

    matmul_windows.py VKINFER"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto as T
from onnx import helper as h

VKINFER = sys.argv[1]
TMP = tempfile.mkdtemp()
results = []


def run(path, limit, inputs=("a", "b")):
    env = dict(os.environ)
    env.pop("VKINFER_MAX_BINDING_BYTES", None)
    if limit:
        env["VKINFER_MAX_BINDING_BYTES"] = str(limit)
    out = os.path.join(TMP, "out")
    flags = []
    for name in inputs:
        flags += ["--input", f"{name}=" + os.path.join(TMP, name + ".npy")]
    r = subprocess.run([VKINFER, "run", path, *flags, "--output-dir", out], capture_output=True, text=True, env=env)
    if r.returncode:
        return None, 0, r.stderr.strip()
    dispatches = int([line for line in r.stdout.splitlines() if line.startswith("plan:")][0].split()[1])
    return np.load(os.path.join(out, "y.npy")), dispatches, ""


def case(name, ashape, bshape, transpose_b=False):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(ashape).astype(np.float32)
    b = rng.standard_normal(bshape).astype(np.float32)
    nodes = [h.make_node("MatMul", ["a", "bt" if transpose_b else "b"], ["y"])]
    ref = a @ (np.swapaxes(b, -1, -2) if transpose_b else b)
    if transpose_b:  # B walked with strides (a transposed view)
        perm = list(range(len(bshape)))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        nodes.insert(0, h.make_node("Transpose", ["b"], ["bt"], perm=perm))
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("a", T.FLOAT, ashape), h.make_tensor_value_info("b", T.FLOAT, bshape)],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    path = os.path.join(TMP, name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    np.save(os.path.join(TMP, "a.npy"), a)
    np.save(os.path.join(TMP, "b.npy"), b)
    plain, n_plain, why = run(path, 0)
    windowed, n_windowed, why_w = run(path, 8192)
    bound = 1e-4 * float(np.abs(ref).max()) + 1e-5
    ok = plain is not None and windowed is not None and n_windowed > n_plain and \
        float(np.abs(windowed - ref).max()) <= bound and np.array_equal(plain, windowed)
    print(("PASS " if ok else "FAIL ") + f"{name}: {n_plain} dispatches plain, {n_windowed} windowed {why} {why_w}")
    results.append(ok)


def head_case(name, op, relu=False):
    """y = a W^T + bias (Gemm, transB) or a W (MatMul), W a 240 KB initializer: 64 KiB
    bindings cut it into 5 blocks of 40 columns."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 300)).astype(np.float32)
    w = rng.standard_normal((200, 300)).astype(np.float32)
    bias = rng.standard_normal(200).astype(np.float32)
    if op == "Gemm":
        nodes = [h.make_node("Gemm", ["a", "w", "bias"], ["p" if relu else "y"], transB=1)]
        inits = [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(bias, "bias")]
        ref = a @ w.T + bias
    else:
        nodes = [h.make_node("MatMul", ["a", "w"], ["p" if relu else "y"])]
        inits = [onnx.numpy_helper.from_array(np.ascontiguousarray(w.T), "w")]
        ref = a @ w.T
    if relu:
        nodes.append(h.make_node("Relu", ["p"], ["y"]))
        ref = np.maximum(ref, 0)
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("a", T.FLOAT, [4, 300])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    path = os.path.join(TMP, name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    np.save(os.path.join(TMP, "a.npy"), a)
    plain, n_plain, why = run(path, 0, ("a",))
    blocks, n_blocks, why_b = run(path, 65536, ("a",))
    bound = 1e-4 * float(np.abs(ref).max()) + 1e-5
    ok = plain is not None and blocks is not None and n_blocks > n_plain and \
        float(np.abs(blocks - ref).max()) <= bound and float(np.abs(plain - ref).max()) <= bound
    print(("PASS " if ok else "FAIL ") + f"{name}: {n_plain} dispatches plain, {n_blocks} in column blocks {why} {why_b}")
    results.append(ok)


def too_large():
    """B a graph input larger than one binding: nothing to cut at plan time, a clear error."""
    rng = np.random.default_rng(2)
    np.save(os.path.join(TMP, "a.npy"), rng.standard_normal((4, 300)).astype(np.float32))
    np.save(os.path.join(TMP, "b.npy"), rng.standard_normal((300, 200)).astype(np.float32))
    g = h.make_graph([h.make_node("MatMul", ["a", "b"], ["y"])], "too_large",
                     [h.make_tensor_value_info("a", T.FLOAT, [4, 300]), h.make_tensor_value_info("b", T.FLOAT, [300, 200])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    path = os.path.join(TMP, "too_large.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    y, _, why = run(path, 8192)
    ok = y is None and "maxStorageBufferRange" in why and "MatMul" in why
    print(("PASS " if ok else "FAIL ") + f"too_large: {why[-200:]}")
    results.append(ok)


case("batched", [6, 33, 50], [6, 50, 20])
case("broadcast_batch", [4, 1, 33, 50], [3, 50, 20])
case("gemv_rows", [5, 2, 50], [5, 50, 40])
case("strided_b", [6, 33, 50], [6, 20, 50], transpose_b=True)
case("many_batches", [70000, 2, 3], [70000, 3, 2])
head_case("head_gemm", "Gemm")
head_case("head_gemm_relu", "Gemm", relu=True)
head_case("head_matmul", "MatMul")
too_large()
print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
sys.exit(0 if all(results) else 1)
