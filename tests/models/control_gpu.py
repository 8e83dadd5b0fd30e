"""If and Loop whose condition the GPU computes from data (docs/architecture.md, "Control flow"):
If runs both branches and selects each output by the condition on the GPU; a Loop runs all M
iterations, each one's state kept while the condition holds. x has 12 floats, too many to
key a plan on its values, so one plan serves every input: one session runs inputs that take
each way, against numpy; a If whose branches disagree in shape and a Loop with scan outputs
are clear errors.

    control_gpu.py LIBVKINFER_SO"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
os.environ["VKINFER_LIBRARY"] = sys.argv[1]
import vkinfer  # noqa: E402

TMP = tempfile.mkdtemp()
failures = 0
F = TensorProto.FLOAT


def check(name, ok, detail=""):
    global failures
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    failures += not ok


def save(name, nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    path = os.path.join(TMP, name + ".onnx")
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def const(name, value, dtype=np.float32):
    return h.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(value, dtype), name))


x_info = h.make_tensor_value_info("x", F, [3, 4])
y_info = h.make_tensor_value_info("y", F, [3, 4])

# If (sum(x) > 0): y = x * 2 + 1, else y = x - 3, reading x from the outer scope
then_g = h.make_graph([const("two", 2.0), const("one", 1.0), h.make_node("Mul", ["x", "two"], ["t"]),
                       h.make_node("Add", ["t", "one"], ["then_y"])], "then", [],
                      [h.make_tensor_value_info("then_y", F, [3, 4])])
else_g = h.make_graph([const("three", 3.0), h.make_node("Sub", ["x", "three"], ["else_y"])], "else", [],
                      [h.make_tensor_value_info("else_y", F, [3, 4])])
nodes = [h.make_node("ReduceSum", ["x"], ["s"], keepdims=0), const("zero", 0.0), h.make_node("Greater", ["s", "zero"], ["c"]),
         h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
sess = vkinfer.Session(save("if_gpu", nodes, [x_info], [y_info]))
rng = np.random.default_rng(0)
for trial in range(6):
    x = (rng.standard_normal((3, 4)) + (2.0 if trial % 2 else -2.0)).astype(np.float32)
    want = x * 2 + 1 if x.sum() > 0 else x - 3
    got = sess.run({"x": x})["y"]
    check(f"If on a GPU condition, run {trial} ({'then' if x.sum() > 0 else 'else'})", np.allclose(got, want, atol=1e-6),
          (got, want))

check("If: one plan for both ways", sess.stats()["plans_cached"] == 1, sess.stats())

# the branches disagree in shape: an error that says so
else_bad = h.make_graph([const("three", 3.0), h.make_node("ReduceSum", ["x"], ["r"], keepdims=1),
                         h.make_node("Sub", ["r", "three"], ["else_y"])], "else", [],
                        [h.make_tensor_value_info("else_y", F, None)])
nodes_bad = nodes[:3] + [h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_bad)]
try:
    vkinfer.Session(save("if_gpu_shapes", nodes_bad, [x_info], [h.make_tensor_value_info("y", F, None)])).run(
        {"x": np.ones((3, 4), np.float32)})
    check("If branches of two shapes refused", False, "it ran")
except Exception as err:  # noqa: BLE001  vkinfer's error
    check("If branches of two shapes refused", "have shapes" in str(err) and "[3,4]" in str(err), str(err))

# Loop, M = 8: while sum(v) < limit: v = v * 2 + 1 (the condition computed in the body and,
# for the first iteration, outside), count the iterations taken in a carried int64
body = h.make_graph(
    [const("two", 2.0), const("one", 1.0), const("limit", 40.0), const("inc", 1, np.int64),
     h.make_node("Mul", ["v_in", "two"], ["m"]), h.make_node("Add", ["m", "one"], ["v_out"]),
     h.make_node("Add", ["n_in", "inc"], ["n_out"]),
     h.make_node("ReduceSum", ["v_out"], ["s"], keepdims=0), h.make_node("Less", ["s", "limit"], ["c_out"])],
    "body",
    [h.make_tensor_value_info("i", TensorProto.INT64, []), h.make_tensor_value_info("c_in", TensorProto.BOOL, []),
     h.make_tensor_value_info("v_in", F, [3, 4]), h.make_tensor_value_info("n_in", TensorProto.INT64, [])],
    [h.make_tensor_value_info("c_out", TensorProto.BOOL, []), h.make_tensor_value_info("v_out", F, [3, 4]),
     h.make_tensor_value_info("n_out", TensorProto.INT64, [])])
loop_nodes = [const("M", 8, np.int64), const("limit0", 40.0), const("n0", 0, np.int64),
              h.make_node("ReduceSum", ["x"], ["s0"], keepdims=0), h.make_node("Less", ["s0", "limit0"], ["c0"]),
              h.make_node("Loop", ["M", "c0", "x", "n0"], ["y", "n"], body=body)]
n_info = h.make_tensor_value_info("n", TensorProto.INT64, [])
sess = vkinfer.Session(save("loop_gpu", loop_nodes, [x_info], [y_info, n_info]))


def loop_ref(x):
    v, n = x.copy(), 0
    cond = v.sum() < 40
    for _ in range(8):
        if not cond:
            break
        v = v * 2 + 1
        n += 1
        cond = v.sum() < 40
    return v, n


for scale in (-1.0, 0.0, 0.2, 1.0, 3.0, 10.0):
    x = (np.arange(12, dtype=np.float32).reshape(3, 4) / 5 * scale).astype(np.float32)
    want_v, want_n = loop_ref(x)
    out = sess.run({"x": x})
    check(f"Loop on a GPU condition, x scale {scale} ({want_n} iterations)",
          np.allclose(out["y"], want_v, rtol=1e-6) and int(out["n"]) == want_n, (out["y"], out["n"], want_v, want_n))

check("Loop: one plan for every trip count", sess.stats()["plans_cached"] == 1, sess.stats())

# scan outputs of a data-dependent length: the condition is read back before each iteration
# (one wait each), and the plan made for the trip count found
body_scan = h.make_graph(body.node, "body", body.input,
                         list(body.output) + [h.make_tensor_value_info("v_out", F, [3, 4])])
body_scan.output[3].name = "v_scan"
body_scan.node.extend([h.make_node("Identity", ["v_out"], ["v_scan"])])
scan_nodes = loop_nodes[:5] + [h.make_node("Loop", ["M", "c0", "x", "n0"], ["y", "n", "ys"], body=body_scan)]
sess = vkinfer.Session(save("loop_gpu_scan", scan_nodes, [x_info],
                            [y_info, n_info, h.make_tensor_value_info("ys", F, None)]))


def loop_scan_ref(x, trips=8, limit=40.0):
    v, n, ys = x.copy(), 0, []
    cond = v.sum() < limit
    for _ in range(trips):
        if not cond:
            break
        v = v * 2 + 1
        n += 1
        ys.append(v)
        cond = v.sum() < limit
    return v, n, np.stack(ys) if ys else np.zeros((0, 3, 4), np.float32)


for scale in (3.0, -1.0, 1.0, 0.2, 3.0, 10.0):
    x = (np.arange(12, dtype=np.float32).reshape(3, 4) / 5 * scale).astype(np.float32)
    want_v, want_n, want_ys = loop_scan_ref(x)
    try:
        out = sess.run({"x": x})
        ok = np.allclose(out["y"], want_v, rtol=1e-6) and int(out["n"]) == want_n and out["ys"].shape == want_ys.shape \
            and np.allclose(out["ys"], want_ys, rtol=1e-6)
        check(f"Loop with scan outputs on a GPU condition, x scale {scale} ({want_n} iterations)", ok,
              (out["ys"].shape, want_ys.shape, out["n"], want_n))
    except Exception as err:  # noqa: BLE001
        check(f"Loop with scan outputs on a GPU condition, x scale {scale} ({want_n} iterations)",
              want_n == 0 and "runs 0 times" in str(err), str(err))

# no trip count M: the body runs while its condition (computed on the GPU) holds
nom_nodes = loop_nodes[1:5] + [h.make_node("Loop", ["", "c0", "x", "n0"], ["y", "n"], body=body)]
sess = vkinfer.Session(save("loop_gpu_no_m", nom_nodes, [x_info], [y_info, n_info]))
for scale in (0.0, 0.2, 1.0, 3.0, 0.0, 10.0):
    x = (np.arange(12, dtype=np.float32).reshape(3, 4) / 5 * scale).astype(np.float32)
    want_v, want_n, _ = loop_scan_ref(x, trips=1000)
    out = sess.run({"x": x})
    check(f"Loop without M on a GPU condition, x scale {scale} ({want_n} iterations)",
          np.allclose(out["y"], want_v, rtol=1e-6) and int(out["n"]) == want_n, (out["y"], out["n"], want_v, want_n))

# a trip count computed on the GPU (the number of positive elements of x): read back once
count_nodes = [const("zero_f", 0.0), const("n0", 0, np.int64), const("true", True, np.bool_),
               h.make_node("Greater", ["x", "zero_f"], ["pos"]), h.make_node("Cast", ["pos"], ["pos_i"], to=TensorProto.INT64),
               h.make_node("ReduceSum", ["pos_i"], ["M"], keepdims=0),
               h.make_node("Loop", ["M", "true", "x", "n0"], ["y", "n"], body=h.make_graph(
                   [const("two", 2.0), const("one", 1.0), const("inc", 1, np.int64),
                    h.make_node("Mul", ["v_in", "two"], ["m"]), h.make_node("Add", ["m", "one"], ["v_out"]),
                    h.make_node("Add", ["n_in", "inc"], ["n_out"]), h.make_node("Identity", ["c_in"], ["c_out"])],
                   "body", body.input, body.output))]
sess = vkinfer.Session(save("loop_gpu_m", count_nodes, [x_info], [y_info, n_info]))
for k in (3, 0, 7, 3):
    x = np.full((3, 4), -1.0, np.float32)
    x.flat[:k] = 0.5
    want_v = x.copy()
    for _ in range(k):
        want_v = want_v * 2 + 1
    out = sess.run({"x": x})
    check(f"Loop with a trip count computed on the GPU ({k})", np.allclose(out["y"], want_v) and int(out["n"]) == k,
          (out["y"], out["n"], k))

# two loops read back in one graph: the first without M (its conditions read one round at a
# time), the second, independent of it, with M from data, decided in the same first round;
# each must take its own reads in every round
two_nodes = nom_nodes + [h.make_node(nd.op_type, list(nd.input), [o + "2" if o in ("y", "n") else o for o in nd.output],
                                     **{a.name: h.get_attribute_value(a) for a in nd.attribute})
                         for nd in count_nodes if nd.op_type != "Constant" or nd.output[0] in ("zero_f", "true")]
sess = vkinfer.Session(save("loop_gpu_two", two_nodes, [x_info],
                            [y_info, n_info, h.make_tensor_value_info("y2", F, [3, 4]),
                             h.make_tensor_value_info("n2", TensorProto.INT64, [])]))
for scale in (0.0, 1.0, 3.0):
    x = (np.arange(12, dtype=np.float32).reshape(3, 4) / 5 * scale - 0.5).astype(np.float32)
    v1, k1, _ = loop_scan_ref(x, trips=1000)
    k2 = int((x > 0).sum())
    v2 = x.copy()
    for _ in range(k2):
        v2 = v2 * 2 + 1
    out = sess.run({"x": x})
    check(f"two read-back loops, x scale {scale} ({k1} then {k2} iterations)",
          np.allclose(out["y"], v1, rtol=1e-6) and int(out["n"]) == k1 and np.allclose(out["y2"], v2, rtol=1e-5) and
          int(out["n2"]) == k2, (out["n"], k1, out["n2"], k2))

# a trip count from data outside [0, 100000]: a clear error, not a crash
big_nodes = [const("big", 100000, np.int64)] + count_nodes[:-1] + [
    h.make_node("Mul", ["M", "big"], ["M_big"]),
    h.make_node("Loop", ["M_big"] + list(count_nodes[-1].input[1:]), list(count_nodes[-1].output),
                body=count_nodes[-1].attribute[0].g)]
try:
    x = np.ones((3, 4), np.float32)
    vkinfer.Session(save("loop_gpu_big_m", big_nodes, [x_info], [y_info, n_info])).run({"x": x})
    check("a trip count from data above the limit refused", False, "it ran")
except Exception as err:  # noqa: BLE001
    check("a trip count from data above the limit refused", "outside the range" in str(err) and "Loop" in str(err), str(err))

# no M and a body that passes its true condition through: a loop that never ends, refused
forever = [const("n0", 0, np.int64), const("true", True, np.bool_),
           h.make_node("Loop", ["", "true", "x", "n0"], ["y", "n"], body=count_nodes[-1].attribute[0].g)]
try:
    vkinfer.Session(save("loop_forever", forever, [x_info], [y_info, n_info])).run({"x": np.ones((3, 4), np.float32)})
    check("a Loop that never ends refused", False, "it ran")
except Exception as err:  # noqa: BLE001
    check("a Loop that never ends refused", "never ends" in str(err), str(err))

# more iterations than a plan reads values back: a clear error
slow_nodes = [const("n0", 0, np.int64), const("true", True, np.bool_),
              h.make_node("Loop", ["", "true", "x", "n0"], ["y", "n"], body=h.make_graph(
                  [const("one", 1.0), const("inc", 1, np.int64), const("limit", 1e6),
                   h.make_node("Add", ["v_in", "one"], ["v_out"]), h.make_node("Add", ["n_in", "inc"], ["n_out"]),
                   h.make_node("ReduceSum", ["v_out"], ["s"], keepdims=0), h.make_node("Less", ["s", "limit"], ["c_out"])],
                  "body", body.input, body.output))]
try:
    vkinfer.Session(save("loop_gpu_long", slow_nodes, [x_info], [y_info, n_info])).run({"x": np.zeros((3, 4), np.float32)})
    check("a Loop reading back more conditions than a plan may refused", False, "it ran")
except Exception as err:  # noqa: BLE001
    check("a Loop reading back more conditions than a plan may refused", "data-dependent sizes" in str(err), str(err))

print("PASS" if not failures else f"FAIL ({failures})")
sys.exit(1 if failures else 0)
