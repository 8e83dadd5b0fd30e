#version 450
// QuantizeLinear (DEQUANT false): y = saturate(round_half_even(x / scale) + zero_point), the
// quotient rounded to the scale's dtype first; DequantizeLinear (DEQUANT true):
// y = (x - zero_point) * scale in fp32, rounded to the output dtype. A float8/float4 quantized
// side (Q_DT) rounds x / scale to the format instead (src/ops/quantize.c). The scale and zero point
// of element i: one for the tensor (KIND 0), one per index along the axis (KIND 1), or one per
// block of BLOCK indices along the axis, the other dims kept (KIND 2).
#include "common.glsl"
#include "small_dtypes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool DEQUANT = false;
layout(constant_id = 2) const uint SCALE_DT = 0u;
layout(constant_id = 3) const uint OUT_DT = 0u;
layout(constant_id = 4) const uint KIND = 0u;
layout(constant_id = 5) const uint Q_DT = DT_U8; // the quantized side's dtype (x or y)

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) readonly buffer Scale { uint scale[]; };
layout(std430, binding = 2) readonly buffer ZeroPoint { int zero_point[]; };
layout(std430, binding = 3) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count, inner, axis_len, block, blocks, has_zero_point, zero_point_offset;
    int lo, hi; // QuantizeLinear's saturation range
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint a = (i / pc.inner) % pc.axis_len, s = 0u;
    if (KIND == 1u) s = a;
    if (KIND == 2u) s = ((i / (pc.inner * pc.axis_len)) * pc.blocks + a / pc.block) * pc.inner + i % pc.inner;
    float sc = uintBitsToFloat(scale[s]);
    int zp = pc.has_zero_point != 0u ? zero_point[pc.zero_point_offset + s] : 0;
    if (DEQUANT && sd_is_float(Q_DT)) { // float8/float4e2m1: no zero point (the reference's)
        y[i] = floatBitsToUint(round_to_dtype(OUT_DT, uintBitsToFloat(x[i]) * sc));
    } else if (DEQUANT) {
        y[i] = floatBitsToUint(round_to_dtype(OUT_DT, float(int(x[i]) - zp) * sc));
    } else if (sd_is_float(Q_DT)) { // to float8 (saturating when pc.lo != 0) or float4e2m1 (+ zero point)
        float q = round_to_dtype(SCALE_DT, div_rounded(uintBitsToFloat(x[i]), sc));
        if (pc.has_zero_point != 0u) q += intBitsToFloat(zp);
        y[i] = floatBitsToUint(round_minifloat(Q_DT, q, pc.lo != 0));
    } else {
        float q = round_to_dtype(SCALE_DT, div_rounded(uintBitsToFloat(x[i]), sc));
        // NaN saturates to 0 (the reference's cast of NaN is undefined; 0 is what the clamp of
        // a NaN gives on most hardware); infinities saturate to the range's ends
        float r = isnan(q) ? 0.0 : roundEven(q) + float(zp);
        y[i] = uint(int(clamp(r, float(pc.lo), float(pc.hi))));
    }
}
