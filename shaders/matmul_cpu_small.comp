#version 450
#extension GL_EXT_samplerless_texture_functions : require
// Small MatMul/Gemm products with strided operands for CPU Vulkan drivers (lavapipe):
// attention's Q K^T and P V at short sequences, whose transposed or unaligned operands
// shaders/matmul_cpu.glsl would first copy into its texel layout (shaders/matmul_cpu_pack.comp,
// a dispatch as long as the product there). Here A and B are read in place through texel
// buffers of 32-bit words at any element strides (one gather for all lanes each), an
// invocation computing a 4 x 4 block of Y, the lanes of a workgroup on adjacent column blocks
// of consecutive batches (an attention product at sequence 10 has 3 column blocks: a lane per
// block alone left 5 of llvmpipe's 8 idle). Y = alpha * A B + beta * C.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "fused_act.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OUT_DT = 0u;
layout(constant_id = 2) const bool HAS_C = false;
layout(constant_id = 3) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)

const uint R = 4u;

layout(binding = 0) uniform utextureBuffer A;
layout(binding = 1) uniform utextureBuffer B;
layout(std430, binding = 2) readonly buffer C { uint cb[]; };
layout(std430, binding = 3) writeonly buffer Y { uint y[]; };

// keep in step with mm_small_push in src/ops/matmul_cpu.c; strides in elements
layout(push_constant) uniform Push {
    uint M, N, K;
    uint sam, sak, sbk, sbn, scm, scn;
    float alpha, beta;
    uint bd1, bd2, sa0, sa1, sa2, sb0, sb1, sb2; // three batch dims (outermost size implied)
    uint batch_base, batches; // this dispatch's batches from batch_base on
    float lo, hi; // ACT's bounds (a clamp's)
    uint a0, b0;  // A's and B's first elements (strided Slices read in place)
    // where Y(z, m, n) goes (a Transpose after the product stored through: src/ops/matmul.c
    // mm_store_transposed; dense: y_a = M N, y_zb = Z, y_a2 = 0, y_b = N, y_nb = N, y_c = 0)
    uint y_a, y_zb, y_a2, y_b, y_nb, y_c;
} pc;

void main()
{
    uint blocks = (pc.N + R - 1u) / R, lane = gl_GlobalInvocationID.x;
    bool live = lane < blocks * pc.batches;
    lane = min(lane, blocks * pc.batches - 1u); // past the end: the last block again, not stored
    uint n0 = lane % blocks * R, m0 = gl_WorkGroupID.y * R;
    uint z = lane / blocks + pc.batch_base;
    uint i2 = z % pc.bd2, i1 = (z / pc.bd2) % pc.bd1, i0 = z / (pc.bd2 * pc.bd1);
    int a_off = int(pc.a0 + i0 * pc.sa0 + i1 * pc.sa1 + i2 * pc.sa2);
    int b_off = int(pc.b0 + i0 * pc.sb0 + i1 * pc.sb1 + i2 * pc.sb2);
    int rows[R], cols[R]; // past M or N, the last row or column again: every fetch in bounds
    [[unroll]] for (uint i = 0u; i < R; i++) rows[i] = a_off + int(min(m0 + i, pc.M - 1u) * pc.sam);
    [[unroll]] for (uint j = 0u; j < R; j++) cols[j] = b_off + int(min(n0 + j, pc.N - 1u) * pc.sbn);
    int sak = int(pc.sak), sbk = int(pc.sbk);
    vec4 acc[R];
    [[unroll]] for (uint i = 0u; i < R; i++) acc[i] = vec4(0.0);
    for (int k = 0; k < int(pc.K); k++) {
        vec4 bv;
        [[unroll]] for (uint j = 0u; j < R; j++) bv[j] = uintBitsToFloat(texelFetch(B, cols[j] + k * sbk).x);
        [[unroll]] for (uint i = 0u; i < R; i++)
            acc[i] = fma(vec4(uintBitsToFloat(texelFetch(A, rows[i] + k * sak).x)), bv, acc[i]);
    }
    uint y_off = (z % pc.y_zb) * pc.y_a + (z / pc.y_zb) * pc.y_a2;
    [[unroll]] for (uint i = 0u; i < R; i++) {
        uint m = m0 + i;
        [[unroll]] for (uint j = 0u; j < R; j++) {
            uint n = n0 + j;
            if (!live || m >= pc.M || n >= pc.N) continue;
            float v = pc.alpha * acc[i][j];
            if (HAS_C) v += pc.beta * uintBitsToFloat(cb[m * pc.scm + n * pc.scn]);
            y[y_off + m * pc.y_b + (n / pc.y_nb) * pc.y_c + n % pc.y_nb] = floatBitsToUint(round_to_dtype(OUT_DT, fused_act(ACT, v, pc.lo, pc.hi)));
        }
    }
}
