#version 450
// BatchNormalization in training mode. MODE 0, one workgroup per channel c: the batch mean and
// population variance of x[:, c] over N and the spatial dims (two passes), then Y's scale and
// shift as norm_affine reads them: work = (scale', shift') per channel, then means, then
// variances. MODE 1 / 2, one invocation per channel: the running mean / variance output,
// momentum * input + (1 - momentum) * batch statistic. Bindings 0..3: x, (scale, bias,
// input mean) packed, input var, work (MODE 0); work, packed, input var, output (MODE 1, 2).
#include "common.glsl"

#define GROUP 128
layout(local_size_x = GROUP) in;
layout(constant_id = 0) const uint MODE = 0u;
layout(constant_id = 1) const uint DT = 0u; // the output's dtype (MODE 1, 2)

layout(std430, binding = 0) buffer B0 { uint b0[]; };
layout(std430, binding = 1) readonly buffer Params { uint params[]; };
layout(std430, binding = 2) readonly buffer Var { uint var_in[]; };
layout(std430, binding = 3) buffer B3 { uint b3[]; };
layout(push_constant) uniform Push { uint N, C, inner; float momentum, epsilon; } pc;

shared float partial[GROUP];

float f(uint w) { return uintBitsToFloat(w); }

float group_sum(float v)
{
    uint t = gl_LocalInvocationID.x;
    partial[t] = v;
    barrier();
    for (uint step = GROUP / 2u; step > 0u; step /= 2u) {
        if (t < step) partial[t] += partial[t + step];
        barrier();
    }
    float total = partial[0];
    barrier();
    return total;
}

void main()
{
    if (MODE != 0u) {
        uint c = gl_GlobalInvocationID.x;
        if (c >= pc.C) return;
        float given = MODE == 1u ? f(params[2u * pc.C + c]) : f(var_in[c]);
        float batch = f(b0[(MODE == 1u ? 2u : 3u) * pc.C + c]);
        b3[c] = floatBitsToUint(round_to_dtype(DT, given * pc.momentum + batch * (1.0 - pc.momentum)));
        return;
    }
    uint c = gl_WorkGroupID.x, t = gl_LocalInvocationID.x, per = pc.N * pc.inner;
    float s = 0.0;
    for (uint j = t; j < per; j += GROUP) s += f(b0[((j / pc.inner) * pc.C + c) * pc.inner + j % pc.inner]);
    float mean = group_sum(s) / float(per);
    s = 0.0;
    for (uint j = t; j < per; j += GROUP) {
        float d = f(b0[((j / pc.inner) * pc.C + c) * pc.inner + j % pc.inner]) - mean;
        s += d * d;
    }
    float var = group_sum(s) / float(per);
    if (t == 0u) {
        float scale = f(params[c]) / sqrt(var + pc.epsilon);
        b3[2u * c] = floatBitsToUint(scale);
        b3[2u * c + 1u] = floatBitsToUint(f(params[pc.C + c]) - mean * scale);
        b3[2u * pc.C + c] = floatBitsToUint(mean);
        b3[3u * pc.C + c] = floatBitsToUint(var);
    }
}
