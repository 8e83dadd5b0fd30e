#version 450
// MatMul and Gemm on tensor cores: Y = alpha * A B + beta * C for fp16 A, B (and C), with
// fp32 sums, through GL_NV_cooperative_matrix (16x16x16 fp16 products). A workgroup of four
// 32-wide subgroups computes a TILE x TILE block of Y (64 or 128), each subgroup a quarter of
// it as (TILE/32)^2 16x16 accumulators. K advances TK at a time through fp16 tiles of A and B
// in shared memory, staged by all 128 invocations along whichever axis the operand is
// contiguous in (a k-contiguous B, Gemm's transB, is kept as [n][k] and loaded column-major).
// Operands are read through strides, batched over gl_WorkGroupID.z, exactly as
// shaders/matmul_tiled.glsl (same push constants). The epilogue passes each accumulator
// through shared memory so that partial tiles at the edges are stored element by element.
// Chosen by src/ops/matmul_coopmat.c (mm_coopmat_choose) only where the device has the extension and 32-wide
// subgroups.
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_memory_scope_semantics : require // gl_ScopeSubgroup; glslang declares the Vulkan memory model for coopmat anyway
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "fused_act.glsl"

layout(local_size_x_id = 0) in; // 128: four subgroups of 32
// constant ids 1..8 as in matmul_tiled.glsl, so that one list serves both
layout(constant_id = 1) const uint OUT_DT = 0u;         // the output's logical dtype
layout(constant_id = 2) const bool IS_INT = false;      // always false here
layout(constant_id = 3) const bool A_K_CONTIG = true;   // A(m,k+1) follows A(m,k)
layout(constant_id = 4) const bool B_K_CONTIG = false;  // B(k+1,n) follows B(k,n)
layout(constant_id = 5) const bool HAS_C = false;
layout(constant_id = 6) const uint TILE = 64u;          // 64 or 128
// split K: z also picks a slice of K; raw fp32 sums go to binding 3 as words, [slice][z][M][N]
layout(constant_id = 7) const bool SPLIT_K = false;
layout(constant_id = 8) const uint ACT = 0u; // the fused activation (fused_act.glsl's code), compiled in
layout(constant_id = 9) const bool OUT_WORDS = false;   // Y held as fp32 words, not halves

layout(std430, binding = 0) readonly buffer A { float16_t a[]; };
layout(std430, binding = 1) readonly buffer B { float16_t b[]; };
layout(std430, binding = 2) readonly buffer C { float16_t cb[]; };
layout(std430, binding = 3) writeonly buffer Y { float16_t y[]; };
layout(std430, binding = 3) writeonly buffer YWords { uint y_words[]; };

// keep in step with mm_push in src/ops/matmul_record.c
layout(push_constant) uniform Push {
    uint M, N, K, sam, sak, sbk, sbn, scm, scn;
    float alpha, beta;
    uint bd1, bd2, sa0, sa1, sa2, sb0, sb1, sb2;
    uint a_base, b_base, y_base, batch_base;
    uint k_slice, z_count;
    float lo, hi;
} pc;

#include "matmul_slice.glsl"

#define LOCAL 128u
#define TK 32u
#define PAD 8u // halves: rows stay 16-byte aligned and consecutive rows start on other banks
#define SUB (TILE / 2u)   // a subgroup's block of Y
#define FRAGS (TILE / 32u) // 16x16 accumulators per side of that block
#define MAX_FRAGS 4u
// A tile: [m][k] (stride TK + PAD) or, when A is m-contiguous (transA), [k][m] (TILE + PAD)
const uint A_STRIDE = A_K_CONTIG ? TK + PAD : TILE + PAD;
// B tile: [k][n] (stride TILE + PAD) or, when B is k-contiguous (transB), [n][k] (TK + PAD)
const uint B_STRIDE = B_K_CONTIG ? TK + PAD : TILE + PAD;
const uint TILE_HALVES = TILE * (TK + PAD) > TK * (TILE + PAD) ? TILE * (TK + PAD) : TK * (TILE + PAD);

shared float16_t As[TILE_HALVES];
shared float16_t Bs[TILE_HALVES];
shared float staging[4u * 256u]; // the epilogue: one 16x16 accumulator per subgroup

void main()
{
    uint t = gl_LocalInvocationID.x, sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
    uint n0 = gl_WorkGroupID.x * TILE, m0 = gl_WorkGroupID.y * TILE;
    uint sm = (sg / 2u) * SUB, sn = (sg % 2u) * SUB; // this subgroup's block within the tile
    uint z, k_begin, k_end, a_off, b_off;
    mm_workgroup_slice(pc.K, z, k_begin, k_end, a_off, b_off);

    // fixed-size arrays (TILE is a spec constant); the [[unroll]] loops over FRAGS keep the
    // accumulators in registers once the driver knows TILE
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[MAX_FRAGS][MAX_FRAGS];
    [[unroll]] for (uint i = 0u; i < FRAGS; i++)
        [[unroll]] for (uint j = 0u; j < FRAGS; j++) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

    for (uint k0 = k_begin; k0 < k_end; k0 += TK) {
        // stage TILE x TK of A and TK x TILE of B, neighbouring invocations reading neighbours
        for (uint r = 0u; r < TILE * TK / LOCAL; r++) {
            uint idx = t + LOCAL * r;
            uint m = A_K_CONTIG ? idx / TK : idx % TILE, k = A_K_CONTIG ? idx % TK : idx / TILE;
            uint gm = m0 + m, gk = k0 + k;
            float16_t v = gm < pc.M && gk < k_end ? a[a_off + gm * pc.sam + gk * pc.sak] : float16_t(0.0);
            As[A_K_CONTIG ? m * A_STRIDE + k : k * A_STRIDE + m] = v;
        }
        for (uint r = 0u; r < TILE * TK / LOCAL; r++) {
            uint idx = t + LOCAL * r;
            uint n = B_K_CONTIG ? idx / TK : idx % TILE, k = B_K_CONTIG ? idx % TK : idx / TILE;
            uint gn = n0 + n, gk = k0 + k;
            float16_t v = gn < pc.N && gk < k_end ? b[b_off + gk * pc.sbk + gn * pc.sbn] : float16_t(0.0);
            Bs[B_K_CONTIG ? n * B_STRIDE + k : k * B_STRIDE + n] = v;
        }
        barrier();
        [[unroll]] for (uint kk = 0u; kk < TK; kk += 16u) {
            fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[MAX_FRAGS], fb[MAX_FRAGS];
            [[unroll]] for (uint i = 0u; i < FRAGS; i++) {
                uint m = sm + 16u * i;
                coopMatLoadNV(fa[i], As, A_K_CONTIG ? m * A_STRIDE + kk : kk * A_STRIDE + m, A_STRIDE, !A_K_CONTIG);
            }
            [[unroll]] for (uint j = 0u; j < FRAGS; j++) {
                uint n = sn + 16u * j;
                coopMatLoadNV(fb[j], Bs, B_K_CONTIG ? n * B_STRIDE + kk : kk * B_STRIDE + n, B_STRIDE, B_K_CONTIG);
            }
            [[unroll]] for (uint i = 0u; i < FRAGS; i++)
                [[unroll]] for (uint j = 0u; j < FRAGS; j++) acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
        }
        barrier();
    }

    uint y_off = pc.y_base + (SPLIT_K ? gl_WorkGroupID.z : z) * pc.M * pc.N;
    [[unroll]] for (uint i = 0u; i < FRAGS; i++)
        [[unroll]] for (uint j = 0u; j < FRAGS; j++) {
            coopMatStoreNV(acc[i][j], staging, sg * 256u, 16u, false);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            for (uint e = lane; e < 256u; e += 32u) {
                uint m = m0 + sm + 16u * i + e / 16u, n = n0 + sn + 16u * j + e % 16u;
                if (m >= pc.M || n >= pc.N) continue;
                float s = staging[sg * 256u + e];
                uint yi = y_off + m * pc.N + n;
                if (SPLIT_K) {
                    y_words[yi] = floatBitsToUint(s);
                    continue;
                }
                float v = pc.alpha * s;
                if (HAS_C) v += pc.beta * float(cb[m * pc.scm + n * pc.scn]);
                v = fused_act(ACT, v, pc.lo, pc.hi);
                if (OUT_WORDS) y_words[yi] = floatBitsToUint(round_to_dtype(OUT_DT, v));
                else y[yi] = float16_t(v);
            }
            subgroupBarrier(); // the lanes have read staging before the next accumulator lands
        }
}
