#version 450
// DynamicQuantizeLinear's parameters: one workgroup takes min(0, min x) and max(0, max x), then
// scale = (max - min) / 255 (1 / 255 when they are equal) and zero point = round_half_even(
// clamp(-min / scale, 0, 255)), written for the quantize kernel (words 0 and 1 of one scratch
// value: fp32 and int32) and as the node's outputs y_scale and y_zero_point.
#include "common.glsl"

layout(local_size_x_id = 0) in; // 128, the size of lo[] and hi[]
layout(constant_id = 1) const uint DT = 0u;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) writeonly buffer Params { uint params[]; };
layout(std430, binding = 2) writeonly buffer YScale { uint y_scale[]; };
layout(std430, binding = 3) writeonly buffer YZeroPoint { uint y_zero_point[]; };
layout(push_constant) uniform Push { uint count; } pc;

shared float lo[128];
shared float hi[128];

void main()
{
    uint t = gl_LocalInvocationID.x;
    float a = 0.0, b = 0.0;
    for (uint i = t; i < pc.count; i += gl_WorkGroupSize.x) {
        float v = uintBitsToFloat(x[i]);
        a = min(a, v);
        b = max(b, v);
    }
    lo[t] = a;
    hi[t] = b;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {
        if (t < s) {
            lo[t] = min(lo[t], lo[t + s]);
            hi[t] = max(hi[t], hi[t + s]);
        }
        barrier();
    }
    if (t != 0u) return;
    float scale = div_rounded(lo[0] == hi[0] ? 1.0 : hi[0] - lo[0], 255.0);
    int zp = int(roundEven(clamp(0.0 - div_rounded(lo[0], scale), 0.0, 255.0)));
    params[0] = floatBitsToUint(scale);
    params[1] = uint(zp);
    y_scale[0] = floatBitsToUint(round_to_dtype(DT, scale));
    y_zero_point[0] = uint(zp);
}
