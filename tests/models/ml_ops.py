"""TfIdfVectorizer, the ai.onnx.ml tree ensembles (TreeEnsemble, TreeEnsembleRegressor,
TreeEnsembleClassifier) and LabelEncoder against ONNX's reference implementation
(onnx.reference, onnx >= 1.16), past what ONNX's node tests cover: the IDF and TFIDF modes with
weights, unigrams with skips, aggregates, base values, labels and post-transforms (the
reference leaves TreeEnsemble's out: applied here with numpy), numeric label maps with a NaN
key, and the errors for strings and malformed trees.

    ml_ops.py LIBVKINFER_SO   (run with the onnx 1.23 venv's python)"""
import os
import sys
import tempfile
from statistics import NormalDist

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
os.environ["VKINFER_LIBRARY"] = sys.argv[1]
import vkinfer  # noqa: E402

TMP = tempfile.mkdtemp()
rng = np.random.default_rng(7)
failures = 0


def make(name, node, x, out_type, opsets):
    in_type = onnx.helper.np_dtype_to_tensor_dtype(x.dtype)
    g = h.make_graph([node], name, [h.make_tensor_value_info("X", in_type, x.shape)],
                     [h.make_tensor_value_info("Y", out_type, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid(d, v) for d, v in opsets])


def case(name, node, x, out_type, opsets, post=None, tol=1e-5, expect_error=None, ref_node=None, nan_to=None, ref_x=None):
    global failures
    model = make(name, node, x, out_type, opsets)
    path = os.path.join(TMP, name + ".onnx")
    onnx.save(model, path)
    try:
        got = vkinfer.Session(path).run({"X": x})["Y"]
    except Exception as e:  # noqa: BLE001
        ok = expect_error is not None and expect_error in str(e)
        print(("PASS " if ok else "FAIL ") + f"{name}: {str(e)[-300:]}")
        failures += not ok
        return
    if expect_error:
        print(f"FAIL {name}: ran, expected the error '{expect_error}'")
        failures += 1
        return
    ref = make(name, ref_node, x, out_type, opsets) if ref_node else model
    want = ReferenceEvaluator(ref).run(None, {"X": x if ref_x is None else ref_x})[0]
    if post:
        want = post(want.astype(np.float64)).astype(want.dtype)
    if nan_to is not None:  # the spec: a NaN key matches every NaN (the reference's dict matches none)
        want = np.where(np.isnan(x), nan_to, want).astype(want.dtype)
    ok = got.shape == want.shape and got.dtype == want.dtype and np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
    detail = f"{got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}"
    if got.shape == want.shape:
        detail += f", max error {np.max(np.abs(got.astype(np.float64) - want)):.3g}"
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    failures += not ok


# ---- TfIdfVectorizer ----
ONNX = [("", 12)]
tokens = rng.integers(1, 9, (3, 14)).astype(np.int32)
for mode in ("TF", "IDF", "TFIDF"):
    for weights in (None, [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 2.5, 0.75]):
        # 5 unigrams, then 3 bigrams; unigrams count once, bigrams at skips 0 to 2
        attrs = dict(mode=mode, min_gram_length=1, max_gram_length=2, max_skip_count=2, ngram_counts=[0, 5],
                     ngram_indexes=[0, 1, 2, 3, 4, 5, 6, 7], pool_int64s=[2, 3, 5, 4, 7, 2, 3, 5, 6, 7, 8])
        node = h.make_node("TfIdfVectorizer", ["X"], ["Y"], **attrs, **({"weights": weights} if weights else {}))
        # the reference fails without weights: ones give what no weights mean
        ref = h.make_node("TfIdfVectorizer", ["X"], ["Y"], **attrs, weights=weights or [1.0] * 8)
        case(f"tfidf_{mode}_{'weights' if weights else 'plain'}", node, tokens, TensorProto.FLOAT, ONNX, ref_node=ref)
node = h.make_node("TfIdfVectorizer", ["X"], ["Y"], mode="TF", min_gram_length=2, max_gram_length=3, max_skip_count=1,
                   ngram_counts=[0, 2, 4], ngram_indexes=[3, 0, 2, 1, 1, 4], pool_int64s=[1, 2, 2, 1, 1, 2, 3, 4, 5, 6])
case("tfidf_trigrams_shared_columns", node, rng.integers(1, 7, (20,)).astype(np.int64), TensorProto.FLOAT, ONNX)
node = h.make_node("TfIdfVectorizer", ["X"], ["Y"], mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0,
                   ngram_counts=[0], ngram_indexes=[0, 1], pool_strings=["a", "b"])
case("tfidf_strings", node, tokens, TensorProto.FLOAT, ONNX, expect_error="strings unsupported")

# ---- TreeEnsemble ----
ML5 = [("", 21), ("ai.onnx.ml", 5)]


def softmax(v, zero=False):
    e = np.exp(v - v.max(axis=1, keepdims=True))
    if zero:
        e = np.where(np.abs(v) > 1e-7, e, 0)
    return e / e.sum(axis=1, keepdims=True)


POSTS = {0: None, 1: softmax, 2: lambda v: 1 / (1 + np.exp(-v)), 3: lambda v: softmax(v, True),
         4: np.vectorize(lambda p: NormalDist().inv_cdf(p))}


def tensor(name, values, dtype):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def forest(**over):
    # tree 0: x0 <= 0.2 ? (x1 in {1, 3} ? leaf 0 : leaf 1) : (x2 > -0.5 ? leaf 2 : leaf 3); tree 1: x1 < 2 ? leaf 4 : leaf 5
    attrs = dict(
        nodes_featureids=[0, 1, 2, 1], nodes_modes=tensor("m", [0, 6, 3, 1], np.uint8),
        nodes_splits=tensor("s", [0.2, 0.0, -0.5, 2.0], np.float32),
        nodes_truenodeids=[1, 0, 2, 4], nodes_trueleafs=[0, 1, 1, 1], nodes_falsenodeids=[2, 1, 3, 5],
        nodes_falseleafs=[0, 1, 1, 1], nodes_missing_value_tracks_true=[1, 0, 0, 1],
        membership_values=tensor("mv", [1.0, 3.0, np.nan], np.float32),
        leaf_targetids=[0, 1, 2, 0, 1, 2], leaf_weights=tensor("w", [0.5, -1.25, 2.0, 0.75, 0.3, -0.6], np.float32),
        tree_roots=[0, 3], n_targets=3, aggregate_function=1, post_transform=0)
    attrs.update(over)
    return h.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", **attrs)


X = rng.choice([-1.0, 0.0, 1.0, 2.0, 3.0, np.nan], (40, 3)).astype(np.float32)
for agg in range(4):
    case(f"tree_aggregate{agg}", forest(aggregate_function=agg), X, TensorProto.FLOAT, ML5)
for post in range(1, 5):
    # PROBIT: one target, each row's sum in (0, 1); ONNX Runtime's approximation of erfinv
    weights = tensor("w", [0.1, 0.35, 0.2, 0.05, 0.3, 0.45], np.float32)
    one = dict(n_targets=1, leaf_targetids=[0] * 6) if post == 4 else {}
    case(f"tree_post{post}", forest(post_transform=post, leaf_weights=weights, **one), X, TensorProto.FLOAT, ML5,
         post=POSTS[post], tol=3e-3 if post == 4 else 1e-5)
case("tree_cycle", forest(nodes_truenodeids=[2, 0, 0, 4], nodes_trueleafs=[0, 1, 0, 1]), X, TensorProto.FLOAT, ML5,
     expect_error="has a cycle")
case("tree_bad_target", forest(leaf_targetids=[0, 1, 2, 0, 1, 3]), X, TensorProto.FLOAT, ML5,
     expect_error="target (or class) id is 3, outside the 3 targets")

# ---- TreeEnsembleRegressor and TreeEnsembleClassifier (opset 3) ----
ML3 = [("", 17), ("ai.onnx.ml", 3)]


def legacy(op, prefix, **over):
    # tree 7 (ids out of order, root listed first): n0: x0 <= 0.5 ? n3 : n1; n3: x1 == 2 ? leaf n4 : leaf n5;
    # n1: leaf. tree 2: a single leaf. Leaf n4 holds two weights.
    attrs = dict(nodes_treeids=[7, 7, 7, 7, 2], nodes_nodeids=[0, 3, 1, 4, 0], nodes_featureids=[0, 1, 0, 0, 0],
                 nodes_modes=["BRANCH_LEQ", "BRANCH_EQ", "LEAF", "LEAF", "LEAF"], nodes_values=[0.5, 2.0, 0, 0, 0],
                 nodes_truenodeids=[3, 4, 0, 0, 0], nodes_falsenodeids=[1, 5, 0, 0, 0],
                 nodes_missing_value_tracks_true=[0, 1, 0, 0, 0])
    attrs["nodes_treeids"].append(7), attrs["nodes_nodeids"].append(5), attrs["nodes_featureids"].append(0)
    attrs["nodes_modes"].append("LEAF"), attrs["nodes_values"].append(0), attrs["nodes_truenodeids"].append(0)
    attrs["nodes_falsenodeids"].append(0), attrs["nodes_missing_value_tracks_true"].append(0)
    attrs.update({f"{prefix}_treeids": [7, 7, 7, 7, 2], f"{prefix}_nodeids": [4, 1, 5, 4, 0],
                  f"{prefix}_ids": [0, 1, 2, 2, 1], f"{prefix}_weights": [0.4, -0.7, 1.1, 0.25, 0.6]})
    attrs.update(over)
    return h.make_node(op, ["X"], ["Y"] if prefix == "target" else ["L", "Y"], domain="ai.onnx.ml", **attrs)


XL = rng.choice([-1.0, 0.0, 1.0, 2.0, np.nan], (30, 2)).astype(np.float32)
for agg in ("SUM", "AVERAGE", "MIN", "MAX"):
    case(f"regressor_{agg}", legacy("TreeEnsembleRegressor", "target", n_targets=3, aggregate_function=agg,
                                    base_values=[0.5, -1.0, 2.0]), XL, TensorProto.FLOAT, ML3)
XI = rng.integers(-1, 3, (9, 2)).astype(np.int64)  # the reference computes in X's dtype: given floats
case("regressor_logistic_int_x", legacy("TreeEnsembleRegressor", "target", n_targets=3, post_transform="LOGISTIC"),
     XI, TensorProto.FLOAT, ML3, post=POSTS[2], ref_node=legacy("TreeEnsembleRegressor", "target", n_targets=3),
     ref_x=XI.astype(np.float32))
case("regressor_bad_child", legacy("TreeEnsembleRegressor", "target", n_targets=3, nodes_truenodeids=[9, 4, 0, 0, 0, 0]),
     XL, TensorProto.FLOAT, ML3, expect_error="its true node 9 does not exist")


def classifier_case(name, node, x, want_scores_post=None):
    global failures
    g = h.make_graph([node], name, [h.make_tensor_value_info("X", TensorProto.FLOAT, x.shape)],
                     [h.make_tensor_value_info("L", TensorProto.INT64, None), h.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = h.make_model(g, opset_imports=[h.make_opsetid(d, v) for d, v in ML3])
    path = os.path.join(TMP, name + ".onnx")
    onnx.save(model, path)
    got = vkinfer.Session(path).run({"X": x})
    labels, scores = ReferenceEvaluator(model).run(None, {"X": x})
    ok = np.array_equal(got["L"], labels) and np.allclose(got["Y"], scores, rtol=1e-5, atol=1e-5)
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": labels {got['L']} vs {labels}, scores max error "
                                                  f"{np.max(np.abs(got['Y'] - scores)) if got['Y'].shape == scores.shape else got['Y'].shape}"))
    failures += not ok


classifier_case("classifier_softmax", legacy("TreeEnsembleClassifier", "class", classlabels_int64s=[10, 20, 30],
                                             post_transform="SOFTMAX", base_values=[0.1, 0.25, -0.3]), XL)
classifier_case("classifier_none", legacy("TreeEnsembleClassifier", "class", classlabels_int64s=[4, 5, 6]), XL)
binary = dict(class_ids=[0, 0, 0, 0, 0], classlabels_int64s=[1])
classifier_case("classifier_binary_logistic", legacy("TreeEnsembleClassifier", "class", post_transform="LOGISTIC", **binary), XL)
classifier_case("classifier_binary_none", legacy("TreeEnsembleClassifier", "class", **binary), XL)
classifier_case("classifier_binary_two_labels", legacy("TreeEnsembleClassifier", "class", class_ids=[0] * 5,
                                                       classlabels_int64s=[3, 8]), XL)

# ---- LabelEncoder ----
ML4 = [("", 21), ("ai.onnx.ml", 4)]
node = h.make_node("LabelEncoder", ["X"], ["Y"], domain="ai.onnx.ml", keys_int64s=[5, -3, 7, 5, 1 << 40],
                   values_floats=[0.5, 1.5, -2.0, 4.0, 9.0], default_float=-7.0)
case("label_int_to_float", node, rng.integers(-4, 9, (4, 5)).astype(np.int64), TensorProto.FLOAT, ML4)
node = h.make_node("LabelEncoder", ["X"], ["Y"], domain="ai.onnx.ml", keys_floats=[0.5, np.nan, -1.0, 2.25],
                   values_int64s=[3, 4, 5, 6])
case("label_float_to_int", node, rng.choice([0.5, np.nan, -1.0, 2.25, 8.0], (17,)).astype(np.float32), TensorProto.INT64,
     ML4, nan_to=4)
node = h.make_node("LabelEncoder", ["X"], ["Y"], domain="ai.onnx.ml", keys_tensor=tensor("k", [1, 2, 3], np.int32),
                   values_tensor=tensor("v", [10, 20, 30], np.int32), default_tensor=tensor("d", [-5], np.int32))
case("label_tensors_int32", node, rng.integers(0, 5, (3, 4)).astype(np.int32), TensorProto.INT32, ML4)
node = h.make_node("LabelEncoder", ["X"], ["Y"], domain="ai.onnx.ml", keys_int64s=[1, 2], values_strings=["a", "b"])
case("label_strings", node, np.array([1, 2], np.int64), TensorProto.STRING, ML4, expect_error="strings unsupported")
sys.exit(1 if failures else 0)
