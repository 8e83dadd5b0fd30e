#version 450
// MatMulInteger and QLinearMatMul's product: C[b, m, n] = sum_k (A[b, m, k] - a_zp) *
// (B[b, k, n] - b_zp) in int32, one invocation per output. The zero points sit in one packed
// buffer (shaders/pack_words.comp): A's first (none, one, or one per row m), then B's (none,
// one, or one per column n).
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer A { int a[]; };
layout(std430, binding = 1) readonly buffer B { int b[]; };
layout(std430, binding = 2) readonly buffer ZeroPoints { int zp[]; };
layout(std430, binding = 3) writeonly buffer C { int c[]; };
layout(push_constant) uniform Push {
    uint count, M, K, N, a_batch_stride, b_batch_stride, a_zps, b_zps;
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint n = i % pc.N, m = (i / pc.N) % pc.M, batch = i / (pc.N * pc.M);
    int azp = pc.a_zps == 0u ? 0 : zp[pc.a_zps == 1u ? 0u : m];
    int bzp = pc.b_zps == 0u ? 0 : zp[pc.a_zps + (pc.b_zps == 1u ? 0u : n)];
    uint ab = batch * pc.a_batch_stride + m * pc.K, bb = batch * pc.b_batch_stride + n;
    int acc = 0;
    for (uint k = 0u; k < pc.K; k++) acc += (a[ab + k] - azp) * (b[bb + k * pc.N] - bzp);
    c[i] = acc;
}
