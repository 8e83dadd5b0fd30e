#version 450
// Local response normalization across channels:
// y = x / (bias + alpha / size * sum of x^2 over the channel window) ^ beta.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count; uint channels; uint inner; int before; int after; float alpha_over_size; float beta; float bias;
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint plane = pc.channels * pc.inner;
    uint n = i / plane;
    uint c = (i % plane) / pc.inner;
    uint s = i % pc.inner;
    int lo = max(int(c) - pc.before, 0), hi = min(int(c) + pc.after, int(pc.channels) - 1);
    float sum = 0.0;
    for (int k = lo; k <= hi; k++) {
        float v = uintBitsToFloat(x[n * plane + uint(k) * pc.inner + s]);
        sum += v * v;
    }
    float v = uintBitsToFloat(x[i]);
    y[i] = floatBitsToUint(round_to_dtype(DT, v / pow(pc.bias + pc.alpha_over_size * sum, pc.beta)));
}
