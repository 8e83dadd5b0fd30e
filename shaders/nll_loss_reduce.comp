#version 450
// The reductions of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: one workgroup sums
// the per-position losses and weights (shaders/nll_loss.comp: the weights follow the losses)
// in fp32 and writes one value:
// the sum, or with MEAN the sum over the sum of weights.
#include "common.glsl"

layout(local_size_x_id = 0) in; // 128, the size of partial[]
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const bool MEAN = false;

layout(std430, binding = 0) readonly buffer Loss { uint loss[]; };
layout(std430, binding = 1) writeonly buffer Out { uint result[]; };
layout(push_constant) uniform Push { uint positions; } pc;

shared vec2 partial[128];

void main()
{
    uint t = gl_LocalInvocationID.x;
    vec2 s = vec2(0.0);
    for (uint i = t; i < pc.positions; i += 128u) s += vec2(uintBitsToFloat(loss[i]), uintBitsToFloat(loss[pc.positions + i]));
    partial[t] = s;
    barrier();
    for (uint half_ = 64u; half_ > 0u; half_ >>= 1u) {
        if (t < half_) partial[t] += partial[t + half_];
        barrier();
    }
    if (t == 0u) result[0] = floatBitsToUint(round_to_dtype(DT, MEAN ? partial[0].x / partial[0].y : partial[0].x));
}
