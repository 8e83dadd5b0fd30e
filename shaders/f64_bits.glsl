// float64 <-> float32 by integer operations on float64's two 32-bit words (low word first),
// for shaders that must not need shaderFloat64 (convert.comp) or must round exactly as a C cast
// does whatever the driver's conversion rounds to (unary_f64.comp's Cast); and the dtype code
// the *_f64 kernels know float64 by.
#ifndef F64_BITS_GLSL
#define F64_BITS_GLSL

// float64 held as such (GPU_F64; OP_DTYPE_F64 in src/ops/op.h): beside common.glsl's codes,
// which give float64 float32's code (the word form the other kernels see)
#define DT_F64 24u

// float64 bits (low word, high word) to the nearest float32 (ties to even; beyond float32's
// range +-inf, below its smallest subnormal +-0; NaN stays NaN), as a C cast does.
uint f64_to_f32_bits(uint lo, uint hi)
{
    uint sign = hi & 0x80000000u;
    int e = int((hi >> 20) & 0x7ffu);
    uint sig = 0x800000u | ((hi & 0xfffffu) << 3) | (lo >> 29); // 24 bits, the implicit one included
    uint rest = lo & 0x1fffffffu;                                // the 29 bits below them
    if (e == 0x7ff) return (hi & 0xfffffu) != 0u || lo != 0u ? sign | 0x7fc00000u | (sig & 0x3fffffu) : sign | 0x7f800000u;
    if (e == 0) return sign; // zero, or a float64 subnormal: below float32's subnormals
    int ef = e - 896; // float32's exponent field
    if (ef >= 255) return sign | 0x7f800000u;
    if (ef >= 1) {
        bool up = rest > 0x10000000u || (rest == 0x10000000u && (sig & 1u) != 0u);
        return sign | ((uint(ef - 1) << 23) + sig + (up ? 1u : 0u)); // a carry moves into the exponent
    }
    int shift = 1 - ef; // a float32 subnormal: sig >> shift, rounded
    if (shift >= 25) return sign;
    uint q = sig >> uint(shift), r = sig & ((1u << uint(shift)) - 1u), halfway = 1u << uint(shift - 1);
    bool up = r > halfway || (r == halfway && (rest != 0u || (q & 1u) != 0u));
    return sign | (q + (up ? 1u : 0u));
}

// float32 bits to float64 bits (exact): .x the low word, .y the high word.
uvec2 f32_to_f64_bits(uint w)
{
    uint sign = w & 0x80000000u, e = (w >> 23) & 0xffu, m = w & 0x7fffffu;
    if (e == 255u) return uvec2(m << 29, sign | 0x7ff00000u | (m >> 3));
    uint field = e + 896u; // float64's exponent field: 2^(e - 127) = 2^((e + 896) - 1023)
    if (e == 0u) {
        if (m == 0u) return uvec2(0u, sign);
        int top = findMSB(m); // a subnormal, m * 2^-149 = 1.f * 2^(top - 149): normalised
        field = uint(top + 874);
        m = (m << uint(23 - top)) & 0x7fffffu;
    }
    return uvec2(m << 29, sign | (field << 20) | (m >> 3));
}

#endif
