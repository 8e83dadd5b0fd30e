"""Zero-size tensors through every op family: a batch or a dimension of 0 must give the empty
(or, where the op makes one, the filled) output of the right shape, not a crash, an error or
a validation message. Inputs are zeros; expected values are the op's on zeros.

    zero_size.py VKINFER"""
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
results = []


def run(name, nodes, inits, shape, want_shape, want_value):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, shape)], [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(v, k) for k, v in inits.items()])
    path = os.path.join(TMP, name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path)
    x = os.path.join(TMP, "x.npy")
    np.save(x, np.zeros(shape, np.float32))
    out = os.path.join(TMP, "out_" + name)
    r = subprocess.run([VKINFER, "run", path, "--input", "x=" + x, "--output-dir", out], capture_output=True, text=True)
    ok, why = r.returncode == 0, (r.stderr.strip().splitlines() or [""])[-1][:200]
    if ok:
        y = np.load(os.path.join(out, "y.npy"))
        ok = y.shape == want_shape and bool(np.all(y == want_value))
        why = f"shape {y.shape}, expected {want_shape}; values {np.unique(y)[:4]}, expected {want_value}"
    print(("PASS " if ok else "FAIL ") + f"{name}: {why}")
    results.append(ok)


W = np.ones((4, 3, 3, 3), np.float32)
run("conv", [h.make_node("Conv", ["x", "W"], ["y"], pads=[1, 1, 1, 1])], {"W": W}, [0, 3, 8, 8], (0, 4, 8, 8), 0.0)
run("maxpool", [h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2])], {}, [0, 3, 8, 8], (0, 3, 7, 7), 0.0)
run("gap", [h.make_node("GlobalAveragePool", ["x"], ["y"])], {}, [0, 3, 8, 8], (0, 3, 1, 1), 0.0)
run("bn", [h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])], {k: np.ones(3, np.float32) for k in "sbmv"}, [0, 3, 8, 8], (0, 3, 8, 8), 0.0)
run("matmul", [h.make_node("MatMul", ["x", "B"], ["y"])], {"B": np.ones((5, 7), np.float32)}, [0, 5], (0, 7), 0.0)
run("gemm", [h.make_node("Gemm", ["x", "B"], ["y"])], {"B": np.ones((5, 7), np.float32)}, [0, 5], (0, 7), 0.0)
run("softmax", [h.make_node("Softmax", ["x"], ["y"])], {}, [0, 5], (0, 5), 0.0)
run("reduce", [h.make_node("ReduceMean", ["x"], ["y"], axes=[1])], {}, [0, 5], (0, 1), 0.0)
run("reduce0", [h.make_node("ReduceSum", ["x"], ["y"], keepdims=1)], {}, [0, 5], (1, 1), 0.0)
run("layernorm", [h.make_node("LayerNormalization", ["x", "s"], ["y"], axis=-1)], {"s": np.ones(5, np.float32)}, [0, 5], (0, 5), 0.0)
run("concat", [h.make_node("Concat", ["x", "c"], ["y"], axis=0)], {"c": np.ones((2, 5), np.float32)}, [0, 5], (2, 5), 1.0)
run("gather", [h.make_node("Gather", ["x", "i"], ["y"])], {"i": np.zeros(0, np.int64)}, [4, 5], (0, 5), 0.0)
run("transpose", [h.make_node("Transpose", ["x"], ["y"])], {}, [0, 5], (5, 0), 0.0)
run("slice", [h.make_node("Slice", ["x", "st", "en"], ["y"])], {"st": np.array([1], np.int64), "en": np.array([1], np.int64)}, [4, 5], (0, 5), 0.0)
run("resize", [h.make_node("Resize", ["x", "", "sc"], ["y"])], {"sc": np.array([1, 1, 2, 2], np.float32)}, [0, 3, 4, 4], (0, 3, 8, 8), 0.0)
run("topk", [h.make_node("TopK", ["x", "k"], ["y", "idx"])], {"k": np.array([0], np.int64)}, [3, 5], (3, 0), 0.0)
run("convT", [h.make_node("ConvTranspose", ["x", "W"], ["y"])], {"W": np.ones((3, 4, 3, 3), np.float32)}, [0, 3, 8, 8], (0, 4, 10, 10), 0.0)
run("pad", [h.make_node("Pad", ["x", "p"], ["y"], mode="reflect")], {"p": np.array([0, 1, 0, 1], np.int64)}, [0, 5], (0, 7), 0.0)
run("padc", [h.make_node("Pad", ["x", "p"], ["y"])], {"p": np.array([1, 1, 1, 1], np.int64)}, [0, 5], (2, 7), 0.0)
run("tile", [h.make_node("Tile", ["x", "r"], ["y"])], {"r": np.array([2, 3], np.int64)}, [0, 5], (0, 15), 0.0)
run("expand", [h.make_node("Expand", ["x", "s"], ["y"])], {"s": np.array([2, 0, 5], np.int64)}, [0, 5], (2, 0, 5), 0.0)
run("split", [h.make_node("Split", ["x"], ["y", "y2"], axis=1)], {}, [0, 6], (0, 3), 0.0)
run("cumsum", [h.make_node("CumSum", ["x", "a"], ["y"])], {"a": np.array(1, np.int64)}, [0, 5], (0, 5), 0.0)
run("d2s", [h.make_node("DepthToSpace", ["x"], ["y"], blocksize=2)], {}, [0, 8, 2, 2], (0, 2, 4, 4), 0.0)
run("lrn", [h.make_node("LRN", ["x"], ["y"], size=3)], {}, [0, 3, 4, 4], (0, 3, 4, 4), 0.0)
run("inorm", [h.make_node("InstanceNormalization", ["x", "s", "b"], ["y"])], {"s": np.ones(3, np.float32), "b": np.ones(3, np.float32)}, [0, 3, 4, 4], (0, 3, 4, 4), 0.0)
run("inorm2", [h.make_node("InstanceNormalization", ["x", "s", "b"], ["y"])], {"s": np.ones(3, np.float32), "b": np.ones(3, np.float32)}, [2, 3, 0, 4], (2, 3, 0, 4), 0.0)
run("where", [h.make_node("Less", ["x", "x"], ["c"]), h.make_node("Where", ["c", "x", "x"], ["y"])], {}, [0, 5], (0, 5), 0.0)
run("pow", [h.make_node("Pow", ["x", "e"], ["y"])], {"e": np.array(2, np.float32)}, [0, 5], (0, 5), 0.0)
run("argmax", [h.make_node("ArgMax", ["x"], ["i"], axis=1), h.make_node("Cast", ["i"], ["y"], to=1)], {}, [0, 5], (0, 1), 0.0)
run("einsum", [h.make_node("Einsum", ["x", "B"], ["y"], equation="ij,jk->ik")], {"B": np.ones((5, 2), np.float32)}, [0, 5], (0, 2), 0.0)
run("avgpool", [h.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2])], {}, [2, 0, 8, 8], (2, 0, 7, 7), 0.0)
run("softmax0", [h.make_node("Softmax", ["x"], ["y"], axis=0)], {}, [0, 5], (0, 5), 0.0)
run("mvn", [h.make_node("MeanVarianceNormalization", ["x"], ["y"])], {}, [0, 3, 4, 4], (0, 3, 4, 4), 0.0)
run("matmul0k", [h.make_node("MatMul", ["x", "B"], ["y"])], {"B": np.ones((0, 7), np.float32)}, [3, 0], (3, 7), 0.0)
run("onehot", [h.make_node("OneHot", ["x", "d", "v"], ["y"])], {"d": np.array(3, np.float32), "v": np.array([0, 1], np.float32)}, [0, 2], (0, 2, 3), 0.0)
run("gatherel", [h.make_node("GatherElements", ["x", "i"], ["y"], axis=0)], {"i": np.zeros((0, 5), np.int64)}, [3, 5], (0, 5), 0.0)
run("scatter", [h.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=0)], {"i": np.zeros((0, 5), np.int64), "u": np.zeros((0, 5), np.float32)}, [3, 5], (3, 5), 0.0)
# PyTorch's opset < 18 GroupNorm (one norm pass when fused) and GroupNormalization at batch 0
run("groupnorm_pattern", [h.make_node("Reshape", ["x", "gs"], ["r"]), h.make_node("InstanceNormalization", ["r", "s", "b"], ["n"]),
                          h.make_node("Shape", ["x"], ["xs"]), h.make_node("Reshape", ["n", "xs"], ["rb"]),
                          h.make_node("Mul", ["rb", "w"], ["m"]), h.make_node("Add", ["m", "w"], ["y"])],
    {"gs": np.array([0, 2, 18], np.int64), "s": np.ones(2, np.float32), "b": np.zeros(2, np.float32),
     "w": np.ones((4, 1, 1), np.float32)}, [0, 4, 3, 3], (0, 4, 3, 3), 0.0)
print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
sys.exit(0 if all(results) else 1)
