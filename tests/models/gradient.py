"""Gradient (ai.onnx.preview.training) against torch.autograd: broadcasting summed back to each
operand's shape, batched and 1-D MatMul, every supported element-wise op, a value read by two
nodes (gradients add), an x that y does not depend on (zeros), an intermediate x, zs; and the
error for an op it cannot differentiate.

    gradient.py LIBVKINFER_SO"""
import os
import sys
import tempfile

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper as h

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
os.environ["VKINFER_LIBRARY"] = sys.argv[1]
import vkinfer  # noqa: E402

TMP = tempfile.mkdtemp()
rng = np.random.default_rng(3)
failures = 0
TORCH = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": torch.div, "MatMul": torch.matmul,
         "Neg": torch.neg, "Relu": torch.relu, "Sigmoid": torch.sigmoid, "Tanh": torch.tanh, "Exp": torch.exp,
         "Identity": lambda x: x}


def case(name, nodes, shapes, xs, y, zs=(), expect_error=None, y_output=True):
    """nodes: (op, inputs, output); shapes: graph inputs; the Gradient of y w.r.t. xs."""
    global failures
    feeds = {k: rng.uniform(-1.5, 1.5, s).astype(np.float32) for k, s in shapes.items()}
    for k in feeds:  # divisors away from 0
        if any(op == "Div" and ins[1] == k for op, ins, _ in nodes):
            feeds[k] = np.sign(feeds[k]) * (np.abs(feeds[k]) + 0.5)
    onnx_nodes = [h.make_node(op, list(ins), [out]) for op, ins, out in nodes]
    grads = ["d_" + x for x in xs]
    onnx_nodes.append(h.make_node("Gradient", list(xs) + list(zs), grads, xs=list(xs), zs=list(zs), y=y,
                                  domain="ai.onnx.preview.training"))
    g = h.make_graph(onnx_nodes, name, [h.make_tensor_value_info(k, TensorProto.FLOAT, s) for k, s in shapes.items()],
                     [h.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in [y] * y_output + grads])
    path = os.path.join(TMP, name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13), h.make_opsetid("ai.onnx.preview.training", 1)]),
              path)
    try:
        got = vkinfer.Session(path).run(feeds)
    except Exception as e:  # noqa: BLE001
        ok = expect_error is not None and expect_error in str(e)
        print(("PASS " if ok else "FAIL ") + f"{name}: {str(e)[-300:]}")
        failures += not ok
        return
    if expect_error:
        print(f"FAIL {name}: ran, expected the error '{expect_error}'")
        failures += 1
        return
    env = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in feeds.items()}
    for op, ins, out in nodes:
        if out in xs:  # an intermediate x: a leaf of its own
            env[out] = TORCH[op](*[env[i] for i in ins]).detach().requires_grad_(True)
        else:
            env[out] = TORCH[op](*[env[i] for i in ins])
    want = torch.autograd.grad(env[y].sum(), [env[x] for x in xs], allow_unused=True)
    errs = []
    for x, gname, w in zip(xs, grads, want):
        w = np.zeros(env[x].shape) if w is None else w.numpy()
        if got[gname].shape != w.shape:
            errs.append(f"{gname} shape {got[gname].shape}, expected {w.shape}")
        elif not np.allclose(got[gname], w, rtol=1e-4, atol=1e-4):
            errs.append(f"{gname} max error {np.max(np.abs(got[gname] - w)):.3g}")
    print(("FAIL " if errs else "PASS ") + name + (": " + "; ".join(errs) if errs else ""))
    failures += bool(errs)


for op in ("Add", "Sub", "Mul", "Div"):
    case(f"{op}_broadcast", [(op, ("a", "b"), "y")], {"a": (2, 3, 4), "b": (3, 1)}, ["a", "b"], "y")
    case(f"{op}_broadcast_both", [(op, ("a", "b"), "y")], {"a": (2, 1, 4), "b": (3, 1)}, ["b", "a"], "y")
for op in ("Neg", "Relu", "Sigmoid", "Tanh", "Exp", "Identity"):
    case(f"{op}_chain", [(op, ("a",), "t"), ("Mul", ("t", "b"), "y")], {"a": (3, 5), "b": (5,)}, ["a", "b"], "y")
case("MatMul_2d", [("MatMul", ("a", "b"), "y")], {"a": (3, 4), "b": (4, 5)}, ["a", "b"], "y")
case("MatMul_batch_broadcast", [("MatMul", ("a", "b"), "y")], {"a": (2, 3, 3, 4), "b": (3, 4, 5)}, ["a", "b"], "y")
case("MatMul_vector", [("MatMul", ("a", "b"), "t"), ("MatMul", ("t", "c"), "y")], {"a": (4,), "b": (2, 4, 5), "c": (5,)},
     ["a", "b", "c"], "y")
case("mlp", [("MatMul", ("x", "w1"), "h"), ("Add", ("h", "b1"), "hb"), ("Relu", ("hb",), "r"),
             ("MatMul", ("r", "w2"), "o"), ("Sigmoid", ("o",), "s"), ("Sub", ("s", "t"), "e"), ("Mul", ("e", "e"), "y")],
     {"x": (4, 6), "w1": (6, 8), "b1": (8,), "w2": (8, 3), "t": (4, 3)}, ["w1", "b1", "w2"], "y", zs=["x", "t"])
case("shared_value", [("Add", ("a", "b"), "c"), ("Mul", ("c", "a"), "d"), ("Div", ("d", "c"), "y")],
     {"a": (2, 3), "b": (2, 3)}, ["a", "b"], "y")
case("unrelated_x", [("Exp", ("a",), "y")], {"a": (3,), "b": (2, 2)}, ["a", "b"], "y")
case("intermediate_x", [("Mul", ("a", "b"), "h"), ("Tanh", ("h",), "y")], {"a": (3,), "b": (3,)}, ["h", "b"], "y")
case("unsupported_op", [("Softmax", ("a",), "t"), ("Mul", ("t", "a"), "y")], {"a": (2, 3)}, ["a"], "y",
     expect_error="cannot differentiate node 'Softmax_0' (Softmax)")
# y need not be a graph output: the Gradient keeps the nodes that compute it (and fusion off,
# which would claim the forward values it reads)
case("y_not_output", [("Mul", ("a", "b"), "h"), ("Add", ("h", "b"), "t"), ("Relu", ("t",), "y")],
     {"a": (2, 3), "b": (2, 3)}, ["a", "b"], "y", y_output=False)
case("y_unknown", [("Exp", ("a",), "z")], {"a": (3,)}, ["a"], "y", y_output=False,
     expect_error="y 'y' names no value of the graph")
sys.exit(1 if failures else 0)
