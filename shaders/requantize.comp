#version 450
// QLinearMatMul's output: y = saturate(round_half_even(C * (a_scale * b_scale / y_scale)) +
// y_zero_point), the scales' product rounded to their dtype as ONNX's reference computes it.
// The scales sit packed (shaders/pack_words.comp): A's (one, or one per row), B's (one, or
// one per column), then y's.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint SCALE_DT = 0u;

layout(std430, binding = 0) readonly buffer C { int c[]; };
layout(std430, binding = 1) readonly buffer Scales { uint scales[]; };
layout(std430, binding = 2) readonly buffer ZeroPoint { int y_zp[]; };
layout(std430, binding = 3) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push {
    uint count, M, N, a_scales, b_scales, has_zero_point;
    int lo, hi;
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint n = i % pc.N, m = (i / pc.N) % pc.M;
    float as = uintBitsToFloat(scales[pc.a_scales == 1u ? 0u : m]);
    float bs = uintBitsToFloat(scales[pc.a_scales + (pc.b_scales == 1u ? 0u : n)]);
    float ys = uintBitsToFloat(scales[pc.a_scales + pc.b_scales]);
    float s = round_to_dtype(SCALE_DT, round_to_dtype(SCALE_DT, as * bs) / ys);
    float r = roundEven(float(c[i]) * s) + float(pc.has_zero_point != 0u ? y_zp[0] : 0);
    y[i] = uint(int(clamp(r, float(pc.lo), float(pc.hi))));
}
