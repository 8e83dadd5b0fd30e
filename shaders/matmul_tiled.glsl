// Tiled matrix multiply for MatMul and Gemm: Y = alpha * A B + beta * C, batched over
// gl_WorkGroupID.z. A workgroup computes a TILE x TILE block of Y (64; 128 for large products
// on discrete GPUs; 32 on request); its 128 invocations, 8 rows by 16 columns of them, each hold a
// TILE/8 x TILE/16 block in registers; K advances 16 at a time through shared memory.
// Operands are read through strides, so transposes and broadcast batch dims (stride 0)
// need no copies. Floats accumulate in fp32, integers in int32 (wrapping). Tensors are
// read and written through storage.glsl's LOAD/STORE; the shared tiles hold fp32 words.

#include "fused_act.glsl"

layout(local_size_x_id = 0) in; // 128: the tile loops below assume it
layout(constant_id = 1) const uint OUT_DT = 0u;
layout(constant_id = 2) const bool IS_INT = false;
layout(constant_id = 3) const bool A_K_CONTIG = true;  // A(m,k+1) follows A(m,k): load along k
layout(constant_id = 4) const bool B_K_CONTIG = false; // B(k+1,n) follows B(k,n): load along k
layout(constant_id = 5) const bool HAS_C = false;
layout(constant_id = 6) const uint TILE = 64u; // 32, 64 or 128 (src/ops/matmul_record.c)
// split K: z also picks a slice of K, and raw sums go to y as [slice][z][M][N] for
// shaders/matmul_splitk_reduce.glsl to add up and finish
layout(constant_id = 7) const bool SPLIT_K = false;
layout(constant_id = 8) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)
// RESIDUAL defined (the *_res shaders): Y = act(alpha A B + beta C + R), R of Y's shape and
// layout (a fused Add) at binding 4; a fifth storage buffer, which some devices lack

layout(std430, binding = 0) readonly buffer A { ELEM a[]; };
layout(std430, binding = 1) readonly buffer B { ELEM b[]; };
layout(std430, binding = 2) readonly buffer C { ELEM cb[]; };
layout(std430, binding = 3) writeonly buffer Y { ELEM y[]; };
#ifdef RESIDUAL
layout(std430, binding = 4) readonly buffer R { ELEM rb[]; };
#endif
// SPLIT_K writes fp32 partial sums to binding 3 whatever the storage: the same binding as words
layout(std430, binding = 3) writeonly buffer YWords { uint y_words[]; };

// keep in step with mm_push in src/ops/matmul_record.c
layout(push_constant) uniform Push {
    uint M, N, K, sam, sak, sbk, sbn, scm, scn;
    float alpha, beta;
    uint bd1, bd2, sa0, sa1, sa2, sb0, sb1, sb2; // three batch dims (outermost size implied)
    uint a_base, b_base, y_base, batch_base;
    uint k_slice, z_count; // SPLIT_K: K per slice, batches per slice
    float lo, hi;          // ACT's bounds (a clamp's)
} pc;

#include "matmul_slice.glsl"

#define TM TILE
#define TN TILE
#define TK 16u
#define RM (TILE / 8u)  // rows per invocation
#define RN (TILE / 16u) // columns per invocation
#define LOCAL 128u
// one extra column keeps the k-major stores of a k-contiguous operand off a single bank
#define AS_ROW (TM + 1u)
#define BS_ROW (TN + 1u)

shared uint As[TK * AS_ROW]; // As[k * AS_ROW + m]
shared uint Bs[TK * BS_ROW]; // Bs[k * BS_ROW + n]

void main()
{
    uint t = gl_LocalInvocationID.x;
    uint tx = t % 16u, ty = t / 16u; // this invocation owns columns tx + 16j, rows ty + 8i
    uint n0 = gl_WorkGroupID.x * TN, m0 = gl_WorkGroupID.y * TM;
    uint z, k_begin, k_end, a_off, b_off;
    mm_workgroup_slice(pc.K, z, k_begin, k_end, a_off, b_off);

    float accf[RM][RN];
    int acci[RM][RN];
    for (uint i = 0u; i < RM; i++)
        for (uint j = 0u; j < RN; j++) {
            accf[i][j] = 0.0;
            acci[i][j] = 0;
        }

    for (uint k0 = k_begin; k0 < k_end; k0 += TK) {
        // stage a TM x TK slice of A and a TK x TN slice of B, neighbours reading neighbours
        for (uint r = 0u; r < TM * TK / LOCAL; r++) {
            uint idx = t + LOCAL * r;
            uint m = A_K_CONTIG ? idx / TK : idx % TM, k = A_K_CONTIG ? idx % TK : idx / TM;
            uint gm = m0 + m, gk = k0 + k;
            As[k * AS_ROW + m] = gm < pc.M && gk < k_end ? LOAD(a, a_off + gm * pc.sam + gk * pc.sak) : 0u;
        }
        for (uint r = 0u; r < TN * TK / LOCAL; r++) {
            uint idx = t + LOCAL * r;
            uint n = B_K_CONTIG ? idx / TK : idx % TN, k = B_K_CONTIG ? idx % TK : idx / TN;
            uint gn = n0 + n, gk = k0 + k;
            Bs[k * BS_ROW + n] = gn < pc.N && gk < k_end ? LOAD(b, b_off + gk * pc.sbk + gn * pc.sbn) : 0u;
        }
        barrier();
        for (uint kk = 0u; kk < TK; kk++) {
            uint av[RM], bv[RN];
            for (uint i = 0u; i < RM; i++) av[i] = As[kk * AS_ROW + ty + 8u * i];
            for (uint j = 0u; j < RN; j++) bv[j] = Bs[kk * BS_ROW + tx + 16u * j];
            for (uint i = 0u; i < RM; i++)
                for (uint j = 0u; j < RN; j++) {
                    if (IS_INT) acci[i][j] += int(av[i]) * int(bv[j]);
                    else accf[i][j] = fma(uintBitsToFloat(av[i]), uintBitsToFloat(bv[j]), accf[i][j]);
                }
        }
        barrier();
    }

    uint y_off = pc.y_base + (SPLIT_K ? gl_WorkGroupID.z : z) * pc.M * pc.N;
    for (uint i = 0u; i < RM; i++) {
        uint m = m0 + ty + 8u * i;
        if (m >= pc.M) break;
        for (uint j = 0u; j < RN; j++) {
            uint n = n0 + tx + 16u * j;
            if (n >= pc.N) break;
            if (SPLIT_K) {
                y_words[y_off + m * pc.N + n] = IS_INT ? uint(acci[i][j]) : floatBitsToUint(accf[i][j]);
            } else if (IS_INT) {
                STORE(y, y_off + m * pc.N + n, uint(wrap_to_dtype(OUT_DT, acci[i][j])));
            } else {
                float v = pc.alpha * accf[i][j];
                if (HAS_C) v += pc.beta * uintBitsToFloat(LOAD(cb, m * pc.scm + n * pc.scn));
#ifdef RESIDUAL
                v += uintBitsToFloat(LOAD(rb, y_off + m * pc.N + n));
#endif
                STORE(y, y_off + m * pc.N + n, floatBitsToUint(round_to_dtype(OUT_DT, fused_act(ACT, v, pc.lo, pc.hi))));
            }
        }
    }
}
