#version 450
// MatMul and Gemm for CPU Vulkan drivers (lavapipe): Y = alpha * A B + beta * C, batched over
// gl_WorkGroupID.z, without shared memory or barriers (on llvmpipe they split the SIMD loop
// over a workgroup's invocations and cost more than they save).
// llvmpipe (Mesa 22.3) runs a subgroup as the lanes of one SIMD vector and issues every
// storage-buffer load as a loop over the lanes with a bounds check per component: a vec4 load
// costs about as much as 30 FMAs, so loads, not arithmetic, set the speed. Hence:
// - an invocation holds an RM x RN block of Y in registers (RN adjacent columns, lanes of a
//   subgroup on adjacent column blocks, all lanes on the same RM rows);
// - B comes packed (src/ops/matmul_cpu.c): per batch, per workgroup's LX blocks of RN
//   columns, [K4 * 4][LX][RN], zero-padded, so that each lane's k-row is RN/4 consecutive vec4
//   loads and the lanes of a workgroup read one contiguous stream; a B whose rows are whole
//   vec4s (row-major, N and K multiples of 4) is read in place the same way (B_DIRECT);
// - the rows of A, the same for every lane, are loaded once per subgroup, not once per lane:
//   lane l loads row l of each group of SG rows (4 consecutive k as a vec4) and
//   subgroupBroadcast hands it to all lanes, which in SIMD is one extract and splat.
// A is read in place when its rows are whole vec4s along K, else from the copy
// shaders/matmul_cpu_pack.comp made.
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OUT_DT = 0u;
layout(constant_id = 2) const uint RQ = 4u;  // groups of SG rows of Y per invocation
layout(constant_id = 3) const uint RN = 8u;  // columns of Y per invocation, a multiple of 4
layout(constant_id = 4) const bool HAS_C = false;
layout(constant_id = 5) const bool CLAMP = false; // a fused Relu/Clip: min(max(v, lo), hi)
layout(constant_id = 6) const uint SG = 8u;  // the subgroup size, 4 to 16 (matmul_cpu.c checks)
layout(constant_id = 7) const bool B_DIRECT = false; // B read in place: rows of b_row vec4s

const uint RN4 = RN / 4u;
const uint RM = RQ * SG;

layout(std430, binding = 0) readonly buffer A { uvec4 a[]; };
layout(std430, binding = 1) readonly buffer B { uvec4 b[]; };
layout(std430, binding = 2) readonly buffer C { uint cb[]; };
layout(std430, binding = 3) writeonly buffer Y { uint y[]; };

// keep in step with mm_cpu_push in src/ops/matmul_cpu.c; a_* and b_* offsets in vec4s
layout(push_constant) uniform Push {
    uint M, N, K4, a_row;         // K4: K in vec4s; a_row: A's row stride in vec4s
    uint b_row;                   // B's (k) row stride in vec4s
    uint scm, scn;
    float alpha, beta;
    uint bd1, bd2, sa0, sa1, sa2, sb0, sb1, sb2; // three batch dims (outermost size implied)
    uint a_base, b_base, y_base, batch_base;
    float lo, hi;                 // CLAMP's bounds
} pc;

vec4 acc[RM][RN4];
vec4 bv[4][RN4]; // this lane's B for 4 consecutive k

// row i of the block gets A(i, 4 k) * B(4 k, this lane's columns)
void accumulate(uint i, vec4 av)
{
    [[unroll]] for (uint kk = 0u; kk < 4u; kk++)
        [[unroll]] for (uint j = 0u; j < RN4; j++) acc[i][j] = fma(vec4(av[kk]), bv[kk][j], acc[i][j]);
}

void main()
{
    uint LX = gl_WorkGroupSize.x;
    uint nb = gl_GlobalInvocationID.x; // the column block; blocks past N are zeros
    uint m0 = gl_WorkGroupID.y * RM;
    uint z = gl_WorkGroupID.z + pc.batch_base;
    uint i2 = z % pc.bd2, i1 = (z / pc.bd2) % pc.bd1, i0 = z / (pc.bd2 * pc.bd1);
    uint a_off = pc.a_base + i0 * pc.sa0 + i1 * pc.sa1 + i2 * pc.sa2;
    uint b_off = pc.b_base + i0 * pc.sb0 + i1 * pc.sb1 + i2 * pc.sb2;
    uint cols[RN4]; // this lane's vec4 columns of a row of B; in place, past N the last again
    [[unroll]] for (uint j = 0u; j < RN4; j++)
        cols[j] = B_DIRECT ? min(nb * RN4 + j, pc.N / 4u - 1u)
                           : gl_WorkGroupID.x * pc.K4 * 4u * LX * RN4 + gl_LocalInvocationID.x * RN4 + j;

    uint lane = gl_SubgroupInvocationID;
    uint my_rows[RQ]; // the rows this lane loads for the subgroup; past M, the last row again
    [[unroll]] for (uint q = 0u; q < RQ; q++) my_rows[q] = a_off + min(m0 + q * SG + lane, pc.M - 1u) * pc.a_row;

    [[unroll]] for (uint i = 0u; i < RM; i++)
        [[unroll]] for (uint j = 0u; j < RN4; j++) acc[i][j] = vec4(0.0);

    for (uint k4 = 0u; k4 < pc.K4; k4++) {
        uint bk = b_off + k4 * 4u * pc.b_row;
        [[unroll]] for (uint kk = 0u; kk < 4u; kk++)
            [[unroll]] for (uint j = 0u; j < RN4; j++) bv[kk][j] = uintBitsToFloat(b[bk + kk * pc.b_row + cols[j]]);
        [[unroll]] for (uint q = 0u; q < RQ; q++) {
            vec4 mine = uintBitsToFloat(a[my_rows[q] + k4]);
            // subgroupBroadcast takes a constant lane: one line per lane, folded away past SG
            accumulate(q * SG + 0u, subgroupBroadcast(mine, 0u));
            accumulate(q * SG + 1u, subgroupBroadcast(mine, 1u));
            accumulate(q * SG + 2u, subgroupBroadcast(mine, 2u));
            accumulate(q * SG + 3u, subgroupBroadcast(mine, 3u));
            if (SG > 4u) {
                accumulate(q * SG + 4u, subgroupBroadcast(mine, 4u));
                accumulate(q * SG + 5u, subgroupBroadcast(mine, 5u));
                accumulate(q * SG + 6u, subgroupBroadcast(mine, 6u));
                accumulate(q * SG + 7u, subgroupBroadcast(mine, 7u));
            }
            if (SG > 8u) {
                accumulate(q * SG + 8u, subgroupBroadcast(mine, 8u));
                accumulate(q * SG + 9u, subgroupBroadcast(mine, 9u));
                accumulate(q * SG + 10u, subgroupBroadcast(mine, 10u));
                accumulate(q * SG + 11u, subgroupBroadcast(mine, 11u));
                accumulate(q * SG + 12u, subgroupBroadcast(mine, 12u));
                accumulate(q * SG + 13u, subgroupBroadcast(mine, 13u));
                accumulate(q * SG + 14u, subgroupBroadcast(mine, 14u));
                accumulate(q * SG + 15u, subgroupBroadcast(mine, 15u));
            }
        }
    }

    uint y_off = pc.y_base + z * pc.M * pc.N;
    [[unroll]] for (uint i = 0u; i < RM; i++) {
        uint m = m0 + i;
        if (m >= pc.M) break;
        [[unroll]] for (uint j = 0u; j < RN4; j++) {
            [[unroll]] for (uint l = 0u; l < 4u; l++) {
                uint n = nb * RN + 4u * j + l;
                if (n >= pc.N) break;
                float v = pc.alpha * acc[i][j][l];
                if (HAS_C) v += pc.beta * uintBitsToFloat(cb[m * pc.scm + n * pc.scn]);
                y[y_off + m * pc.N + n] = floatBitsToUint(round_to_dtype(OUT_DT, fused_clamp(CLAMP, v, pc.lo, pc.hi)));
            }
        }
    }
}
