// Shared by every shader: dtype codes, rounding and wrapping of results, grid indexing.
// The GPU holds every element in 32 bits: floats (fp32, fp16, bf16) as fp32 bits, integers
// and bool as int32. Results are rounded (fp16, bf16) or wrapped (8/16-bit ints, bool) to the
// output dtype so that values match what the dtype itself would hold.
#ifndef COMMON_GLSL
#define COMMON_GLSL

#define DT_F32 0u
#define DT_F16 1u
#define DT_BF16 2u
#define DT_I32 3u
#define DT_U8 4u
#define DT_I8 5u
#define DT_U16 6u
#define DT_I16 7u
#define DT_BOOL 8u

bool dt_is_float(uint dt) { return dt < 3u; }

float round_to_dtype(uint dt, float v)
{
    if (dt == DT_F16) {
        if (isnan(v) || isinf(v)) return v;
        return unpackHalf2x16(packHalf2x16(vec2(v, 0.0))).x;
    }
    if (dt == DT_BF16) {
        uint b = floatBitsToUint(v);
        if (isnan(v)) return v;
        b += 0x7fffu + ((b >> 16) & 1u);
        return uintBitsToFloat(b & 0xffff0000u);
    }
    return v;
}

int wrap_to_dtype(uint dt, int v)
{
    if (dt == DT_U8) return v & 0xff;
    if (dt == DT_I8) return (v << 24) >> 24;
    if (dt == DT_U16) return v & 0xffff;
    if (dt == DT_I16) return (v << 16) >> 16;
    if (dt == DT_BOOL) return v != 0 ? 1 : 0;
    return v;
}

// A value read from storage as float, whatever its dtype.
float as_float(uint dt, uint bits) { return dt_is_float(dt) ? uintBitsToFloat(bits) : float(int(bits)); }
// Stores a float result in dtype dt's 32-bit form.
uint from_float(uint dt, float v)
{
    if (dt_is_float(dt)) return floatBitsToUint(round_to_dtype(dt, v));
    if (dt == DT_BOOL) return v != 0.0 ? 1u : 0u;
    return uint(wrap_to_dtype(dt, int(v)));
}

// Linear invocation index over a 2-D grid (see op_grid_1d). A macro, not a function: a
// function compiled before the shader's `layout(local_size_x_id = 0) in;` sees the default
// gl_WorkGroupSize (1,1,1), and every invocation past the first grid row then writes the
// wrong element (found on tensors of more than 65535 workgroups).
#define linear_id() (gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x)
// Element-wise kernels (binary, unary, copy) put their work for element i in a function and
// end in ELEMENTWISE_MAIN(count, function). On GPUs (spec constant GRID_STRIDE, set by
// op_grid_elementwise in src/plan/op_ctx.c) the grid is capped and each invocation takes
// every grid_stride()-th element from linear_id() on, stopping before i would pass count (no
// wrap past 2^32); elsewhere an invocation per element, without the loop: lavapipe (Mesa
// 22.3) grows its memory by about a kilobyte per dispatch of a kernel with such a loop.
#define grid_stride() (gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_WorkGroupSize.x)
#define ELEMENTWISE_MAIN(count, element)                                                              \
    void main()                                                                                      \
    {                                                                                                \
        uint i_ = linear_id();                                                                       \
        if (!GRID_STRIDE) {                                                                          \
            if (i_ < (count)) element(i_);                                                           \
            return;                                                                                  \
        }                                                                                            \
        for (uint step_ = grid_stride(); i_ < (count); i_ = (count) - i_ <= step_ ? (count) : i_ + step_) \
            element(i_);                                                                             \
    }

// erf with |error| < 1.2e-7 (Numerical Recipes' erfc Chebyshev fit).
float erf_approx(float x)
{
    float z = abs(x);
    float t = 1.0 / (1.0 + 0.5 * z);
    float r = t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
              t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
              t * (-0.82215223 + t * 0.17087277)))))))));
    return x >= 0.0 ? 1.0 - r : r - 1.0;
}

// a mod n in [0, n) for n > 0 and any sign of a. GLSL leaves % undefined for negative
// operands (NVIDIA and llvmpipe differ), so never apply % to a value that may be negative.
int mod_floor(int a, int n)
{
    return a >= 0 ? a % n : n - 1 - (-(a + 1)) % n;
}

// A fused Relu/Clip (op_fuse_clamp): applied only when the plan asked for it, so that NaN
// passes through unfused kernels untouched (GLSL leaves min/max of NaN undefined).
// x / y as IEEE division rounds it: drivers may compute x * (1 / y) instead (NVIDIA's is 1-2
// ulp off), which moves a quotient across a rounding boundary (QuantizeLinear's x / scale on
// the H200). Of the quotient and its two neighbouring floats, the one whose residual
// x - q * y (one rounding, through fma) is smallest.
float div_rounded(float x, float y)
{
    float q = x / y;
    if (isnan(q) || isinf(q) || q == 0.0) return q;
    float below = uintBitsToFloat(floatBitsToUint(q) - 1u), above = uintBitsToFloat(floatBitsToUint(q) + 1u);
    float e = abs(fma(-q, y, x)), e_below = abs(fma(-below, y, x)), e_above = abs(fma(-above, y, x));
    return e_below < e ? (e_above < e_below ? above : below) : e_above < e ? above : q;
}

// tanh near 0 by its series: the driver's tanh may come from exponentials that cancel there
float tanh_accurate(float v)
{
    if (abs(v) < 0.05) {
        float v2 = v * v;
        return v * (1.0 - v2 * (1.0 / 3.0 - v2 * (2.0 / 15.0)));
    }
    return v > 15.0 ? 1.0 : v < -15.0 ? -1.0 : tanh(v);
}

// log(1 + y) without the rounding of 1 + y for small y (Goldberg's trick)
// log(1 + y) for y >= 0: by its series below 1/64, where a driver's log of a number near 1 is
// accurate only absolutely (NVIDIA's: softplus(-10) came out 0.2% off, test_mish on the H200)
float log1p_accurate(float y)
{
    if (y < 0.015625) return y * (1.0 - y * (0.5 - y * (1.0 / 3.0 - y * 0.25)));
    float u = 1.0 + y;
    return log(u) * (y / (u - 1.0));
}
float softplus(float v) { return v > 20.0 ? v : max(v, 0.0) + log1p_accurate(exp(-abs(v))); }

// A fused epilogue (op_fuse_clamp, op_fuse_activation in src/plan/op_ctx.c): with lo <= hi a
// Relu/Clip, min(max(v, lo), hi); with lo > hi (lo = +inf) an activation that hi names: 0 GELU
// with erf, 1 GELU with tanh, 2 SiLU (x * sigmoid(x)), 3 Sigmoid, 4 ELU (alpha 1), 5 Mish,
// 6 Tanh; each as unary.glsl computes it (the sigmoid without overflow of exp either side).
// Computed on the fp32 result, before any rounding to 16 bits.
float fused_clamp(bool enabled, float v, float lo, float hi)
{
    if (!enabled) return v;
    if (lo <= hi) return min(max(v, lo), hi);
    if (hi == 2.0 || hi == 3.0) {
        float s = v >= 0.0 ? 1.0 / (1.0 + exp(-v)) : exp(v) / (1.0 + exp(v));
        return hi == 2.0 ? v * s : s;
    }
    if (hi == 4.0) return v >= 0.0 ? v : exp(v) - 1.0;
    if (hi == 5.0) return v * tanh_accurate(softplus(v));
    if (hi == 6.0) return tanh_accurate(v);
    return hi == 0.0 ? 0.5 * v * (1.0 + erf_approx(v * 0.70710678118))
                     : 0.5 * v * (1.0 + tanh_accurate(0.7978845608 * (v + 0.044715 * v * v * v)));
}

#endif
