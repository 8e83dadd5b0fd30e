#version 450
// Copies a batched, strided MatMul/Gemm operand into the layout shaders/matmul_cpu.glsl reads
// (for CPU Vulkan drivers), one element per invocation, zero-padding K to a multiple of 4:
// PACK_B = false: A as [z][M][K4 * 4] (a row is K4 vec4s);
// PACK_B = true:  B as [z][group of LX column blocks][K4 * 4][LX][RN] (a block's k-row is
//                 RN/4 vec4s, and the LX blocks of one workgroup's lanes lie side by side).
// It reads each source element once, so its cost is that of a copy next to the product's.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool PACK_B = false;
layout(constant_id = 2) const uint RN = 8u;
layout(constant_id = 3) const uint LX = 8u; // invocations of a workgroup of matmul_cpu

layout(std430, binding = 0) readonly buffer S { uint s[]; };
layout(std430, binding = 1) writeonly buffer D { uint d[]; };

// keep in step with mm_pack_push in src/ops/matmul_cpu.c
layout(push_constant) uniform Push {
    uint count;       // elements to write
    uint rows, cols;  // A: M, K; B: K, N
    uint srow, scol;  // strides of the source's rows and columns (A: sam, sak; B: sbk, sbn)
    uint K4;
    uint bd1, bd2, s0, s1, s2; // three batch dims of the product and the source's strides
    uint base;
} pc;

void main()
{
    uint id = linear_id();
    if (id >= pc.count) return;
    uint r, col, z;
    if (PACK_B) {
        uint j = id % RN, rest = id / RN;
        uint lane = rest % LX;
        rest /= LX;
        r = rest % (pc.K4 * 4u); // k
        rest /= pc.K4 * 4u;
        uint groups = (pc.cols + LX * RN - 1u) / (LX * RN);
        col = ((rest % groups) * LX + lane) * RN + j; // n
        z = rest / groups;
    } else {
        col = id % (pc.K4 * 4u); // k
        r = (id / (pc.K4 * 4u)) % pc.rows; // m
        z = id / (pc.K4 * 4u * pc.rows);
    }
    uint i2 = z % pc.bd2, i1 = (z / pc.bd2) % pc.bd1, i0 = z / (pc.bd2 * pc.bd1);
    bool inside = PACK_B ? r < pc.rows && col < pc.cols : col < pc.cols;
    uint src = pc.base + i0 * pc.s0 + i1 * pc.s1 + i2 * pc.s2 + r * pc.srow + col * pc.scol;
    uint v = s[inside ? src : 0u]; // never read past the source
    d[id] = inside ? v : 0u;
}
