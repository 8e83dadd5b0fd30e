// Element-wise binary ops with numpy broadcasting for every dtype: out[i] = f(a[ia], b[ib]).
// Floats compute in fp32 and round to the output dtype; integers compute in int32 and wrap.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0u;
layout(constant_id = 2) const uint A_DT = 0u;
layout(constant_id = 3) const uint B_DT = 0u;
layout(constant_id = 4) const uint OUT_DT = 0u;
layout(constant_id = 5) const uint RANK = 0u;
layout(constant_id = 6) const bool CLAMP = false; // a fused Relu/Clip: float results clamped to [LO, HI]
layout(constant_id = 7) const float LO = 0.0;
layout(constant_id = 8) const float HI = 0.0;
layout(constant_id = 9) const bool GRID_STRIDE = false; // common.glsl's ELEMENTWISE_MAIN
#include "broadcast.glsl"

layout(std430, binding = 0) readonly buffer A { ELEM a_data[]; };
layout(std430, binding = 1) readonly buffer B { ELEM b_data[]; };
layout(std430, binding = 2) writeonly buffer Out { ELEM result[]; };

// op codes: keep in step with src/ops/binary.c
#define OP_ADD 0u
#define OP_SUB 1u
#define OP_MUL 2u
#define OP_DIV 3u
#define OP_POW 4u
#define OP_MOD 5u
#define OP_FMOD 6u
#define OP_SHIFT_LEFT 7u
#define OP_SHIFT_RIGHT 8u
#define OP_BITAND 9u
#define OP_BITOR 10u
#define OP_BITXOR 11u
#define OP_AND 12u
#define OP_OR 13u
#define OP_XOR 14u
#define OP_EQUAL 15u
#define OP_LESS 16u
#define OP_LESS_EQUAL 17u
#define OP_GREATER 18u
#define OP_GREATER_EQUAL 19u
#define OP_MAX 20u
#define OP_MIN 21u
#define OP_PRELU 22u
#define OP_MEAN_LAST 23u
#define OP_SWIGLU 25u // 24 is Where (shaders/where.glsl)

#define NAN uintBitsToFloat(0x7fc00000u)
#define INF uintBitsToFloat(0x7f800000u)

bool is_comparison() { return OP >= OP_EQUAL && OP <= OP_GREATER_EQUAL; }

bool compare_float(float a, float b)
{
    switch (OP) {
    case OP_EQUAL: return a == b;
    case OP_LESS: return a < b;
    case OP_LESS_EQUAL: return a <= b;
    case OP_GREATER: return a > b;
    default: return a >= b;
    }
}

bool compare_int(int a, int b)
{
    switch (OP) {
    case OP_EQUAL: return a == b;
    case OP_LESS: return a < b;
    case OP_LESS_EQUAL: return a <= b;
    case OP_GREATER: return a > b;
    default: return a >= b;
    }
}

// a^e by squaring; exact up to fp32 rounding, unlike exp2(e * log2(a)).
float pow_by_squaring(float a, uint e)
{
    float r = 1.0;
    while (e != 0u) {
        if ((e & 1u) != 0u) r *= a;
        a *= a;
        e >>= 1;
    }
    return r;
}

// C's pow for the cases GLSL leaves undefined: negative bases, zero bases, integral exponents.
float pow_float(float x, float y)
{
    if (y == 0.0) return 1.0;
    if (isnan(x) || isnan(y)) return NAN;
    bool integral = y == trunc(y) && !isinf(y);
    if (integral && abs(y) <= 1024.0) {
        float r = pow_by_squaring(x, uint(abs(y)));
        return y < 0.0 ? 1.0 / r : r;
    }
    if (x == 0.0) return y > 0.0 ? 0.0 : INF;
    if (x < 0.0) {
        if (!integral) return NAN;
        float r = pow(-x, y);
        return mod(y, 2.0) == 1.0 ? -r : r;
    }
    return pow(x, y);
}

int pow_int(int a, int e)
{
    if (e < 0) return a == 1 ? 1 : a == -1 ? ((e & 1) != 0 ? -1 : 1) : 0;
    int r = 1;
    while (e != 0) {
        if ((e & 1) != 0) r *= a;
        a *= a;
        e >>= 1;
    }
    return r;
}

// Integer division truncating toward zero, as in C; x / 0 gives 0 (as numpy does).
int div_trunc(int a, int b)
{
    if (b == 0) return 0;
    uint q = uint(abs(a)) / uint(abs(b));
    return (a < 0) != (b < 0) ? -int(q) : int(q);
}

// C's fmod: the dividend's sign; a finite dividend over an infinite divisor is itself
float fmod_float(float a, float b)
{
    if (isinf(b) && !isinf(a) && !isnan(a)) return a;
    return a - b * trunc(a / b);
}

float apply_float(float a, float b)
{
    switch (OP) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return div_rounded(a, b); // correctly rounded, as numpy and CUDA give (a / b may be 2.5 ulp off)
    case OP_MOD: { // numpy's remainder: the divisor's sign, a zero signed like the divisor
        if (b == 0.0) return NAN;
        float r = fmod_float(a, b);
        if (r == 0.0) return b < 0.0 ? uintBitsToFloat(0x80000000u) : 0.0;
        return (r < 0.0) != (b < 0.0) ? r + b : r;
    }
    case OP_FMOD: return b == 0.0 ? NAN : fmod_float(a, b); // sign of the dividend
    case OP_MAX: return isnan(a) || isnan(b) ? NAN : max(a, b);
    case OP_MIN: return isnan(a) || isnan(b) ? NAN : min(a, b);
    case OP_PRELU: return a < 0.0 ? a * b : a;
    case OP_MEAN_LAST: return (a + b) / pc.param;
    case OP_SWIGLU: { // Swish(a) * b, Swish's alpha in pc.param
        float z = pc.param * a;
        return a * (z >= 0.0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z))) * b;
    }
    default: return a;
    }
}

int apply_int(int a, int b)
{
    switch (OP) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return div_trunc(a, b);
    case OP_MOD: {
        int r = a - div_trunc(a, b) * b;
        return r != 0 && (r < 0) != (b < 0) ? r + b : r;
    }
    case OP_FMOD: return a - div_trunc(a, b) * b;
    // BitShift (pc.param: the dtype's width): by a negative amount or past the width only the
    // sign fill is left; right shifts are arithmetic (unsigned values load non-negative);
    // the store wraps a left shift to the dtype. int64 is held as int32: amounts of 32..63
    // leave the sign fill too.
    case OP_SHIFT_LEFT: return b < 0 || b >= min(int(pc.param), 32) ? 0 : int(uint(a) << uint(b));
    case OP_SHIFT_RIGHT: return b < 0 || b >= min(int(pc.param), 32) ? (a < 0 ? -1 : 0) : a >> b;
    case OP_BITAND: return a & b;
    case OP_BITOR: return a | b;
    case OP_BITXOR: return a ^ b;
    case OP_AND: return int(a != 0 && b != 0);
    case OP_OR: return int(a != 0 || b != 0);
    case OP_XOR: return int((a != 0) != (b != 0));
    case OP_MAX: return max(a, b);
    case OP_MIN: return min(a, b);
    case OP_PRELU: return a < 0 ? a * b : a;
    default: return a;
    }
}

// Pow: the output has the base's dtype; the exponent may be of any numeric dtype.
uint apply_pow(uint a_bits, uint b_bits)
{
    if (dt_is_float(A_DT))
        return floatBitsToUint(round_to_dtype(OUT_DT, pow_float(uintBitsToFloat(a_bits), as_float(B_DT, b_bits))));
    int a = int(a_bits);
    if (!dt_is_float(B_DT)) return uint(wrap_to_dtype(OUT_DT, pow_int(a, int(b_bits))));
    float e = uintBitsToFloat(b_bits);
    if (e == trunc(e) && abs(e) < 2147483648.0) return uint(wrap_to_dtype(OUT_DT, pow_int(a, int(e))));
    float r = pow_float(float(a), e);
    return uint(wrap_to_dtype(OUT_DT, isnan(r) ? 0 : int(clamp(r, -2147483648.0, 2147483520.0))));
}

void element(uint i)
{
    uvec3 offset = broadcast_offsets(i);
    uint a_bits = LOAD(a_data, offset.x), b_bits = LOAD(b_data, offset.y), r;
    if (OP == OP_POW) {
        r = apply_pow(a_bits, b_bits);
    } else if (dt_is_float(A_DT)) {
        float a = uintBitsToFloat(a_bits), b = uintBitsToFloat(b_bits);
        if (is_comparison()) r = compare_float(a, b) ? 1u : 0u;
        else r = floatBitsToUint(round_to_dtype(OUT_DT, fused_clamp(CLAMP, apply_float(a, b), LO, HI)));
    } else {
        int a = int(a_bits), b = int(b_bits);
        if (is_comparison()) r = compare_int(a, b) ? 1u : 0u;
        else r = uint(wrap_to_dtype(OUT_DT, apply_int(a, b)));
    }
    STORE(result, i, r);
}

ELEMENTWISE_MAIN(pc.count, element)
