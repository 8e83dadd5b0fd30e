// The dtypes held widened in 32-bit words that only Cast (unary.glsl) and the quantizers see
// by their own codes (src/plan/op_dispatch.c, op_dtype_code_exact): the float8, float6 and float4
// formats and float8e8m0 as fp32 (exact), the 4- and 2-bit integers as int32. Every other
// kernel gets DT_F32 / DT_I32 for them: they meet only data movement there. (Kept out of
// common.glsl, which shaders/prebuilt/*.inc are compiled from.)
#ifndef SMALL_DTYPES_GLSL
#define SMALL_DTYPES_GLSL

// 4- and 2-bit integers, held as int32 (results wrap to the width)
#define DT_I4 9u
#define DT_U4 10u
#define DT_I2 11u
#define DT_U2 12u
// float8, float4, float8e8m0 and float6 formats, held as fp32 (exact; results round to the format)
#define DT_F8E4M3FN 16u
#define DT_F8E4M3FNUZ 17u
#define DT_F8E5M2 18u
#define DT_F8E5M2FNUZ 19u
#define DT_F4E2M1 20u
#define DT_F8E8M0 21u
#define DT_F6E2M3 22u
#define DT_F6E3M2 23u

bool sd_is_float(uint dt) { return dt_is_float(dt) || (dt >= 16u && dt <= 23u); }
// the formats round_minifloat rounds to (float8e8m0 has its own rounding, e8m0_word)
bool sd_is_minifloat(uint dt) { return dt >= DT_F8E4M3FN && dt <= DT_F6E3M2 && dt != DT_F8E8M0; }

// float8e8m0 (2^(code-127), code 255 NaN) as Cast rounds to it, on float32's bits as ONNX's
// reference does (src/util/dtype.c, e8m0_round): mode 0 up, 1 down, 2 nearest. Returns the
// fp32 word of the result (code 0, 2^-127, is the subnormal 0x00400000).
uint e8m0_word(float v, bool saturate, uint mode)
{
    uint b = floatBitsToUint(v), e = (b >> 23) & 0xffu;
    if (e == 0xffu) return 0x7fc00000u;
    bool up = false;
    if (mode == 0u) up = (b & 0x7fffffu) != 0u;
    if (mode == 2u) up = (b & 0x400000u) != 0u && ((b & 0x200000u) != 0u || (b & 0x1fffffu) != 0u || e > 0u);
    if (up && saturate && e == 0xfeu) up = false;
    if (up) e += 1u;
    return e == 0xffu ? 0x7fc00000u : e == 0u ? 0x00400000u : e << 23;
}

// v rounded to the nearest value of a small float format (ties to even): man mantissa bits,
// emin the smallest normal exponent, maxv the largest finite value. saturate clamps to
// +-maxv (infinity too); otherwise overflow is infinity for e5m2 and NaN for the formats
// without infinity. fnuz formats have no -0; float4e2m1 and the float6 formats have neither
// infinity nor NaN: they always saturate, and NaN becomes 0. The host's minifloat_round
// (src/util/dtype.c) is the same rounding.
float round_minifloat(uint dt, float v, bool saturate)
{
    int man = dt == DT_F8E5M2 || dt == DT_F8E5M2FNUZ || dt == DT_F6E3M2 ? 2 : dt == DT_F4E2M1 ? 1 : 3;
    int emin = dt == DT_F8E4M3FN ? -6 : dt == DT_F8E4M3FNUZ ? -7 : dt == DT_F8E5M2 ? -14 : dt == DT_F8E5M2FNUZ ? -15
             : dt == DT_F6E3M2 ? -2 : 0;
    float maxv = dt == DT_F8E4M3FN ? 448.0 : dt == DT_F8E4M3FNUZ ? 240.0 : dt == DT_F4E2M1 ? 6.0 : dt == DT_F6E2M3 ? 7.5
               : dt == DT_F6E3M2 ? 28.0 : 57344.0;
    bool nuz = dt == DT_F8E4M3FNUZ || dt == DT_F8E5M2FNUZ, finite_only = dt == DT_F4E2M1 || dt == DT_F6E2M3 || dt == DT_F6E3M2;
    float nan_v = uintBitsToFloat(0x7fc00000u), inf_v = uintBitsToFloat(0x7f800000u);
    if (isnan(v)) return finite_only ? 0.0 : v;
    bool neg = (floatBitsToUint(v) & 0x80000000u) != 0u;
    float a = abs(v);
    if (saturate || finite_only) a = min(a, maxv);
    if (isinf(a)) return dt == DT_F8E5M2 ? v : nan_v;
    int e;
    frexp(a, e); // a = m * 2^e, m in [0.5, 1)
    e = max(e - 1, emin);
    float q = exp2(float(e - man));
    float r = roundEven(a / q) * q;
    if (r > maxv) return dt == DT_F8E5M2 ? (neg ? -inf_v : inf_v) : nan_v;
    if (r == 0.0 && nuz) return 0.0;
    return neg ? -r : r;
}

// round_to_dtype and wrap_to_dtype (common.glsl) with these dtypes
float sd_round_to_dtype(uint dt, float v)
{
    if (sd_is_minifloat(dt)) return round_minifloat(dt, v, true);
    if (dt == DT_F8E8M0) return uintBitsToFloat(e8m0_word(v, true, 0u));
    return round_to_dtype(dt, v);
}

int sd_wrap_to_dtype(uint dt, int v)
{
    if (dt == DT_I4) return (v << 28) >> 28;
    if (dt == DT_U4) return v & 15;
    if (dt == DT_I2) return (v << 30) >> 30;
    if (dt == DT_U2) return v & 3;
    return wrap_to_dtype(dt, v);
}

#endif
