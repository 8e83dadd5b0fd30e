#version 450
// Gradient (ai.onnx.preview.training): one backward step of an element-wise node. Output
// element i of the operand's shape (aligned to y's rank) sums, over the dims the operand was
// broadcast along, the node's local derivative times the incoming gradient g (y's shape):
// out[i] (+)= sum_j g[j] * d y[j] / d operand. a and b are the node's operands, read through
// strides in y's index space (0 along a broadcast dim); TARGET says which one is derived.
#include "common.glsl"

layout(local_size_x_id = 0) in;
// 0 g (Add, Identity, the copy out), 1 -g (Sub's b, Neg), 2 g*b (Mul's a), 3 g*a (Mul's b),
// 4 g/b (Div's a), 5 -g*a/b^2 (Div's b), 6 Relu, 7 Sigmoid, 8 Tanh, 9 Exp (of a), 10 zero
layout(constant_id = 1) const uint RULE = 0u;
layout(constant_id = 2) const uint TARGET = 0u; // 0: a, 1: b
layout(constant_id = 3) const uint ACCUMULATE = 0u; // add to out instead of storing

layout(std430, binding = 0) readonly buffer G { float g[]; };
layout(std430, binding = 1) readonly buffer A { float a[]; };
layout(std430, binding = 2) readonly buffer B { float b[]; };
layout(std430, binding = 3) buffer Out { float out_[]; };
layout(push_constant) uniform Push {
    uint count, rank;
    uint dims[8];      // y's
    uint a_stride[8];  // in y's index space, 0 along a broadcast dim
    uint b_stride[8];
} pc;

float local_term(float gv, float av, float bv)
{
    if (RULE == 0u) return gv;
    if (RULE == 1u) return -gv;
    if (RULE == 2u) return gv * bv;
    if (RULE == 3u) return gv * av;
    if (RULE == 4u) return gv / bv;
    if (RULE == 5u) return -gv * av / (bv * bv);
    if (RULE == 6u) return av > 0.0 ? gv : 0.0;
    if (RULE == 7u) { float s = 1.0 / (1.0 + exp(-av)); return gv * s * (1.0 - s); }
    if (RULE == 8u) { float t = tanh(av); return gv * (1.0 - t * t); }
    if (RULE == 9u) return gv * exp(av);
    return 0.0;
}

bool reduced(uint k) { return (TARGET == 0u ? pc.a_stride[k] : pc.b_stride[k]) == 0u && pc.dims[k] > 1u; }

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    // y's coordinates along the kept dims, from i (row-major over the operand's shape)
    uint coord[8], rem = i, combos = 1u;
    for (int k = int(pc.rank) - 1; k >= 0; k--) {
        coord[k] = 0u;
        if (reduced(uint(k))) { combos *= pc.dims[k]; continue; }
        coord[k] = rem % pc.dims[k];
        rem /= pc.dims[k];
    }
    float sum = 0.0;
    for (uint r = 0u; r < combos; r++) {
        uint rr = r, yi = 0u, ai = 0u, bi = 0u, ystride = 1u;
        for (int k = int(pc.rank) - 1; k >= 0; k--) {
            uint ck = coord[k];
            if (reduced(uint(k))) { ck = rr % pc.dims[k]; rr /= pc.dims[k]; }
            yi += ck * ystride;
            ystride *= pc.dims[k];
            ai += ck * pc.a_stride[k];
            bi += ck * pc.b_stride[k];
        }
        sum += local_term(g[yi], a[ai], b[bi]);
    }
    out_[i] = ACCUMULATE != 0u ? out_[i] + sum : sum;
}
