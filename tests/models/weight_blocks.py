#!/usr/bin/python3
"""Weights larger than one device allocation, and equal constants sharing their bytes: with VKINFER_MAX_ALLOCATION set below a model's
weight bytes (the way NVIDIA's 4 GiB and lavapipe's 2 GiB maxMemoryAllocationSize are below a
multi-GB VLA's), the weights must be packed into several buffers and the outputs must not change.

Covers the session's shared initializers (PLAN_BUF_SHARED: blocks added by a later plan for a
new input shape too) and a plan's own constants (PLAN_BUF_WEIGHTS: the fp16 mode's converted
weights), on the torch 2.11 smolvla fixtures (tests/models/torch2/) and a MatMul chain built here.
Each case checks first that the limit really is below the weights (else it would not test the
split), then compares with the reference outputs.

    /usr/bin/python3 tests/models/weight_blocks.py path/to/libvkinfer.so"""
import json
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.join(ROOT, "tests", "models", "torch2")
LIMIT = 1 << 20  # 1 MiB: above every single tensor and arena of these models, below their weights
os.environ["VKINFER_MAX_ALLOCATION"] = str(LIMIT)
os.environ["VKINFER_LIBRARY"] = sys.argv[1]
sys.path.insert(0, os.path.join(ROOT, "python"))
import vkinfer  # noqa: E402

failed = 0


def check(name, ok, detail=""):
    global failed
    failed += not ok
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))


def fixture(name, precision, rtol, limit=LIMIT):
    os.environ["VKINFER_MAX_ALLOCATION"] = str(limit)  # read when the session makes its context
    d = os.path.join(HERE, name)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    s = vkinfer.Session(os.path.join(d, "model.onnx"), precision=precision)
    feeds = {n: np.load(os.path.join(d, fname)) for n, fname in meta["inputs"].items()}
    got = s.run(feeds)
    weights = s.stats()["weight_bytes"]
    check(f"{name} {precision}: weights ({weights} bytes) pass one allocation ({limit})", weights > limit)
    os.environ["VKINFER_MAX_ALLOCATION"] = str(LIMIT)
    for n, fname in meta["outputs"].items():
        ref = np.load(os.path.join(d, fname)).astype(np.float64)
        out = np.asarray(got[n], dtype=np.float64)
        err = float(np.max(np.abs(out - ref))) if out.shape == ref.shape else float("inf")
        bound = rtol * float(np.max(np.abs(ref))) + 1e-5
        check(f"{name} {precision} {n}: max abs error {err:.3g} (bound {bound:.3g})", err <= bound, "too far")


def matmul_chain(tmp):
    """Eight [256, 256] float32 weights (256 KiB each, 2 MiB in all) applied in turn to x [n, 256]."""
    rng = np.random.default_rng(7)
    ws = [(rng.standard_normal((256, 256)) / 16).astype(np.float32) for _ in range(8)]
    nodes, inits, prev = [], [], "x"
    for i, w in enumerate(ws):
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"h{i}"]))
        prev = f"h{i}"
    nodes.append(helper.make_node("Identity", [prev], ["y"]))
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 256])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 256])], inits)
    path = os.path.join(tmp, "chain.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    s = vkinfer.Session(path)
    for n in (3, 5, 3):  # a second plan for a new shape, then the first again: the cache's blocks are shared
        x = rng.standard_normal((n, 256)).astype(np.float32)
        ref = x.astype(np.float64)
        for w in ws:
            ref = ref @ w
        y = s.run({"x": x})["y"]
        err = float(np.max(np.abs(y - ref)))
        check(f"MatMul chain, x [{n}, 256], weights 2 MiB under a 1 MiB allocation: max abs error {err:.3g}",
              err <= 1e-4 * float(np.max(np.abs(ref))) + 1e-5, "too far")
    weights = s.stats()["weight_bytes"]
    check(f"MatMul chain: shared weights ({weights} bytes) pass one allocation", weights > LIMIT)


def equal_constants(tmp):
    """One weight transposed by four Transpose nodes, each feeding its own MatMul (what the dynamo
    exporter writes for an unrolled denoising loop without its optimizer): the four folded
    transposes (and, on a CPU device, the four packings of B) are equal constants and must take
    the device memory of one."""
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((256, 256)) / 16).astype(np.float32)
    nodes, prev = [], "x"
    for i in range(4):
        nodes.append(helper.make_node("Transpose", ["w"], [f"wt{i}"], perm=[1, 0]))
        nodes.append(helper.make_node("MatMul", [prev, f"wt{i}"], [f"h{i}"]))
        prev = f"h{i}"
    nodes.append(helper.make_node("Identity", [prev], ["y"]))
    g = helper.make_graph(nodes, "steps", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 256])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 256])], [numpy_helper.from_array(w, "w")])
    path = os.path.join(tmp, "steps.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    s = vkinfer.Session(path)
    x = rng.standard_normal((4, 256)).astype(np.float32)
    ref = x.astype(np.float64)
    for _ in range(4):
        ref = ref @ w.T.astype(np.float64)
    err = float(np.max(np.abs(s.run({"x": x})["y"] - ref)))
    check(f"four transposes of one weight: max abs error {err:.3g}", err <= 1e-4 * float(np.max(np.abs(ref))) + 1e-5, "too far")
    weights = s.stats()["weight_bytes"]
    check(f"four transposes of one weight take one copy: {weights} bytes for a {w.nbytes}-byte weight",
          weights < 2 * w.nbytes, "equal constants were not shared")


def too_large_tensor(tmp):
    """One weight larger than the allocation: refused with a message naming the limit."""
    w = np.zeros((1024, 512), np.float32)  # 2 MiB
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "big",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 512])],
                          [numpy_helper.from_array(w, "w")])
    path = os.path.join(tmp, "big.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    try:
        vkinfer.Session(path).run({"x": np.zeros((1, 1024), np.float32)})
        check("one weight over the allocation is refused", False, "it ran")
    except vkinfer.VkinferError as e:
        check("one weight over the allocation is refused", "largest allocation" in str(e), str(e))


def main():
    fixture("smolvla_tiny_dynamo", "fp32", 1e-4)
    fixture("smolvla_tiny_dynamo", "fp16", 2e-2, limit=256 << 10)
    fixture("smolvla_tiny_bf16_dynamo", "fp32", 2e-2, limit=256 << 10)
    with tempfile.TemporaryDirectory() as tmp:
        matmul_chain(tmp)
        equal_constants(tmp)
        too_large_tensor(tmp)
    print("PASS" if not failed else f"FAIL ({failed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
