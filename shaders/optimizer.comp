#version 450
// The optimizers of ai.onnx.preview.training (Adagrad, Adam, Momentum) on one tensor, as ONNX's
// reference: one invocation per element computes the update and stores the output OUT
// (0: X_new, 1: V_new or H_new (Adagrad), 2: H_new (Adam)), one dispatch per output. `a`
// holds x, g and the first state (v, or h for Adagrad), n each; `b` Adam's h (n), then R and T.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const uint RULE = 0u; // 0 Adagrad, 1 Adam, 2 Momentum, 3 Nesterov
layout(constant_id = 3) const uint OUT = 0u;

layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push {
    uint n, rt_at;
    float norm, norm_post, alpha, beta, epsilon, decay;
} pc;

float f(uint w) { return uintBitsToFloat(w); }

void main()
{
    uint i = linear_id();
    if (i >= pc.n) return;
    float r = f(b[pc.rt_at]), t = float(int(b[pc.rt_at + 1u]));
    float x = f(a[i]), g = f(a[pc.n + i]) + pc.norm * x, s = f(a[2u * pc.n + i]), v;
    if (RULE == 0u) { // Adagrad: s is h
        float h = s + g * g;
        v = OUT == 0u ? x - r / (1.0 + t * pc.decay) * g / (sqrt(h) + pc.epsilon) : h;
    } else if (RULE == 1u) { // Adam: s is v
        float vn = pc.alpha * s + (1.0 - pc.alpha) * g;
        float hn = pc.beta * f(b[i]) + (1.0 - pc.beta) * g * g;
        float ra = t > 0.0 ? r * sqrt(1.0 - pow(pc.beta, t)) / (1.0 - pow(pc.alpha, t)) : r;
        v = OUT == 0u ? (1.0 - pc.norm_post) * (x - ra * (vn / (sqrt(hn) + pc.epsilon))) : OUT == 1u ? vn : hn;
    } else { // Momentum: s is v
        float vn = pc.alpha * s + (t > 0.0 ? pc.beta : 1.0) * g;
        v = OUT == 1u ? vn : RULE == 2u ? x - r * vn : x - r * (g + pc.alpha * vn);
    }
    y[i] = floatBitsToUint(round_to_dtype(DT, v));
}
