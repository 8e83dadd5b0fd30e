#version 450
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, per position: one invocation per
// (n, d1..dk) of input [N, C, d1..dk] (D = d1 * ... * dk). With SOFTMAX the input is scores:
// the invocation takes log-softmax over C first (max, then the log of the sum of exponentials).
// loss[p] = -logp[n, t, d] * w[t] with t = target[p]; a target equal to ignore_index, or
// outside [0, C), gives loss 0 and weight 0; with pc.write_wsum, loss[positions + p] = that
// weight, for the mean (four bindings: the Android Baseline 2022 limit).
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const bool SOFTMAX = false;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) readonly buffer Target { int target[]; };
layout(std430, binding = 2) readonly buffer Weight { uint weight[]; };
layout(std430, binding = 3) writeonly buffer Loss { uint loss[]; };
layout(push_constant) uniform Push {
    uint positions, C, D;
    int ignore_index;
    uint has_ignore, has_weight, write_wsum, round_loss;
} pc;

float load(uint i) { return uintBitsToFloat(x[i]); }

void main()
{
    uint p = linear_id();
    if (p >= pc.positions) return;
    uint n = p / pc.D, d = p % pc.D, base = n * pc.C * pc.D + d;
    float lse = 0.0;
    if (SOFTMAX) {
        float m = load(base);
        for (uint c = 1u; c < pc.C; c++) m = max(m, load(base + c * pc.D));
        float s = 0.0;
        for (uint c = 0u; c < pc.C; c++) s += exp(load(base + c * pc.D) - m);
        lse = m + log(s);
    }
    int t = target[p];
    float l = 0.0, w = 0.0;
    if (!(pc.has_ignore != 0u && t == pc.ignore_index) && t >= 0 && uint(t) < pc.C) {
        w = pc.has_weight != 0u ? uintBitsToFloat(weight[t]) : 1.0;
        l = -(load(base + uint(t) * pc.D) - lse) * w;
    }
    loss[p] = floatBitsToUint(pc.round_loss != 0u ? round_to_dtype(DT, l) : l);
    if (pc.write_wsum != 0u) loss[pc.positions + p] = floatBitsToUint(w);
}
