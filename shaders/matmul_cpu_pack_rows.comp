#version 450
#extension GL_EXT_samplerless_texture_functions : require
// The A operand of shaders/matmul_cpu.glsl packed a row per invocation, for CPU Vulkan drivers:
// [z][M][K4 * 4], K zero-padded to a multiple of 4 (a row is K4 uvec4s), from any batched,
// strided source read as a texel buffer of 32-bit words. matmul_cpu_pack.comp writes the same
// layout an element per invocation, with a division and a storage-buffer load per element, each
// a loop over the lanes on llvmpipe: attention's P (ACT's [8, 302, 302], rows of 302 words, not
// whole texels) took 6.3 ms there. Here the lanes are LX adjacent rows, a word fetch is one
// gather for all of them, and the row's texels are stored 4 words at a time.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(binding = 0) uniform utextureBuffer S;
layout(std430, binding = 1) writeonly buffer D { uvec4 d[]; };

// keep in step with mm_pack_push in src/ops/matmul_cpu.c (count: rows of all batches)
layout(push_constant) uniform Push {
    uint count;       // z * M rows to write
    uint rows, cols;  // M, K
    uint srow, scol;  // the source's strides of a row and of k (sam, sak)
    uint K4;
    uint bd1, bd2, s0, s1, s2; // three batch dims of the product and the source's strides
    uint base;
} pc;

void main()
{
    uint r = linear_id();
    if (r >= pc.count) return;
    uint m = r % pc.rows, z = r / pc.rows;
    uint i2 = z % pc.bd2, i1 = (z / pc.bd2) % pc.bd1, i0 = z / (pc.bd2 * pc.bd1);
    uint src = pc.base + i0 * pc.s0 + i1 * pc.s1 + i2 * pc.s2 + m * pc.srow;
    for (uint k4 = 0u; k4 < pc.K4; k4++) {
        uvec4 v;
        [[unroll]] for (uint e = 0u; e < 4u; e++) {
            uint k = k4 * 4u + e;
            v[e] = k < pc.cols ? texelFetch(S, int(src + k * pc.scol)).x : 0u;
        }
        d[r * pc.K4 + k4] = v;
    }
}
