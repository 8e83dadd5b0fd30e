"""Control flow (If, Loop, Scan, inlined at plan time) against NumPy: an If whose condition is
a graph input (the plan is keyed on it) with branches reading outer-scope values and their
own initializers; a Loop with a constant trip count whose body holds an If on the iteration
number (nested expansion), an outer-scope weight and a scan output; a Loop whose body
computes its condition from the iteration number (unrolled one iteration per round); a Scan with a reversed
input, a reversed output stacked along axis 1 and two states; a Loop that exits on data and an
If whose condition is computed on the GPU from data (both run on the GPU: all iterations each
kept while the condition holds, both branches selected by it; tests/models/control_gpu.py
has more of them).

    control_flow.py VKINFER"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

VKINFER = sys.argv[1]
TMP = tempfile.mkdtemp()
rng = np.random.default_rng(0)
failures = 0


def vi(name, t, shape):
    return h.make_tensor_value_info(name, t, shape)


def run(name, graph, inputs, opset=17):
    path = os.path.join(TMP, name + ".onnx")
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", opset)]), path)
    args = [VKINFER, "run", path, "--output-dir", os.path.join(TMP, name)]
    for k, v in inputs.items():
        np.save(os.path.join(TMP, f"{name}_{k}.npy"), v)
        args += ["--input", f"{k}=" + os.path.join(TMP, f"{name}_{k}.npy")]
    return subprocess.run(args, capture_output=True, text=True)


def check(name, graph, inputs, want, opset=17, tol=1e-5):
    global failures
    r = run(name, graph, inputs, opset)
    if r.returncode:
        print(f"FAIL {name}: {r.stderr.strip()[-400:]}")
        failures += 1
        return
    for k, w in want.items():
        got = np.load(os.path.join(TMP, name, k + ".npy"))
        err = float(np.max(np.abs(got.astype(np.float64) - w))) if got.shape == w.shape else float("inf")
        ok = got.shape == w.shape and err <= tol
        print(("PASS " if ok else "FAIL ") + f"{name} {k}: shape {got.shape}, max abs error {err:.3g}")
        failures += not ok


# ---- If: condition from a graph input, branches reading x and their own initializer ----
then_g = h.make_graph([h.make_node("Mul", ["x", "two"], ["t_out"])], "then",
                      [], [vi("t_out", T.FLOAT, [3, 4])], [nh.from_array(np.array(2, np.float32), "two")])
else_g = h.make_graph([h.make_node("Add", ["x", "x"], ["s"]), h.make_node("Sub", ["s", "one"], ["e_out"])], "else",
                      [], [vi("e_out", T.FLOAT, [3, 4])], [nh.from_array(np.array(1, np.float32), "one")])
g = h.make_graph([h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
                  h.make_node("Relu", ["y"], ["z"])], "if_outer",
                 [vi("c", T.BOOL, []), vi("x", T.FLOAT, [3, 4])], [vi("z", T.FLOAT, [3, 4])])
x = rng.standard_normal((3, 4)).astype(np.float32)
for c in (True, False):
    want = np.maximum(x * 2 if c else 2 * x - 1, 0)
    check(f"if_{c}", g, {"c": np.array(c), "x": x}, {"z": want})

# ---- Loop: M = 4 (an initializer), body with an If on the iteration's parity ----
w = rng.standard_normal((4, 4)).astype(np.float32) * 0.5
inner_then = h.make_graph([h.make_node("MatMul", ["y_in", "w"], ["a"])], "even", [], [vi("a", T.FLOAT, [2, 4])])
inner_else = h.make_graph([h.make_node("Tanh", ["y_in"], ["b"])], "odd", [], [vi("b", T.FLOAT, [2, 4])])
body = h.make_graph([
    h.make_node("Mod", ["i", "two64"], ["parity"]),
    h.make_node("Equal", ["parity", "zero64"], ["even"]),
    h.make_node("If", ["even"], ["y_next"], then_branch=inner_then, else_branch=inner_else),
    h.make_node("Identity", ["cond"], ["cond_out"]),
    h.make_node("ReduceSum", ["y_next"], ["total"], keepdims=0),
], "body", [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("y_in", T.FLOAT, [2, 4])],
    [vi("cond_out", T.BOOL, []), vi("y_next", T.FLOAT, [2, 4]), vi("total", T.FLOAT, [])],
    [nh.from_array(np.array(2, np.int64), "two64"), nh.from_array(np.array(0, np.int64), "zero64")])
g = h.make_graph([h.make_node("Loop", ["M", "", "y0"], ["y", "totals"], body=body)], "loop_outer",
                 [vi("y0", T.FLOAT, [2, 4])], [vi("y", T.FLOAT, [2, 4]), vi("totals", T.FLOAT, [4])],
                 [nh.from_array(np.array(4, np.int64), "M"), nh.from_array(w, "w")])
y0 = rng.standard_normal((2, 4)).astype(np.float32)
y, totals = y0.astype(np.float64), []
for i in range(4):
    y = y @ w if i % 2 == 0 else np.tanh(y)
    totals.append(y.sum())
check("loop_nested_if", g, {"y0": y0}, {"y": y, "totals": np.array(totals)}, tol=1e-4)

# ---- Scan: two states, a reversed scan input, a reversed scan output along axis 1 ----
sbody = h.make_graph([
    h.make_node("Add", ["s_in", "a"], ["s_out"]),
    h.make_node("Mul", ["p_in", "b"], ["p_out"]),
    h.make_node("Sub", ["s_out", "p_out"], ["o"]),
], "sbody", [vi("s_in", T.FLOAT, [3]), vi("p_in", T.FLOAT, [3]), vi("a", T.FLOAT, [3]), vi("b", T.FLOAT, [3])],
    [vi("s_out", T.FLOAT, [3]), vi("p_out", T.FLOAT, [3]), vi("o", T.FLOAT, [3])])
g = h.make_graph([h.make_node("Scan", ["s0", "p0", "A", "B"], ["s", "p", "O"], body=sbody, num_scan_inputs=2,
                              scan_input_axes=[0, 1], scan_input_directions=[0, 1], scan_output_axes=[1],
                              scan_output_directions=[1])], "scan_outer",
                 [vi("s0", T.FLOAT, [3]), vi("p0", T.FLOAT, [3]), vi("A", T.FLOAT, [5, 3]), vi("B", T.FLOAT, [3, 5])],
                 [vi("s", T.FLOAT, [3]), vi("p", T.FLOAT, [3]), vi("O", T.FLOAT, [3, 5])])
s0, p0 = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
A, B = rng.standard_normal((5, 3)).astype(np.float32), rng.uniform(0.5, 1.5, (3, 5)).astype(np.float32)
s, p, outs = s0.astype(np.float64), p0.astype(np.float64), []
for t in range(5):
    s = s + A[t]
    p = p * B[:, 4 - t]
    outs.append(s - p)
O = np.stack(outs[::-1], axis=1)
check("scan_directions", g, {"s0": s0, "p0": p0, "A": A, "B": B}, {"s": s, "p": p, "O": O})

# ---- Loop whose body computes its condition from the iteration number: exits after i = 2 ----
cbody = h.make_graph([
    h.make_node("Less", ["i", "two64"], ["cond_out"]),
    h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
    h.make_node("Add", ["y_in", "fi"], ["y_out"]),
    h.make_node("Mul", ["y_out", "y_out"], ["sq"]),
], "cbody", [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("y_in", T.FLOAT, [3])],
    [vi("cond_out", T.BOOL, []), vi("y_out", T.FLOAT, [3]), vi("sq", T.FLOAT, [3])],
    [nh.from_array(np.array(2, np.int64), "two64")])
g = h.make_graph([h.make_node("Loop", ["M", "c0", "y0"], ["y", "sqs"], body=cbody)], "loop_exit",
                 [vi("y0", T.FLOAT, [3])], [vi("y", T.FLOAT, [3]), vi("sqs", T.FLOAT, [None, 3])],
                 [nh.from_array(np.array(10, np.int64), "M"), nh.from_array(np.array(True), "c0")])
y0 = rng.standard_normal(3).astype(np.float32)
y, sqs = y0.astype(np.float64), []
for i in range(10):
    y = y + i
    sqs.append(y * y)
    if not i < 2:
        break
check("loop_computed_exit", g, {"y0": y0}, {"y": y, "sqs": np.array(sqs)}, tol=1e-4)

# ---- a Loop that exits on data and an If on a condition computed from data: run on the GPU
# (all M iterations, each kept while the condition holds; both branches, selected by Where) ----
wbody = h.make_graph([
    h.make_node("Mul", ["v_in", "half"], ["v_out"]),
    h.make_node("ReduceMax", ["v_out"], ["m"], keepdims=0),
    h.make_node("Greater", ["m", "half"], ["cond_out"]),
], "wbody", [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("v_in", T.FLOAT, [64])],
    [vi("cond_out", T.BOOL, []), vi("v_out", T.FLOAT, [64])], [nh.from_array(np.array(0.5, np.float32), "half")])
g = h.make_graph([h.make_node("Loop", ["M", "", "v0"], ["v"], body=wbody)], "while_outer",
                 [vi("v0", T.FLOAT, [64])], [vi("v", T.FLOAT, [64])], [nh.from_array(np.array(10, np.int64), "M")])
v0 = rng.standard_normal(64).astype(np.float32) * 8
v = v0.astype(np.float64)
for i in range(10):
    v = v * 0.5
    if not v.max() > 0.5:
        break
check("loop_data_exit", g, {"v0": v0}, {"v": v})
g = h.make_graph([h.make_node("ReduceSum", ["x"], ["sum"], keepdims=0),
                  h.make_node("Greater", ["sum", "zero"], ["c"]),
                  h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)], "if_data",
                 [vi("x", T.FLOAT, [3, 4])], [vi("y", T.FLOAT, [3, 4])], [nh.from_array(np.array(0, np.float32), "zero")])
x = rng.standard_normal((3, 4)).astype(np.float32) * 100  # more than 8 elements: not a key of the plan
check("if_data_condition", g, {"x": x}, {"y": x * 2.0 if x.sum() > 0 else x + x - 1})
check("if_data_condition_other_way", g, {"x": -x}, {"y": -x * 2.0 if -x.sum() > 0 else -x - x - 1})
sys.exit(1 if failures else 0)
