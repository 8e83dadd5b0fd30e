#version 450
// SoftmaxCrossEntropyLoss's log_prob output: log-softmax over the class axis of [N, C, d1..dk],
// one invocation per (n, d1..dk) position (max, then the log of the sum of exponentials).
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) writeonly buffer LogP { uint logp[]; };
layout(push_constant) uniform Push { uint positions, C, D; } pc;

float load(uint i) { return uintBitsToFloat(x[i]); }

void main()
{
    uint p = linear_id();
    if (p >= pc.positions) return;
    uint base = (p / pc.D) * pc.C * pc.D + p % pc.D;
    float m = load(base);
    for (uint c = 1u; c < pc.C; c++) m = max(m, load(base + c * pc.D));
    float s = 0.0;
    for (uint c = 0u; c < pc.C; c++) s += exp(load(base + c * pc.D) - m);
    float lse = m + log(s);
    for (uint c = 0u; c < pc.C; c++) logp[base + c * pc.D] = floatBitsToUint(round_to_dtype(DT, load(base + c * pc.D) - lse));
}
