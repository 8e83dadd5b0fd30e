"""RNN, GRU and LSTM on the GPU against a NumPy rendering of the ONNX spec, for what the ONNX
node tests leave out: per-batch sequence_lens (steps past a length keep the state and give
zeros in Y; the reverse direction starts at each item's last step, as onnxruntime does), both
directions with layout 1, initial states, peepholes, clip, activations with alpha and beta,
GRU linear_before_reset 1, LSTM input_forget, absent outputs, float16, and the error for an
unsupported activation.

    rnn.py VKINFER"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper as h
from onnx_compat import np_dtype_to_tensor_dtype

VKINFER = sys.argv[1]
TMP = tempfile.mkdtemp()
rng = np.random.default_rng(0)
failures = 0

ACT = {
    "sigmoid": lambda v, a, b: 1 / (1 + np.exp(-v)),
    "tanh": lambda v, a, b: np.tanh(v),
    "relu": lambda v, a, b: np.maximum(v, 0),
    "leakyrelu": lambda v, a, b: np.where(v >= 0, v, a * v),
    "hardsigmoid": lambda v, a, b: np.clip(a * v + b, 0, 1),
    "affine": lambda v, a, b: a * v + b,
    "softsign": lambda v, a, b: v / (1 + np.abs(v)),
}
ALPHA = {"leakyrelu": (True, False), "hardsigmoid": (True, True), "affine": (True, True)}
DEFAULT = {"leakyrelu": (0.01, 0), "hardsigmoid": (0.2, 0.5), "affine": (1, 0)}


def reference(op, X, W, R, B, lens, h0, c0, P, attrs):
    """Y [S, D, N, H], Y_h [D, N, H], Y_c [D, N, H] (layout 0 inputs)"""
    S, N, _ = X.shape
    D, GH, _ = W.shape
    G = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    H = GH // G
    nact = {"RNN": 1, "GRU": 2, "LSTM": 3}[op]
    names = attrs.get("activations", {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                                      "LSTM": ["Sigmoid", "Tanh", "Tanh"]}[op] * D)
    alphas, betas = list(attrs.get("activation_alpha", [])), list(attrs.get("activation_beta", []))
    fns = []
    for name in names:
        n = name.lower()
        ua, ub = ALPHA.get(n, (False, False))
        a, b = DEFAULT.get(n, (0, 0))
        if ua and alphas:
            a = alphas.pop(0)
        if ub and betas:
            b = betas.pop(0)
        fns.append(lambda v, n=n, a=a, b=b: ACT[n](v, a, b))
    clip = attrs.get("clip")
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    B = np.zeros((D, 2 * GH)) if B is None else B
    lens = np.full(N, S) if lens is None else lens
    h0 = np.zeros((D, N, H)) if h0 is None else h0
    c0 = np.zeros((D, N, H)) if c0 is None else c0
    P = np.zeros((D, 3 * H)) if P is None else P
    Y = np.zeros((S, D, N, H))
    Yh, Yc = h0.copy(), c0.copy()
    rev = attrs.get("direction") == "reverse"
    for d in range(D):
        f = fns[d * nact:(d + 1) * nact]
        Wb, Rb = B[d, :GH], B[d, GH:]
        for n in range(N):
            hp, cp = h0[d, n].copy(), c0[d, n].copy()
            steps = range(lens[n])
            if d == 1 or rev:
                steps = reversed(steps)
            for t in steps:
                xw = W[d] @ X[t, n] + Wb
                hr = R[d] @ hp + Rb
                if op == "RNN":
                    hp = f[0](cl(xw + hr))
                elif op == "GRU":
                    z = f[0](cl(xw[:H] + hr[:H]))
                    r = f[0](cl(xw[H:2 * H] + hr[H:2 * H]))
                    if attrs.get("linear_before_reset"):
                        hh = f[1](cl(xw[2 * H:] + r * hr[2 * H:]))
                    else:
                        hh = f[1](cl(xw[2 * H:] + R[d, 2 * H:] @ (r * hp) + Rb[2 * H:]))
                    hp = (1 - z) * hh + z * hp
                else:
                    g = xw + hr
                    i = f[0](cl(g[:H] + P[d, :H] * cp))
                    fg = 1 - i if attrs.get("input_forget") else f[0](cl(g[2 * H:3 * H] + P[d, 2 * H:] * cp))
                    c = fg * cp + i * f[1](cl(g[3 * H:]))
                    o = f[0](cl(g[H:2 * H] + P[d, H:2 * H] * c))
                    hp, cp = o * f[2](c), c
                Y[t, d, n] = hp
            Yh[d, n], Yc[d, n] = hp, cp
    return Y, Yh, Yc


def case(name, op, S=5, N=3, I=4, H=6, dtype=np.float32, tol=1e-4, lens=None, h0=False, c0=False, P=False,
         B=True, layout=0, outputs=("Y", "Y_h", "Y_c"), expect_error=None, **attrs):
    global failures
    D = 2 if attrs.get("direction") == "bidirectional" else 1
    G = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    if op != "LSTM":
        outputs = [o for o in outputs if o != "Y_c"]
    X = rng.uniform(-1, 1, (S, N, I))
    W = rng.uniform(-0.6, 0.6, (D, G * H, I))
    R = rng.uniform(-0.6, 0.6, (D, G * H, H))
    arrs = {"X": X, "W": W, "R": R, "B": rng.uniform(-0.5, 0.5, (D, 2 * G * H)) if B else None,
            "sequence_lens": np.array(lens, dtype=np.int32) if lens is not None else None,
            "initial_h": rng.uniform(-1, 1, (D, N, H)) if h0 else None,
            "initial_c": rng.uniform(-1, 1, (D, N, H)) if c0 else None,
            "P": rng.uniform(-0.5, 0.5, (D, 3 * H)) if P else None}
    for k in ("X", "W", "R", "B", "initial_h", "initial_c", "P"):  # the values the GPU sees
        if arrs[k] is not None:
            arrs[k] = arrs[k].astype(dtype).astype(np.float64)
    if expect_error:
        want = {"Y": np.zeros((S, D, N, H)), "Y_h": np.zeros((D, N, H)), "Y_c": np.zeros((D, N, H))}
    else:
        want = dict(zip(("Y", "Y_h", "Y_c"), reference(op, arrs["X"], arrs["W"], arrs["R"], arrs["B"],
                                                       arrs["sequence_lens"], arrs["initial_h"], arrs["initial_c"],
                                                       arrs["P"], attrs)))
    if layout:
        for k in ("X", "initial_h", "initial_c"):
            if arrs[k] is not None:
                arrs[k] = arrs[k].swapaxes(0, 1)
        want = {"Y": want["Y"].transpose(2, 0, 1, 3), "Y_h": want["Y_h"].swapaxes(0, 1), "Y_c": want["Y_c"].swapaxes(0, 1)}
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h"] + (["initial_c", "P"] if op == "LSTM" else [])
    t = np_dtype_to_tensor_dtype(np.dtype(dtype))
    ins, feeds = [], []
    for k in order:
        if arrs[k] is None:
            continue
        a = arrs[k] if k == "sequence_lens" else arrs[k].astype(dtype)
        ins.append(h.make_tensor_value_info(k, np_dtype_to_tensor_dtype(a.dtype), a.shape))
        np.save(os.path.join(TMP, k + ".npy"), a)
        feeds += ["--input", f"{k}={os.path.join(TMP, k + '.npy')}"]
    node_ins = [k if arrs[k] is not None else "" for k in order]
    while not node_ins[-1]:
        node_ins.pop()
    all_outs = ["Y", "Y_h", "Y_c"][:3 if op == "LSTM" else 2]
    node_outs = [o if o in outputs else "" for o in all_outs]
    while not node_outs[-1]:
        node_outs.pop()
    outs = [h.make_tensor_value_info(o, t, want[o].shape) for o in outputs]
    node = h.make_node(op, node_ins, node_outs, hidden_size=H, layout=layout, **attrs)
    g = h.make_graph([node], name, ins, outs)
    path = os.path.join(TMP, name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 14)], ir_version=7), path)
    out = os.path.join(TMP, name)
    r = subprocess.run([VKINFER, "run", path, "--output-dir", out] + feeds, capture_output=True, text=True)
    if expect_error:
        ok = r.returncode != 0 and expect_error in r.stderr
        print(("PASS " if ok else "FAIL ") + f"{name}: {r.stderr.strip()[-300:]}")
        failures += not ok
        return
    if r.returncode:
        print(f"FAIL {name}: {r.stderr.strip()[-300:]}")
        failures += 1
        return
    errs = []
    for o in outputs:
        got = np.load(os.path.join(out, o + ".npy"))
        if got.dtype != dtype or got.shape != want[o].shape:
            errs.append(f"{o} {got.dtype}{list(got.shape)} for {np.dtype(dtype).name}{list(want[o].shape)}")
            continue
        err = float(np.max(np.abs(got.astype(np.float64) - want[o])))
        if err > tol:
            errs.append(f"{o} max error {err:.3g}")
    print(("FAIL " if errs else "PASS ") + f"{name}" + (": " + "; ".join(errs) if errs else ""))
    failures += bool(errs)


for op in ("RNN", "GRU", "LSTM"):
    for direction in ("forward", "reverse", "bidirectional"):
        for layout in (0, 1):
            case(f"{op}_{direction}_layout{layout}_lens", op, direction=direction, layout=layout, lens=[5, 2, 4],
                 h0=True, c0=True, P=op == "LSTM")
    case(f"{op}_clip", op, direction="bidirectional", clip=0.4, h0=True, lens=[3, 5, 1])
    case(f"{op}_only_Y_h", op, outputs=("Y_h",), direction="reverse", h0=True, B=False)
    case(f"{op}_only_Y", op, outputs=("Y",), direction="bidirectional", layout=1)
    case(f"{op}_f16", op, dtype=np.float16, tol=3e-3, direction="bidirectional", lens=[4, 5, 2], h0=True, c0=True)
    case(f"{op}_bad_activation", op, activations=["Gelu"] * {"RNN": 1, "GRU": 2, "LSTM": 3}[op],
         expect_error="activation 'Gelu' is not supported")
case("RNN_relu_leakyrelu", "RNN", direction="bidirectional", activations=["Relu", "LeakyRelu"], activation_alpha=[0.2])
case("GRU_lbr1", "GRU", direction="bidirectional", linear_before_reset=1, lens=[5, 3, 2], h0=True)
case("GRU_lbr1_layout1_clip", "GRU", linear_before_reset=1, layout=1, clip=0.5, h0=True)
case("GRU_activations", "GRU", activations=["HardSigmoid", "Softsign"], activation_alpha=[0.3], activation_beta=[0.4])
case("LSTM_input_forget", "LSTM", input_forget=1, h0=True, c0=True, P=True, lens=[5, 1, 3])
case("LSTM_activations", "LSTM", direction="bidirectional",
     activations=["HardSigmoid", "Tanh", "Affine", "Sigmoid", "Softsign", "Relu"],
     activation_alpha=[0.25, 0.8], activation_beta=[0.45, 0.1])
case("LSTM_long", "LSTM", S=40, N=2, I=8, H=16, direction="bidirectional", lens=[40, 17], tol=2e-4)
sys.exit(1 if failures else 0)
