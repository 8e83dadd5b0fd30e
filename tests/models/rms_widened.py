"""RMSNorm over a float16 or bfloat16 tensor widened to float32 for its sums (Llama's and Qwen's
`hidden.to(torch.float32)`, then the weight times the normalized x cast back): the fused
RMSNormalization reads the halves themselves (src/plan/fuse.c, widening_cast), so that neither
the Cast to float32 nor a conversion of its result back to halves is dispatched. The halves'
dtype is known before planning through the ops that keep their first input's dtype (here a
Tanh after a Cast). Each case is an ONNX graph built here, run with fusion on and off and
compared with numpy on the dtype-rounded data (bound 2^-7 of max|ref|: one rounding to the
half type fused, two unfused); the fused plan must have exactly the expected dispatches fewer.

    rms_widened.py VKINFER"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from fused_cases import check_cases

F = TensorProto.FLOAT


def rounded(x, dtype):
    if dtype == TensorProto.FLOAT16:
        return x.astype(np.float16).astype(np.float32)
    u = x.astype(np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).view(np.float32)


def widened(dtype, with_weight=True):
    """y = Cast(w * Cast(h * rsqrt(mean(h^2) + eps), half), float32) with h = Cast(tanh(Cast(x, half)),
    float32). With the weight: Pow, ReduceMean, Add, Sqrt, Reciprocal, two Muls and the Cast back
    (one dispatch to bfloat16, two to float16: a conversion after the Cast's pass) are one
    RMSNormalization, and the widening Cast goes too: 8 fewer in bfloat16, 9 in float16 (without
    the widening, the Cast and a conversion of the norm's float32 result stay: 2 fewer less).
    Without a weight the norm's result is float32, so the widening Cast stays, and the Cast to
    the half type and the float32 output's Cast after it are one pass (the rounded values held
    as float32 words, src/ops/unary.c): 6 fewer in bfloat16, 7 in float16."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 64)).astype(np.float32)
    w = (rng.random(64) + 0.5).astype(np.float32)
    wt = helper.make_tensor("w", dtype, [64], (rounded(w, dtype).astype(np.float16) if dtype == TensorProto.FLOAT16
                                               else (rounded(w, dtype).view(np.uint32) >> 16).astype(np.uint16))
                            .tobytes(), raw=True)
    nodes = [helper.make_node("Cast", ["x"], ["xh"], to=dtype), helper.make_node("Tanh", ["xh"], ["t"]),
             helper.make_node("Cast", ["t"], ["h"], to=F),
             helper.make_node("Pow", ["h", "two"], ["sq"]), helper.make_node("ReduceMean", ["sq"], ["ms"], axes=[-1]),
             helper.make_node("Add", ["ms", "eps"], ["ae"]), helper.make_node("Sqrt", ["ae"], ["rt"]),
             helper.make_node("Reciprocal", ["rt"], ["r"]), helper.make_node("Mul", ["h", "r"], ["n"]),
             helper.make_node("Cast", ["n"], ["nh"], to=dtype)]
    t = rounded(np.tanh(rounded(x, dtype)), dtype).astype(np.float64)
    normed = t / np.sqrt((t * t).mean(-1, keepdims=True) + 1e-6)
    if with_weight:
        nodes += [helper.make_node("Mul", ["w", "nh"], ["yh"]), helper.make_node("Cast", ["yh"], ["y"], to=F)]
        ref = rounded((rounded(w, dtype) * normed).astype(np.float32), dtype)
    else:
        nodes += [helper.make_node("Cast", ["nh"], ["y"], to=F)]
        ref = rounded(normed.astype(np.float32), dtype)
    inits = [numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(1e-6, np.float32), "eps")] + ([wt] if with_weight else [])
    g = helper.make_graph(nodes, "widened", [helper.make_tensor_value_info("x", F, x.shape)],
                          [helper.make_tensor_value_info("y", F, x.shape)], inits)
    return g, {"x": x}, {"y": ref}


def round_trip(dtype):
    """y = Cast(Cast(x * 3, half), float32) + x: float32 rounded to the half type and widened
    straight back (x.to(bfloat16).to(float32)) is one pass, the rounding kept (exact: IEEE
    products and sums on both sides). Unfused: the Cast to bfloat16 is one dispatch, to float16
    two (a conversion after the Cast's pass), the Cast back one."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((8, 300)).astype(np.float32)
    nodes = [helper.make_node("Mul", ["x", "three"], ["m"]),
             helper.make_node("Cast", ["m"], ["mh"], to=dtype), helper.make_node("Cast", ["mh"], ["r"], to=F),
             helper.make_node("Add", ["r", "x"], ["y"])]
    ref = rounded(x * np.float32(3), dtype) + x
    inits = [numpy_helper.from_array(np.array(3.0, np.float32), "three")]
    g = helper.make_graph(nodes, "round_trip", [helper.make_tensor_value_info("x", F, x.shape)],
                          [helper.make_tensor_value_info("y", F, x.shape)], inits)
    return g, {"x": x}, {"y": ref}


CASES = {
    "bf16_weighted": (lambda: widened(TensorProto.BFLOAT16), 8, 2**-7),
    "fp16_weighted": (lambda: widened(TensorProto.FLOAT16), 9, 2**-7),
    "bf16_no_weight": (lambda: widened(TensorProto.BFLOAT16, False), 6, 2**-7),
    "fp16_no_weight": (lambda: widened(TensorProto.FLOAT16, False), 7, 2**-7),
    # exact: the rounding kept where the two Casts are one pass
    "bf16_round_trip": (lambda: round_trip(TensorProto.BFLOAT16), 1, 1e-30),
    "fp16_round_trip": (lambda: round_trip(TensorProto.FLOAT16), 2, 1e-30),
}


def main():
    return 1 if check_cases(sys.argv[1], CASES, 17) else 0


if __name__ == "__main__":
    sys.exit(main())
