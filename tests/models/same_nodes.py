"""Nodes that compute the same thing twice (same op, attributes and inputs) are planned once,
the later a view of the earlier's output (src/plan/fuse.c, merge_same_nodes): what an
unoptimized dynamo export writes when it casts a weight and recomputes a rotary table in every
layer, and a Transpose that undoes the one before it. Each case is an ONNX graph built here,
run by `vkinfer run` with fusion on and with VKINFER_NO_FUSION=1, compared with numpy, and the fused plan must have exactly the expected
number of dispatches fewer.

    same_nodes.py VKINFER"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from fused_cases import check_cases

F = TensorProto.FLOAT


def chains():
    """Sin(x * w) and Cos(x * w) computed twice each (the second set also through a second,
    equal Mul), a weight cast to float16 and back twice (over an initializer of 8192 elements:
    not folded on the host), one duplicate a graph output: the second Mul, Sin, Cos and pair of
    Casts merge (the cast to float16 is two dispatches: 6 fewer), then the second Transpose,
    whose input merged (1); the Add and Mul after run as one pass (1): 8 fewer."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 2048), dtype=np.float32)
    w = rng.standard_normal((4, 2048), dtype=np.float32)
    nodes = [helper.make_node("Tanh", ["x"], ["t"]),
             helper.make_node("Mul", ["t", "w"], ["m1"]), helper.make_node("Mul", ["t", "w"], ["m2"]),
             helper.make_node("Sin", ["m1"], ["s1"]), helper.make_node("Sin", ["m2"], ["s2"]),
             helper.make_node("Cos", ["m1"], ["c1"]), helper.make_node("Cos", ["m2"], ["c2"]),
             helper.make_node("Cast", ["w"], ["h1"], to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["w"], ["h2"], to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["h1"], ["f1"], to=F), helper.make_node("Cast", ["h2"], ["f2"], to=F),
             helper.make_node("Transpose", ["s1"], ["p1"], perm=[1, 0]),
             helper.make_node("Transpose", ["s2"], ["p2"], perm=[1, 0]),
             helper.make_node("Add", ["s1", "c2"], ["a"]), helper.make_node("Mul", ["a", "f2"], ["y"]),
             helper.make_node("Sub", ["p1", "p2"], ["z"])]
    t = np.tanh(x)
    s, c = np.sin(t * w), np.cos(t * w)
    f = w.astype(np.float16).astype(np.float32)
    refs = {"y": (s + c) * f, "z": np.zeros((2048, 4), np.float32), "c1": c, "f1": f}
    g = helper.make_graph(nodes, "chains", [helper.make_tensor_value_info("x", F, x.shape)],
                          [helper.make_tensor_value_info(k, F, v.shape) for k, v in refs.items()],
                          [numpy_helper.from_array(w, "w")])
    return g, {"x": x}, refs


def random_not_merged():
    """Two RandomNormalLike nodes with the same seed would be equal, but random generators never
    merge; their outputs are equal, so the difference is checked as zero. The Sub and the Add
    run as one pass (1 fewer)."""
    nodes = [helper.make_node("RandomNormalLike", ["x"], ["r1"], seed=3.0),
             helper.make_node("RandomNormalLike", ["x"], ["r2"], seed=3.0),
             helper.make_node("Sub", ["r1", "r2"], ["d"]), helper.make_node("Add", ["d", "x"], ["y"])]
    x = np.random.default_rng(1).standard_normal((16, 8), dtype=np.float32)
    g = helper.make_graph(nodes, "random", [helper.make_tensor_value_info("x", F, x.shape)],
                          [helper.make_tensor_value_info("y", F, x.shape)])
    return g, {"x": x}, {"y": x}


def undone_transposes():
    """Transpose(P) of Transpose(P) with P = (3, 1, 2, 0), its own inverse, the first also read by a
    Shape (the dynamo exporter's slice assignment where its optimizer cannot fold the pair): the
    second is a view of the first's input (1 fewer) and the first, read for its dims alone, is a
    view too (1 fewer): 2 fewer. A pair that does not undo itself ((1, 0, 2, 3) after (0, 2, 1, 3))
    keeps both copies."""
    x = np.random.default_rng(2).standard_normal((2, 3, 4, 5), dtype=np.float32)
    nodes = [helper.make_node("Tanh", ["x"], ["a"]),
             helper.make_node("Transpose", ["a"], ["b"], perm=[3, 1, 2, 0]), helper.make_node("Shape", ["b"], ["s"]),
             helper.make_node("Transpose", ["b"], ["c"], perm=[3, 1, 2, 0]), helper.make_node("Relu", ["c"], ["y"]),
             helper.make_node("Transpose", ["a"], ["d"], perm=[0, 2, 1, 3]),
             helper.make_node("Transpose", ["d"], ["e"], perm=[1, 0, 2, 3]), helper.make_node("Neg", ["e"], ["z"])]
    t = np.tanh(x)
    refs = {"y": np.maximum(t, 0), "s": np.array([5, 3, 4, 2], np.int64), "z": -t.transpose(0, 2, 1, 3).transpose(1, 0, 2, 3)}
    g = helper.make_graph(nodes, "undone", [helper.make_tensor_value_info("x", F, x.shape)],
                          [helper.make_tensor_value_info("y", F, x.shape),
                           helper.make_tensor_value_info("s", TensorProto.INT64, [4]),
                           helper.make_tensor_value_info("z", F, refs["z"].shape)])
    return g, {"x": x}, refs


CASES = {"chains": (chains, 8), "random_not_merged": (random_not_merged, 1), "undone_transposes": (undone_transposes, 2)}


def main():
    return 1 if check_cases(sys.argv[1], CASES, 17) else 0


if __name__ == "__main__":
    sys.exit(main())
