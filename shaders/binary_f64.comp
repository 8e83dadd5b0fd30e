#version 450
// Element-wise binary ops on float64 computed in double, for devices with shaderFloat64
// (src/ops/binary.c picks it; binary.glsl is the fp32 form). A and the float64 output are
// held as 8 bytes (GPU_F64); B is float64 too, or for Pow an exponent of any dtype in the word
// form; comparisons write bool as words. Every buffer is declared in 32-bit words and doubles
// are assembled from two of them, so one declaration serves each binding's two forms.
// Add, Sub, Mul, Div, Max, Min, Mod, PRelu, comparisons and Pow with an integral exponent are
// exact double arithmetic; Pow's other exponents and SwiGLU's exponential go through fp32
// (GLSL has no double pow or exp).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0u;
layout(constant_id = 2) const uint A_DT = 0u; // unused: float64
layout(constant_id = 3) const uint B_DT = 0u; // DT_F64, or the exponent's code (Pow)
layout(constant_id = 4) const uint OUT_DT = 0u; // DT_F64, or DT_BOOL (comparisons)
layout(constant_id = 5) const uint RANK = 0u;
layout(constant_id = 6) const bool CLAMP = false; // a fused Relu/Clip: results clamped to [LO, HI]
layout(constant_id = 7) const float LO = 0.0;
layout(constant_id = 8) const float HI = 0.0;
layout(constant_id = 9) const bool GRID_STRIDE = false; // common.glsl's ELEMENTWISE_MAIN
#include "common.glsl"
#include "f64_bits.glsl"
#include "broadcast.glsl"

layout(std430, binding = 0) readonly buffer A { uint a_data[]; };
layout(std430, binding = 1) readonly buffer B { uint b_data[]; };
layout(std430, binding = 2) writeonly buffer Out { uint result[]; };

// op codes: keep in step with src/ops/binary.c (and binary.glsl)
#define OP_ADD 0u
#define OP_SUB 1u
#define OP_MUL 2u
#define OP_DIV 3u
#define OP_POW 4u
#define OP_MOD 5u
#define OP_FMOD 6u
#define OP_EQUAL 15u
#define OP_LESS 16u
#define OP_LESS_EQUAL 17u
#define OP_GREATER 18u
#define OP_GREATER_EQUAL 19u
#define OP_MAX 20u
#define OP_MIN 21u
#define OP_PRELU 22u
#define OP_MEAN_LAST 23u
#define OP_SWIGLU 25u

double load_f64(uint w0, uint w1) { return packDouble2x32(uvec2(w0, w1)); }
double nan_f64() { return packDouble2x32(uvec2(0u, 0x7ff80000u)); }
double inf_f64() { return packDouble2x32(uvec2(0u, 0x7ff00000u)); }

double pow_by_squaring(double a, uint e)
{
    double r = 1.0LF;
    while (e != 0u) {
        if ((e & 1u) != 0u) r *= a;
        a *= a;
        e >>= 1;
    }
    return r;
}

// C's pow: integral exponents by squaring in double, the rest in fp32 (as binary.glsl does)
double pow_f64(double x, double y)
{
    if (y == 0.0LF) return 1.0LF;
    if (isnan(x) || isnan(y)) return nan_f64();
    bool integral = y == trunc(y) && !isinf(y);
    if (integral && abs(y) <= 1024.0LF) {
        double r = pow_by_squaring(x, uint(abs(y)));
        return y < 0.0LF ? 1.0LF / r : r;
    }
    if (x == 0.0LF) return y > 0.0LF ? 0.0LF : inf_f64();
    if (x < 0.0LF) {
        if (!integral) return nan_f64();
        double r = double(pow(float(-x), float(y)));
        return mod(y, 2.0LF) == 1.0LF ? -r : r;
    }
    return double(pow(float(x), float(y)));
}

// C's fmod: the dividend's sign; a finite dividend over an infinite divisor is itself
double fmod_f64(double a, double b)
{
    if (isinf(b) && !isinf(a) && !isnan(a)) return a;
    return a - b * trunc(a / b);
}

double apply_f64(double a, double b)
{
    switch (OP) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    case OP_POW: return pow_f64(a, b);
    case OP_MOD: { // numpy's remainder: the divisor's sign, a zero signed like the divisor
        if (b == 0.0LF) return nan_f64();
        double r = fmod_f64(a, b);
        if (r == 0.0LF) return b < 0.0LF ? packDouble2x32(uvec2(0u, 0x80000000u)) : 0.0LF;
        return (r < 0.0LF) != (b < 0.0LF) ? r + b : r;
    }
    case OP_FMOD: return b == 0.0LF ? nan_f64() : fmod_f64(a, b);
    case OP_MAX: return isnan(a) || isnan(b) ? nan_f64() : max(a, b);
    case OP_MIN: return isnan(a) || isnan(b) ? nan_f64() : min(a, b);
    case OP_PRELU: return a < 0.0LF ? a * b : a;
    case OP_MEAN_LAST: return (a + b) / double(pc.param);
    case OP_SWIGLU: { // Swish(a) * b, Swish's alpha in pc.param
        float z = pc.param * float(a);
        return a * double(z >= 0.0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z))) * b;
    }
    default: return a;
    }
}

bool compare_f64(double a, double b)
{
    switch (OP) {
    case OP_EQUAL: return a == b;
    case OP_LESS: return a < b;
    case OP_LESS_EQUAL: return a <= b;
    case OP_GREATER: return a > b;
    default: return a >= b;
    }
}

void element(uint i)
{
    uvec3 offset = broadcast_offsets(i);
    double a = load_f64(a_data[2u * offset.x], a_data[2u * offset.x + 1u]);
    double b;
    if (B_DT == DT_F64) b = load_f64(b_data[2u * offset.y], b_data[2u * offset.y + 1u]);
    else b = dt_is_float(B_DT) ? double(uintBitsToFloat(b_data[offset.y])) : double(int(b_data[offset.y]));
    if (OUT_DT == DT_BOOL) {
        result[i] = compare_f64(a, b) ? 1u : 0u;
        return;
    }
    double r = apply_f64(a, b);
    if (CLAMP) r = min(max(r, double(LO)), double(HI));
    uvec2 w = unpackDouble2x32(r);
    result[2u * i] = w.x;
    result[2u * i + 1u] = w.y;
}

ELEMENTWISE_MAIN(pc.count, element)
