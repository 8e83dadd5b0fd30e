"""Random ops (RandomUniform, RandomNormal, their Like forms, Bernoulli, Multinomial): ONNX
leaves the generator to the implementation, so these check what the spec fixes: the
distributions (moments, ranges, rates, class frequencies), the output dtypes and shapes,
that a seed repeats the same sequence of runs in a new session, and that runs, and unseeded
sessions, differ.

    random_ops.py LIBVKINFER_SO"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper as h

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
os.environ["VKINFER_LIBRARY"] = sys.argv[1]
import vkinfer  # noqa: E402

TMP = tempfile.mkdtemp()
failures = 0


def check(name, ok, detail=""):
    global failures
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    failures += not ok


def model(name, node, inputs=(), out_type=TensorProto.FLOAT):
    g = h.make_graph([node], name, list(inputs), [h.make_tensor_value_info("y", out_type, None)])
    path = os.path.join(TMP, name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 15)]), path)
    return path


# RandomNormal: moments; a seed repeats the runs in a new session; runs differ
path = model("normal", h.make_node("RandomNormal", [], ["y"], shape=[200, 100], mean=1.5, scale=2.0, seed=5.0))
a, b = vkinfer.Session(path), vkinfer.Session(path)
a1, a2 = a.run({})["y"], a.run({})["y"]
b1, b2 = b.run({})["y"], b.run({})["y"]
check("normal dtype and shape", a1.dtype == np.float32 and a1.shape == (200, 100), (a1.dtype, a1.shape))
check("normal mean", abs(a1.mean() - 1.5) < 0.04, a1.mean())
check("normal std", abs(a1.std() - 2.0) < 0.04, a1.std())
check("normal tails (|z| > 3 about 0.27%)", 0.001 < np.mean(np.abs(a1 - 1.5) > 6.0) < 0.0045, np.mean(np.abs(a1 - 1.5) > 6.0))
check("normal seed repeats in a new session", np.array_equal(a1, b1) and np.array_equal(a2, b2))
check("normal runs differ", not np.array_equal(a1, a2))
check("normal successive runs uncorrelated", abs(np.corrcoef(a1.ravel(), a2.ravel())[0, 1]) < 0.03)

# RandomUniform: range and moments; unseeded sessions differ
path = model("uniform", h.make_node("RandomUniform", [], ["y"], shape=[100, 300], low=-2.0, high=3.0, seed=1.0))
u = vkinfer.Session(path).run({})["y"]
check("uniform range", u.min() >= -2.0 and u.max() < 3.0, (u.min(), u.max()))
check("uniform mean", abs(u.mean() - 0.5) < 0.03, u.mean())
check("uniform variance", abs(u.var() - 25 / 12) < 0.05, u.var())
check("uniform deciles", np.all(np.abs(np.histogram(u, 10, (-2, 3))[0] / u.size - 0.1) < 0.01))
path = model("uniform_unseeded", h.make_node("RandomUniform", [], ["y"], shape=[1000]))
check("unseeded sessions differ", not np.array_equal(vkinfer.Session(path).run({})["y"], vkinfer.Session(path).run({})["y"]))

# the Like forms take the input's shape, and dtype (or the dtype attribute)
x = np.zeros((50, 40), np.float32)
path = model("uniform_like_f16", h.make_node("RandomUniformLike", ["x"], ["y"], dtype=TensorProto.FLOAT16, seed=2.0),
             [h.make_tensor_value_info("x", TensorProto.FLOAT, [50, 40])], TensorProto.FLOAT16)
v = vkinfer.Session(path).run({"x": x})["y"]
check("uniform_like float16", v.dtype == np.float16 and v.shape == (50, 40) and 0 <= v.min() and v.max() <= 1
      and abs(v.astype(np.float32).mean() - 0.5) < 0.03, (v.dtype, v.shape, v.mean()))
path = model("normal_like", h.make_node("RandomNormalLike", ["x"], ["y"], seed=3.0),
             [h.make_tensor_value_info("x", TensorProto.FLOAT, [50, 40])])
v = vkinfer.Session(path).run({"x": x})["y"]
check("normal_like", v.shape == (50, 40) and abs(v.mean()) < 0.08 and abs(v.std() - 1) < 0.06, (v.mean(), v.std()))

# Bernoulli: the rate of ones follows p, column by column
p = np.tile(np.linspace(0, 1, 11, dtype=np.float32), (3000, 1))
path = model("bernoulli", h.make_node("Bernoulli", ["p"], ["y"], seed=4.0),
             [h.make_tensor_value_info("p", TensorProto.FLOAT, list(p.shape))])
v = vkinfer.Session(path).run({"p": p})["y"]
check("bernoulli values are 0 or 1", set(np.unique(v)) <= {0.0, 1.0})
check("bernoulli rate per p", np.all(np.abs(v.mean(axis=0) - p[0]) < 0.03), v.mean(axis=0))
path = model("bernoulli_bool", h.make_node("Bernoulli", ["p"], ["y"], dtype=TensorProto.BOOL, seed=5.0),
             [h.make_tensor_value_info("p", TensorProto.FLOAT, list(p.shape))], TensorProto.BOOL)
v = vkinfer.Session(path).run({"p": p})["y"]
check("bernoulli as bool", v.dtype == np.bool_ and np.all(np.abs(v.mean(axis=0) - p[0]) < 0.03), v.mean(axis=0))

# Multinomial: class frequencies follow softmax(logits), per row
logits = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1], [0.0, 0.5, 0.0, 0.5]], np.float32) + 1e-30)
path = model("multinomial", h.make_node("Multinomial", ["x"], ["y"], sample_size=20000, dtype=TensorProto.INT64, seed=6.0),
             [h.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])], TensorProto.INT64)
v = vkinfer.Session(path).run({"x": logits})["y"]
freq = np.stack([np.bincount(v[r], minlength=4) / v.shape[1] for r in range(3)])
probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
check("multinomial dtype and shape", v.dtype == np.int64 and v.shape == (3, 20000), (v.dtype, v.shape))
check("multinomial frequencies", np.all(np.abs(freq - probs) < 0.015), freq)

print(f"{'FAILED' if failures else 'passed'}: {failures} failures")
sys.exit(1 if failures else 0)
