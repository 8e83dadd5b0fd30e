"""Attention, RMSNormalization and RotaryEmbedding (opset 23) against NumPy, on shapes the ONNX
1.23 node tests do not reach: more keys than attention.glsl keeps in shared memory (2048),
value heads wider than a workgroup, many query rows, multi-query heads, a fully masked row,
rows long enough for the RMS kernel's workgroup form, Scales that broadcast, fp16, and the fp16
execution mode. The models are written with ONNX 1.12's helper (it writes opset 23 nodes
without checking them); the references follow ONNX 1.23's (onnx/reference/ops/op_*.py).

    attention_ops.py VKINFER"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper as h
from onnx import numpy_helper

from onnx_compat import np_dtype_to_tensor_dtype

VKINFER = sys.argv[1]
TMP = tempfile.mkdtemp()
rng = np.random.default_rng(0)
failures = 0


def softmax_guarded(x, masked_rows):
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    e = np.exp(x - m)
    s = np.sum(e, axis=-1, keepdims=True)
    p = e / np.where(s == 0, 1, s)
    return np.where(masked_rows, 0, p)


def attention_ref(q, k, v, mask=None, past_k=None, past_v=None, scale=None, causal=False, q_heads=None,
                  kv_heads=None, softcap=0.0, mode=0):
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    three_d = q.ndim == 3
    if three_d:
        def heads(a, n):
            return a.reshape(a.shape[0], a.shape[1], n, -1).transpose(0, 2, 1, 3)
        q, k, v = heads(q, q_heads), heads(k, kv_heads), heads(v, kv_heads)
    scale = 1 / np.sqrt(q.shape[3]) if scale is None else scale
    past = 0
    if past_k is not None:
        past = past_k.shape[2]
        k = np.concatenate([past_k.astype(np.float64), k], axis=2)
        v = np.concatenate([past_v.astype(np.float64), v], axis=2)
    present_k, present_v = k, v
    sq, kv = q.shape[2], k.shape[2]
    bias = np.zeros((sq, kv))
    if mask is not None:
        pad = kv - mask.shape[-1]
        if mask.dtype == np.bool_:
            mask = np.where(mask, 0.0, -np.inf)
        mask = np.pad(mask.astype(np.float64), [(0, 0)] * (mask.ndim - 1) + [(0, pad)], constant_values=-np.inf)
        bias = bias + mask
    if causal:
        bias = bias + np.where(np.arange(kv)[None, :] <= np.arange(sq)[:, None] + past, 0, -np.inf)
    reps = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, reps, axis=1), np.repeat(v, reps, axis=1)
    qk = q @ k.transpose(0, 1, 3, 2) * scale
    if softcap > 0:
        qk = softcap * np.tanh(qk / softcap)
    with_bias = qk + bias
    masked_rows = np.isneginf(np.max(np.broadcast_to(bias, with_bias.shape), axis=-1, keepdims=True))
    p = softmax_guarded(with_bias, masked_rows)
    y = p @ v
    if three_d:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], sq, -1)
    qk_out = {0: qk, 1: qk, 2: with_bias, 3: p}[mode]
    return y, present_k, present_v, qk_out


def rms_ref(x, w, axis, eps):
    x = x.astype(np.float64)
    axes = tuple(range(axis % x.ndim, x.ndim))
    return x / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps) * w.astype(np.float64)


def rotary_ref(x, cos, sin, pos=None, interleaved=False, rot=0, num_heads=0):
    x = x.astype(np.float64)
    shape = x.shape
    x = x.transpose(0, 2, 1, 3) if x.ndim == 4 else x.reshape(shape[0], shape[1], num_heads, -1)
    rot = rot or x.shape[3]
    if pos is not None:
        cos, sin = cos[pos], sin[pos]
    cos, sin = cos.astype(np.float64)[:, :, None, :], sin.astype(np.float64)[:, :, None, :]
    xr = x[..., :rot]
    x1, x2 = (xr[..., 0::2], xr[..., 1::2]) if interleaved else np.split(xr, 2, axis=-1)
    real, imag = cos * x1 - sin * x2, sin * x1 + cos * x2
    xr = np.stack([real, imag], -1).reshape(xr.shape) if interleaved else np.concatenate([real, imag], -1)
    y = np.concatenate([xr, x[..., rot:]], -1)
    return y.reshape(shape) if len(shape) == 3 else y.transpose(0, 2, 1, 3)


def run(name, node, inputs, outputs, want, tol, consts=(), env=None, precision=None):
    """inputs: {name: array} fed at run time; consts: names among them made initializers."""
    global failures
    infos = [h.make_tensor_value_info(n, np_dtype_to_tensor_dtype(a.dtype), a.shape)
             for n, a in inputs.items() if n not in consts]
    inits = [numpy_helper.from_array(a, n) for n, a in inputs.items() if n in consts]
    outs = [h.make_tensor_value_info(n, np_dtype_to_tensor_dtype(np.dtype(t)), None) for n, t in outputs]
    g = h.make_graph([node], name, infos, outs, initializer=inits)
    path = os.path.join(TMP, name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 23)]), path)
    args = [VKINFER, "run", path, "--output-dir", os.path.join(TMP, name)]
    for n, a in inputs.items():
        if n not in consts:
            np.save(os.path.join(TMP, n + ".npy"), a)
            args += ["--input", f"{n}={os.path.join(TMP, n + '.npy')}"]
    if precision:
        args += ["--precision", precision]
    r = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    if r.returncode:
        print(f"FAIL {name}: {r.stderr.strip()[-400:]}")
        failures += 1
        return
    for (n, _), ref in zip(outputs, want):
        got = np.load(os.path.join(TMP, name, n + ".npy")).astype(np.float64)
        ref = np.asarray(ref, np.float64)
        if got.shape != ref.shape:
            print(f"FAIL {name} {n}: shape {got.shape}, expected {ref.shape}")
            failures += 1
            continue
        finite = np.isfinite(ref)
        same_inf = np.array_equal(np.isinf(got), np.isinf(ref)) and np.all(got[~finite] == ref[~finite])
        err = float(np.max(np.abs(got[finite] - ref[finite]), initial=0.0))
        bound = tol * max(1.0, float(np.max(np.abs(ref[finite]), initial=0.0)))
        ok = same_inf and not np.isnan(got).any() and err <= bound
        print(("PASS " if ok else "FAIL ") + f"{name} {n}: max abs error {err:.3g} (bound {bound:.3g})")
        failures += not ok


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# ---- Attention ----
# 2103 keys (past 2100 + 3): logits recomputed rather than kept in shared memory; Dv 80 > 64
# invocations; GQA; causal after a cache; the present outputs
q, k, v = randn(1, 4, 3, 16), randn(1, 2, 3, 16), randn(1, 2, 3, 80)
pk, pv = randn(1, 2, 2100, 16), randn(1, 2, 2100, 80)
node = h.make_node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "present_k", "present_v"], is_causal=1)
y, prk, prv, _ = attention_ref(q, k, v, past_k=pk, past_v=pv, causal=True)
run("attention_long_cache", node, {"q": q, "k": k, "v": v, "pk": pk, "pv": pv},
    [("y", np.float32), ("present_k", np.float32), ("present_v", np.float32)], [y, prk, prv], 1e-5)

# 3-D multi-query heads, 70 query rows, heads of 96, a bool mask with a fully masked row,
# qk_matmul_output with the mask (mode 2), float32 and float16
for dt, tol in ((np.float32, 1e-5), (np.float16, 4e-3)):
    q, k, v = randn(2, 70, 4 * 96, dtype=dt), randn(2, 50, 96, dtype=dt), randn(2, 50, 96, dtype=dt)
    mask = rng.random((70, 50)) < 0.7
    mask[5] = False
    node = h.make_node("Attention", ["q", "k", "v", "mask"], ["y", "", "", "qk"], q_num_heads=4, kv_num_heads=1,
                       qk_matmul_output_mode=2)
    y, _, _, qk = attention_ref(q, k, v, mask=mask, q_heads=4, kv_heads=1, mode=2)
    run(f"attention_mqa_boolmask_{np.dtype(dt).name}", node, {"q": q, "k": k, "v": v, "mask": mask},
        [("y", dt), ("qk", dt)], [y, qk], tol)

# a float mask with -inf entries broadcast over heads, shorter than the keys (padded), softcap,
# an explicit scale, probabilities out (mode 3); and the same in the fp16 execution mode
q, k, v = randn(2, 3, 5, 8), randn(2, 3, 9, 8), randn(2, 3, 9, 8)
mask = randn(2, 1, 5, 7)
mask[:, :, 1, 3] = -np.inf
node = h.make_node("Attention", ["q", "k", "v", "mask"], ["y", "", "", "probs"], softcap=1.5, scale=0.3,
                   qk_matmul_output_mode=3)
y, _, _, p = attention_ref(q, k, v, mask=mask, scale=0.3, softcap=1.5, mode=3)
run("attention_float_mask_softcap", node, {"q": q, "k": k, "v": v, "mask": mask},
    [("y", np.float32), ("probs", np.float32)], [y, p], 1e-5)
# (K and V as weights, held as halves in the fp16 mode, so that the kernels run their f16 forms)
run("attention_float_mask_softcap_fp16_mode", node, {"q": q, "k": k, "v": v, "mask": mask},
    [("y", np.float32), ("probs", np.float32)], [y, p], 1e-2, consts=("k", "v"), precision="fp16")

# ---- RMSNormalization ----
# rows of 300 (the workgroup form when the GPU kernels are forced), a runtime Scale
for dt, tol in ((np.float32, 1e-5), (np.float16, 2e-3)):
    for kernels in ("cpu", "gpu"):
        x, w = randn(5, 300, dtype=dt), randn(300, dtype=dt)
        node = h.make_node("RMSNormalization", ["x", "w"], ["y"], epsilon=1e-3)
        run(f"rms_rows300_{np.dtype(dt).name}_{kernels}", node, {"x": x, "w": w}, [("y", dt)],
            [rms_ref(x, w, -1, 1e-3)], tol, env={"VKINFER_NORM_KERNELS": kernels})
# a constant Scale [4, 1] broadcast inside the normalized [4, 5] (expanded on the host), and a
# Scale [3, 4, 5] that also spans a dim before the axis
x = randn(2, 3, 4, 5)
for wshape, axis in (((4, 1), 2), ((3, 4, 5), 2), ((1, 5), 1)):
    w = randn(*wshape)
    node = h.make_node("RMSNormalization", ["x", "w"], ["y"], axis=axis)
    name = "rms_scale_" + "x".join(map(str, wshape)) + f"_axis{axis}"
    run(name, node, {"x": x, "w": w}, [("y", np.float32)], [rms_ref(x, w, axis, 1e-5)], 1e-5,
        consts=("w",) if wshape == (4, 1) else ())

# ---- RotaryEmbedding ----
x = randn(2, 3, 5, 16)
cos, sin = randn(20, 6), randn(20, 6)
pos = rng.integers(0, 20, (2, 5)).astype(np.int64)
for interleaved in (0, 1):
    node = h.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], interleaved=interleaved,
                       rotary_embedding_dim=12)
    run(f"rotary_partial_interleaved{interleaved}", node, {"x": x, "cos": cos, "sin": sin, "pos": pos},
        [("y", np.float32)], [rotary_ref(x, cos, sin, pos, interleaved, 12)], 1e-5)
x16, cos16, sin16 = randn(2, 5, 3 * 16, dtype=np.float16), randn(2, 5, 8, dtype=np.float16), randn(2, 5, 8, dtype=np.float16)
node = h.make_node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], num_heads=3)
run("rotary_3d_float16", node, {"x": x16, "cos": cos16, "sin": sin16}, [("y", np.float16)],
    [rotary_ref(x16, cos16, sin16, num_heads=3)], 4e-3)

sys.exit(1 if failures else 0)
