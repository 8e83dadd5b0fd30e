// Element-wise unary ops (activations, math, Cast) for every dtype: out[i] = f(in[i]).
#include "small_dtypes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0u;
layout(constant_id = 2) const uint IN_DT = 0u;
layout(constant_id = 3) const uint OUT_DT = 0u;
layout(constant_id = 4) const bool GRID_STRIDE = false; // common.glsl's ELEMENTWISE_MAIN

layout(std430, binding = 0) readonly buffer In { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Out { ELEM y[]; };
layout(push_constant) uniform Push { uint count; float alpha; float beta; float gamma; } pc;

// op codes: keep in step with src/ops/unary.c
#define OP_IDENTITY 0u
#define OP_RELU 1u
#define OP_SIGMOID 2u
#define OP_TANH 3u
#define OP_EXP 4u
#define OP_LOG 5u
#define OP_NEG 6u
#define OP_ABS 7u
#define OP_SQRT 8u
#define OP_RECIPROCAL 9u
#define OP_CLIP 10u
#define OP_HARDSIGMOID 11u
#define OP_HARDSWISH 12u
#define OP_LEAKYRELU 13u
#define OP_FLOOR 14u
#define OP_CEIL 15u
#define OP_ROUND 16u
#define OP_SIN 17u
#define OP_COS 18u
#define OP_TAN 19u
#define OP_ASIN 20u
#define OP_ACOS 21u
#define OP_ATAN 22u
#define OP_SINH 23u
#define OP_COSH 24u
#define OP_ASINH 25u
#define OP_ACOSH 26u
#define OP_ATANH 27u
#define OP_ERF 28u
#define OP_SIGN 29u
#define OP_SOFTPLUS 30u
#define OP_SOFTSIGN 31u
#define OP_ELU 32u
#define OP_SELU 33u
#define OP_CELU 34u
#define OP_THRESHOLDED_RELU 35u
#define OP_NOT 36u
#define OP_ISNAN 37u
#define OP_ISINF 38u
#define OP_GELU 39u
#define OP_MISH 40u
#define OP_BITNOT 41u
#define OP_SWISH 42u

// log1p_accurate, softplus, tanh_accurate: shaders/common.glsl

float apply_float(float v)
{
    switch (OP) {
    case OP_RELU: return max(v, 0.0);
    case OP_SIGMOID: return v >= 0.0 ? 1.0 / (1.0 + exp(-v)) : exp(v) / (1.0 + exp(v));
    case OP_TANH: return tanh_accurate(v);
    case OP_EXP: return exp(v);
    case OP_LOG: return log(v);
    case OP_NEG: return -v;
    case OP_ABS: return abs(v);
    case OP_SQRT: return sqrt(v);
    case OP_RECIPROCAL: return 1.0 / v;
    case OP_CLIP: return isnan(v) ? v : min(max(v, pc.alpha), pc.beta);
    case OP_HARDSIGMOID: return clamp(pc.alpha * v + pc.beta, 0.0, 1.0);
    case OP_HARDSWISH: return v * clamp(v / 6.0 + 0.5, 0.0, 1.0);
    case OP_LEAKYRELU: return v >= 0.0 ? v : pc.alpha * v;
    case OP_FLOOR: return floor(v);
    case OP_CEIL: return ceil(v);
    case OP_ROUND: return roundEven(v);
    case OP_SIN: return sin(v);
    case OP_COS: return cos(v);
    case OP_TAN: return tan(v);
    case OP_ASIN: return asin(v);
    case OP_ACOS: return acos(v);
    case OP_ATAN: return atan(v);
    case OP_SINH: return sinh(v);
    case OP_COSH: return cosh(v);
    case OP_ASINH: return asinh(v);
    case OP_ACOSH: return acosh(v);
    case OP_ATANH: return atanh(v);
    case OP_ERF: return erf_approx(v);
    case OP_SIGN: return sign(v);
    case OP_SOFTPLUS: return softplus(v);
    case OP_SOFTSIGN: return v / (1.0 + abs(v));
    case OP_ELU: return v >= 0.0 ? v : pc.alpha * (exp(v) - 1.0);
    case OP_SELU: return v > 0.0 ? pc.beta * v : pc.beta * (pc.alpha * exp(v) - pc.alpha);
    case OP_CELU: return max(0.0, v) + min(0.0, pc.alpha * (exp(v / pc.alpha) - 1.0));
    case OP_THRESHOLDED_RELU: return v > pc.alpha ? v : 0.0;
    case OP_GELU: return pc.alpha != 0.0
        ? 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)))
        : 0.5 * v * (1.0 + erf_approx(v * 0.70710678118));
    case OP_MISH: return v * tanh_accurate(softplus(v));
    case OP_SWISH: { // x * sigmoid(alpha x)
        float z = pc.alpha * v;
        return v * (z >= 0.0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z)));
    }
    default: return v;
    }
}

int apply_int(int v)
{
    switch (OP) {
    case OP_RELU: return max(v, 0);
    case OP_NEG: return -v;
    case OP_ABS: return abs(v);
    case OP_SIGN: return sign(v);
    case OP_CLIP: return min(max(v, floatBitsToInt(pc.alpha)), floatBitsToInt(pc.beta));
    case OP_NOT: return v != 0 ? 0 : 1;
    case OP_BITNOT: return ~v;
    default: return v;
    }
}

void element(uint i)
{
    uint bits = LOAD(x, i), r;
    if (OP == OP_ISNAN || OP == OP_ISINF) {
        float v = uintBitsToFloat(bits);
        bool b = OP == OP_ISNAN ? isnan(v)
               : (isinf(v) && ((v > 0.0 && pc.alpha != 0.0) || (v < 0.0 && pc.beta != 0.0)));
        r = b ? 1u : 0u;
    } else if (OP == OP_IDENTITY) { // also Cast
        // Cast's codes include the small dtypes (small_dtypes.glsl); pc.alpha != 0: saturate = 0
        // (float8), pc.beta: float8e8m0's round_mode
        if (sd_is_float(IN_DT)) {
            float v = uintBitsToFloat(bits);
            if (sd_is_minifloat(OUT_DT)) r = floatBitsToUint(round_minifloat(OUT_DT, v, pc.alpha == 0.0));
            else if (OUT_DT == DT_F8E8M0) r = e8m0_word(v, pc.alpha == 0.0, uint(pc.beta));
            else if (dt_is_float(OUT_DT)) r = floatBitsToUint(round_to_dtype(OUT_DT, v));
            else if (OUT_DT == DT_BOOL) r = v != 0.0 ? 1u : 0u;
            else r = uint(sd_wrap_to_dtype(OUT_DT, isnan(v) ? 0 : int(clamp(v, -2147483648.0, 2147483520.0))));
        } else {
            r = sd_is_float(OUT_DT) ? floatBitsToUint(sd_round_to_dtype(OUT_DT, float(int(bits))))
                                    : uint(sd_wrap_to_dtype(OUT_DT, int(bits)));
        }
    } else if (dt_is_float(IN_DT)) {
        r = floatBitsToUint(round_to_dtype(OUT_DT, apply_float(uintBitsToFloat(bits))));
    } else {
        r = uint(wrap_to_dtype(OUT_DT, apply_int(int(bits))));
    }
    STORE(y, i, r);
}

ELEMENTWISE_MAIN(pc.count, element)
