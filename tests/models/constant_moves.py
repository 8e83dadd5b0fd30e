"""Data movement that costs no dispatch (src/ops/movement.c): a Split, Slice or Transpose of a
constant of any size is done on the host at plan time when it makes no more elements than it
reads (ACT's in-projection weight cut into q, k and v; VQ-BeT's causal mask sliced, then
compared), and a Split of an activation that only a MatMul or element-wise arithmetic reads is a
strided view (attention's q, k and v). An Expand of a small constant to many elements stays a
dispatch (no large host copy is made of a small constant). Each graph is built with onnx.helper,
its outputs checked against NumPy, and its profiled dispatches against the expectation.

    tests/models/constant_moves.py VKINFER [fp16]
(fp16: the fp16 mode, whose bound is looser)"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from torch_export import profiled_dispatches, report, within

F = TensorProto.FLOAT


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def graph(nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
                          [helper.make_tensor_value_info(n, F, None) for n in outputs], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def cases():
    rng = np.random.default_rng(0)
    r = lambda *s: rng.standard_normal(s).astype(np.float32)
    # a weight cut in three along its columns, each piece a MatMul's B (ACT's in-projection)
    # (pieces of over FOLD_MAX_ELEMENTS, 4096: smaller ones were always folded)
    x, w = r(5, 64), r(64, 240)
    m = graph([helper.make_node("Split", ["w", "sizes"], ["w0", "w1", "w2"], axis=1),
               helper.make_node("MatMul", ["x", "w0"], ["y0"]), helper.make_node("MatMul", ["x", "w1"], ["y1"]),
               helper.make_node("MatMul", ["x", "w2"], ["y2"]), helper.make_node("Mul", ["y1", "y2"], ["p"]),
               helper.make_node("Add", ["y0", "p"], ["out"])],
              [("x", [5, 64])], ["out"], [init("w", w), init("sizes", np.array([80, 80, 80], np.int64))])
    ref = x @ w[:, :80] + (x @ w[:, 80:160]) * (x @ w[:, 160:])
    yield "split_weight", m, {"x": x}, [ref], ["Split"], []
    # a weight transposed for a MatMul (a [out, in] Linear weight)
    x, w = r(7, 64), r(96, 64)
    m = graph([helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]), helper.make_node("MatMul", ["x", "wt"], ["out"])],
              [("x", [7, 64])], ["out"], [init("w", w)])
    yield "transpose_weight", m, {"x": x}, [x @ w.T], ["Transpose"], []
    # a constant causal mask sliced to the sequence (rows, then columns), compared, and applied
    # by Where (VQ-BeT; its Equal, of more than 4096 elements here, stays on the GPU)
    s, full = 72, 96
    bias = np.tril(np.ones((full, full), np.float32)).reshape(1, 1, full, full)
    scores = r(1, 1, s, s)
    m = graph([helper.make_node("Slice", ["bias", "st", "en", "ax2"], ["rows"]),
               helper.make_node("Slice", ["rows", "st", "en", "ax3"], ["mask"]),
               helper.make_node("Equal", ["mask", "zero"], ["masked"]),
               helper.make_node("Where", ["masked", "neg", "scores"], ["out"])],
              [("scores", [1, 1, s, s])], ["out"],
              [init("bias", bias), init("st", np.array([0], np.int64)), init("en", np.array([s], np.int64)),
               init("ax2", np.array([2], np.int64)), init("ax3", np.array([3], np.int64)),
               init("zero", np.array(0, np.float32)), init("neg", np.array(-3e4, np.float32))])
    ref = np.where(bias[:, :, :s, :s] == 0, np.float32(-3e4), scores)
    yield "slice_mask", m, {"scores": scores}, [ref], ["Slice"], []
    # an activation split along its last axis: one piece a MatMul's A, two an element-wise Mul's
    # (a Relu's output: in the fp16 mode a float32 graph input is held apart from its halves)
    x, w = r(6, 48), r(16, 8)
    m = graph([helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Split", ["h", "sizes"], ["s0", "s1", "s2"], axis=1),
               helper.make_node("MatMul", ["s0", "w"], ["out0"]), helper.make_node("Mul", ["s1", "s2"], ["out1"])],
              [("x", [6, 48])], ["out0", "out1"], [init("w", w), init("sizes", np.array([16, 16, 16], np.int64))])
    h = np.maximum(x, 0)
    yield "split_activation", m, {"x": x}, [h[:, :16] @ w, h[:, 16:32] * h[:, 32:]], ["Split"], []
    # a small constant expanded to 8192 elements: not copied on the host, a dispatch
    c = r(1, 16)
    m = graph([helper.make_node("Expand", ["c", "shape"], ["e"]), helper.make_node("Add", ["e", "x"], ["out"])],
              [("x", [512, 16])], ["out"], [init("c", c), init("shape", np.array([512, 16], np.int64))])
    x = r(512, 16)
    yield "expand_grows", m, {"x": x}, [c + x], [], ["Expand"]


def main():
    vkinfer = sys.argv[1]
    fp16 = len(sys.argv) > 2 and sys.argv[2] == "fp16"
    extra = ["--precision", "fp16"] if fp16 else []
    rel = 1e-2 if fp16 else 1e-5
    failed = []
    for name, model, inputs, refs, absent, present in cases():
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.onnx")
            onnx.save(model, path)
            cmd = [vkinfer, "run", path, "--output-dir", os.path.join(tmp, "out"), *extra]
            for n, a in inputs.items():
                np.save(os.path.join(tmp, n + ".npy"), a)
                cmd += ["--input", f"{n}={os.path.join(tmp, n + '.npy')}"]
            run = subprocess.run(cmd, capture_output=True, text=True)
            outs = [o.name for o in model.graph.output]
            got = [np.load(os.path.join(tmp, "out", o + ".npy")) for o in outs] if run.returncode == 0 else None
            dispatched = profiled_dispatches(vkinfer, path, extra)
        ok, err = got is not None, float("inf") if got is None else 0.0
        if got is None:
            print(run.stdout, run.stderr, sep="\n")
        for g, ref in zip(got or [], refs):
            good, e, _ = within(g, ref, rel, 1e-6)
            ok, err = ok and good, max(err, e)
        ops = [op for _, op in dispatched or []]
        if dispatched is None:
            print(f"FAIL {name}: no profile")
            ok = False
        for op in absent:
            if op in ops:
                print(f"FAIL {name}: {ops.count(op)} {op} dispatches; expected none")
                ok = False
        for op in present:
            if op not in ops:
                print(f"FAIL {name}: no {op} dispatch; expected one")
                ok = False
        print(("PASS" if ok else "FAIL") + f" {name}: max abs error {err:.3g}, dispatches {ops}")
        if not ok:
            failed.append(name)
    return report(failed)


if __name__ == "__main__":
    sys.exit(main())
