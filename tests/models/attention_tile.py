"""Attention as PyTorch's exporters write it, MatMul(Q, K^T) [-> Mul(scale)] [-> Add(mask)] ->
Softmax [-> Where(IsNaN(P), 0, P)] -> MatMul(P, V) -> Transpose, on attention_tile (one dispatch:
src/ops/matmul.c attention_rows_try, shaders/attention_tile.glsl): fp32, fp16 and bf16 words,
heads of up to 64, 128 (attention_tile_d128) and, on 16-bit words, 256 (attention_tile_d256),
additive masks broadcast over the batch and the heads or one per head, rows whose keys are all masked (zeros with the guard, NaN
without it, as the graph gives), and the cases it leaves to the three dispatches (three batch
dims, heads over 128 in fp32 and over 256). Each case is an ONNX graph built here (inputs and output float32, cast to
and from the dtype) run by `vkinfer run` with attention_tile forced (VKINFER_ATTENTION_ROWS=tile:
lavapipe's default keeps three dispatches) and by default, compared with float64 numpy on the
dtype-rounded inputs: max|err| <= tol * max|ref| (fp32 2e-5; fp16 2e-3 and bf16 1e-2, the
output's rounding), NaN where the reference has NaN. The forced run's profile must name the
expected kernel and no Softmax.

    attention_tile.py VKINFER"""
import os
import re
import sys
import tempfile
import zlib

import numpy as np
from onnx import TensorProto, helper, save

from gemv_wide import vk

F = TensorProto.FLOAT
DTYPES = {"fp32": TensorProto.FLOAT, "fp16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}
TOL = {"fp32": 2e-5, "fp16": 2e-3, "bf16": 1e-2}


def rounded(x, dtype):
    """x rounded to dtype's values, as float32 (bf16: to nearest even, infinities kept)."""
    x = x.astype(np.float32)
    if dtype == "fp32":
        return x
    if dtype == "fp16":
        return x.astype(np.float16).astype(np.float32)
    u = x.view(np.uint32)
    b = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint32) << 16
    return np.where(np.isinf(x), x, b.view(np.float32))


def case(name, dtype, q_shape, kv_len, e=None, mask=None, guard=False, scale=0.125, expect="attention_tile"):
    """Q [..., M, D], K [..., N, D], V [..., N, E] as graph inputs (float32, cast to dtype);
    mask: None, or (shape, kind) with kind 'keys' (padding: the last keys of the batch's rows
    -inf), 'causal' (with one row masked whole) or 'bias' (finite values)."""
    rng = np.random.default_rng(zlib.crc32(f"{name} {dtype}".encode()))
    *batch, m, d = q_shape
    e = e or d
    q = rng.standard_normal(q_shape, dtype=np.float32)
    k = rng.standard_normal((*batch, kv_len, d), dtype=np.float32)
    v = rng.standard_normal((*batch, kv_len, e), dtype=np.float32)
    inputs = {"q": q, "k": k, "v": v}
    rank = len(q_shape)
    nodes = [helper.make_node("Cast", [n], [n + "h"], to=DTYPES[dtype]) for n in ("q", "k", "v")]
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    nodes.append(helper.make_node("Transpose", ["kh"], ["kt"], perm=perm))
    nodes.append(helper.make_node("MatMul", ["qh", "kt"], ["s"]))
    nodes.append(helper.make_node("Constant", [], ["scale"], value=helper.make_tensor("scale_v", DTYPES[dtype], [], [scale])))
    nodes.append(helper.make_node("Mul", ["s", "scale"], ["ss"]))
    qr, kr, vr = (rounded(x, dtype).astype(np.float64) for x in (q, k, v))
    ref_s = np.matmul(qr, np.swapaxes(kr, -1, -2)) * scale
    last = "ss"
    if mask is not None:
        mshape, kind = mask
        mk = np.zeros(mshape, dtype=np.float32)
        if kind == "keys":
            mk[..., kv_len - 7:] = -np.inf
        elif kind == "causal":
            mk += np.triu(np.full((mshape[-2], mshape[-1]), -np.inf, dtype=np.float32), 1)
            mk[..., 5, :] = -np.inf  # a row masked whole
        else:
            mk = rng.standard_normal(mshape, dtype=np.float32) * 2
        inputs["mask"] = mk
        nodes.insert(0, helper.make_node("Cast", ["mask"], ["maskh"], to=DTYPES[dtype]))  # planned before the product
        nodes.append(helper.make_node("Add", ["ss", "maskh"], ["sm"]))
        ref_s = ref_s + rounded(mk, dtype).astype(np.float64)
        last = "sm"
    nodes.append(helper.make_node("Softmax", [last], ["p"], axis=-1))
    with np.errstate(invalid="ignore"):
        ex = np.exp(ref_s - ref_s.max(axis=-1, keepdims=True))
        ref_p = ex / ex.sum(axis=-1, keepdims=True)
    last = "p"
    if guard:
        nodes.append(helper.make_node("IsNaN", ["p"], ["pn"]))
        nodes.append(helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("zero_v", DTYPES[dtype], [], [0.0])))
        nodes.append(helper.make_node("Where", ["pn", "zero", "p"], ["pg"]))
        ref_p = np.where(np.isnan(ref_p), 0.0, ref_p)
        last = "pg"
    nodes.append(helper.make_node("MatMul", [last, "vh"], ["o"]))
    ref = np.matmul(ref_p, vr)
    # the heads moved back beside the sequence (stored through by the kernel)
    tperm = list(range(rank - 3)) + [rank - 2, rank - 3, rank - 1] if rank >= 3 else [0, 1]
    nodes.append(helper.make_node("Transpose", ["o"], ["ot"], perm=tperm))
    ref = np.transpose(ref, tperm)
    nodes.append(helper.make_node("Cast", ["ot"], ["y"], to=F))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, F, x.shape) for n, x in inputs.items()],
                          [helper.make_tensor_value_info("y", F, ref.shape)])
    return name, dtype, g, inputs, ref, expect


def cases():
    out = []
    for dt in ("fp32", "fp16", "bf16"):
        out += [
            case("plain_d64", dt, (1, 3, 40, 64), 150),                                   # 2 partial chunks, no mask
            case("keys_mask_d64", dt, (2, 3, 37, 64), 90, e=48, mask=((2, 1, 1, 90), "keys"), guard=True),
            case("causal_d80", dt, (1, 2, 70, 80), 70, mask=((1, 1, 70, 70), "causal"), guard=True,
                 expect="attention_tile_d128"),
            case("causal_no_guard", dt, (1, 2, 33, 32), 33, mask=((33, 33), "causal")),  # the masked row: NaN
            case("bias_per_head_d128", dt, (2, 2, 20, 128), 45, e=96, mask=((2, 2, 20, 45), "bias"),
                 expect="attention_tile_d128"),
            case("three_batch_dims", dt, (2, 2, 2, 9, 16), 70, mask=((2, 1, 1, 9, 70), "bias"), expect=None),
            # heads over 128: attention_tile_d256 on 16-bit words (K and V staged as such), fp32 three dispatches
            case("head_160", dt, (1, 2, 12, 160), 80, mask=((1, 1, 1, 80), "keys"), guard=True,
                 expect=None if dt == "fp32" else "attention_tile_d256"),
            case("causal_d256", dt, (1, 2, 40, 256), 75, mask=((1, 1, 40, 75), "causal"), guard=True,
                 expect=None if dt == "fp32" else "attention_tile_d256"),
            case("head_320", dt, (1, 1, 9, 320), 40, expect=None),
        ]
    return out


def rel_err(got, ref):
    """max|got - ref| / max|ref| over the finite reference, or inf where NaN differs"""
    nan = np.isnan(ref)
    if not np.array_equal(nan, np.isnan(got)):
        return float("inf")
    g, r = got[~nan], ref[~nan]
    return float(np.max(np.abs(g - r)) / max(np.max(np.abs(r)), 1e-30)) if r.size else 0.0


def main():
    vkinfer = sys.argv[1]
    ok = True
    forced = dict(os.environ, VKINFER_ATTENTION_ROWS="tile")
    with tempfile.TemporaryDirectory() as tmp:
        for name, dtype, g, inputs, ref, expect in cases():
            path = os.path.join(tmp, f"{name}_{dtype}.onnx")
            save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
            args = ["run", path]
            for n, x in inputs.items():
                np.save(os.path.join(tmp, n + ".npy"), x)
                args += ["--input", f"{n}={tmp}/{n}.npy"]
            errs = []
            for label, env in (("forced", forced), ("default", dict(os.environ))):
                od = os.path.join(tmp, f"out_{label}")
                vk(vkinfer, [*args, "--output-dir", od], env)
                errs.append(rel_err(np.load(os.path.join(od, "y.npy")).astype(np.float64), ref))
            prof = vk(vkinfer, ["bench", path, *args[2:], "--profile", "--runs", "1", "--warmup", "0"], forced)
            kernels = set(re.findall(r"\battention_tile\w*", prof))
            want = set() if expect is None else {expect if dtype == "fp32" else f"{expect}_{dtype.replace('fp16', 'f16')}"}
            softmax = re.search(r"^\s+Softmax\s", prof, re.M) is not None
            good_k = kernels == want and softmax == (expect is None)
            if not good_k:
                print(f"FAIL {name} {dtype}: kernels {sorted(kernels)}, Softmax dispatched {softmax}; expected "
                      f"{sorted(want) or 'three dispatches'}")
            good = max(errs) <= TOL[dtype] and good_k
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} {name:20} {dtype}: max|err|/max|ref| forced {errs[0]:.3g}, "
                  f"default {errs[1]:.3g} (tol {TOL[dtype]:g}); {expect or 'three dispatches'}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
