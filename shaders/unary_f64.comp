#version 450
// Element-wise unary ops and Cast on float64 computed in double, for devices with shaderFloat64
// (src/ops/unary.c picks it for the ops below; the others reach unary.glsl through fp32
// words). A float64 side is held as 8 bytes (GPU_F64), the other side of a Cast in the word
// form; every buffer is declared in 32-bit words and doubles are assembled from two of them.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0u;
layout(constant_id = 2) const uint IN_DT = 0u;  // DT_F64, or a Cast's source code (small_dtypes.glsl)
layout(constant_id = 3) const uint OUT_DT = 0u; // DT_F64, or a Cast's target code; DT_BOOL for IsNaN/IsInf
layout(constant_id = 4) const bool GRID_STRIDE = false; // common.glsl's ELEMENTWISE_MAIN
#include "common.glsl"
#include "small_dtypes.glsl"
#include "f64_bits.glsl"

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push { uint count; float alpha; float beta; float gamma; } pc;

// op codes: keep in step with src/ops/unary.c (and unary.glsl)
#define OP_IDENTITY 0u
#define OP_RELU 1u
#define OP_NEG 6u
#define OP_ABS 7u
#define OP_SQRT 8u
#define OP_RECIPROCAL 9u
#define OP_CLIP 10u
#define OP_LEAKYRELU 13u
#define OP_FLOOR 14u
#define OP_CEIL 15u
#define OP_ROUND 16u
#define OP_SIGN 29u
#define OP_THRESHOLDED_RELU 35u
#define OP_ISNAN 37u
#define OP_ISINF 38u

double apply_f64(double v)
{
    switch (OP) {
    case OP_RELU: return max(v, 0.0LF);
    case OP_NEG: return -v;
    case OP_ABS: return abs(v);
    case OP_SQRT: return sqrt(v);
    case OP_RECIPROCAL: return 1.0LF / v;
    case OP_CLIP: return isnan(v) ? v : min(max(v, double(pc.alpha)), double(pc.beta));
    case OP_LEAKYRELU: return v >= 0.0LF ? v : double(pc.alpha) * v;
    case OP_FLOOR: return floor(v);
    case OP_CEIL: return ceil(v);
    case OP_ROUND: return roundEven(v);
    case OP_SIGN: return sign(v);
    case OP_THRESHOLDED_RELU: return v > double(pc.alpha) ? v : 0.0LF;
    default: return v;
    }
}

void store_f64(uint i, double v)
{
    uvec2 w = unpackDouble2x32(v);
    y[2u * i] = w.x;
    y[2u * i + 1u] = w.y;
}

// A Cast from float64 to OUT_DT's word form: floats rounded once from the double (ties to
// even), integers truncated toward zero and wrapped (int64 is held as int32), as unary.glsl
// does for float32 sources.
uint cast_from_f64(double v, uint lo, uint hi)
{
    if (OUT_DT == DT_BOOL) return v != 0.0LF ? 1u : 0u;
    if (sd_is_float(OUT_DT)) {
        float f = uintBitsToFloat(f64_to_f32_bits(lo, hi));
        if (sd_is_minifloat(OUT_DT)) return floatBitsToUint(round_minifloat(OUT_DT, f, pc.alpha == 0.0));
        if (OUT_DT == DT_F8E8M0) return e8m0_word(f, pc.alpha == 0.0, uint(pc.beta));
        return floatBitsToUint(round_to_dtype(OUT_DT, f));
    }
    int t = isnan(v) ? 0 : int(clamp(trunc(v), -2147483648.0LF, 2147483647.0LF));
    return uint(sd_wrap_to_dtype(OUT_DT, t));
}

void element(uint i)
{
    if (IN_DT != DT_F64) { // a Cast to float64: every source value is a double exactly
        uint bits = x[i];
        store_f64(i, sd_is_float(IN_DT) ? double(uintBitsToFloat(bits)) : double(int(bits)));
        return;
    }
    uint lo = x[2u * i], hi = x[2u * i + 1u];
    double v = packDouble2x32(uvec2(lo, hi));
    if (OP == OP_ISNAN || OP == OP_ISINF) {
        bool b = OP == OP_ISNAN ? isnan(v)
               : (isinf(v) && ((v > 0.0LF && pc.alpha != 0.0) || (v < 0.0LF && pc.beta != 0.0)));
        y[i] = b ? 1u : 0u;
    } else if (OUT_DT != DT_F64) {
        y[i] = cast_from_f64(v, lo, hi);
    } else {
        store_f64(i, apply_f64(v));
    }
}

ELEMENTWISE_MAIN(pc.count, element)
