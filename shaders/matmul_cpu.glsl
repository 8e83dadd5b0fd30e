// MatMul and Gemm for CPU Vulkan drivers (lavapipe): Y = alpha * A B + beta * C, batched over
// gl_WorkGroupID.z, A and B read through uniform texel buffers of RGBA32F texels.
// llvmpipe (Mesa 22.3) runs the invocations of a workgroup as the lanes of one SIMD vector.
// It issues a storage-buffer load as a loop over the lanes with a branch and a bounds check per
// component (about 5 instructions per component and lane), and subgroupBroadcast as a loop
// over the lanes too; a texel fetch instead is one unrolled gather of 16-byte texels and a
// transpose, about 40 instructions (a call) for 4 components of 8 lanes. Hence:
// - an invocation holds an RM x RN block of Y (16 x 16 for large products; the accumulators
//   spill to the stack, which costs less than more fetches), RN adjacent columns, the lanes of
//   a workgroup on adjacent column blocks, all lanes on the same RM rows;
// - per 4 k it fetches the lane's RN/4 texels of B at each of the 4 k, then a row at a time
//   one texel of A (4 consecutive k of the row, the same texel in every lane) and applies the
//   4 k to each of the row's accumulators: the accumulators spill to the stack either way,
//   and so each is loaded and stored once per 4 k instead of once per k (B's 16 spilled
//   texels are only read); mm_563 14.1 -> 10.5-12.9 ms, mm_1024 148 -> 98 ms (least of
//   alternating rounds at load 8-9 on the 2 cores);
// - B comes packed (src/ops/matmul_cpu.c): per batch, per workgroup's LX blocks of RN columns,
//   [K4 * 4][LX][RN], zero-padded, so that a lane's k-row is RN/4 consecutive texels; a B
//   whose rows are whole texels (row-major, K a multiple of 4, N too or the rows padded to
//   whole texels) is read in place (B_DIRECT), and so is a B whose columns are whole texels
//   along k (B_KT: attention's K^T; a texel per column and 4 k, transposed in registers, as
//   many fetches as from the packed copy, and no packing dispatch: 3.0 of 7.3 ms in ACT-like
//   attention at sequence 300); A is read in place when its rows are whole texels along K,
//   else from a zero-padded copy (made at plan time for constants, else by
//   shaders/matmul_cpu_pack.comp).
//   Every fetch is in bounds (rows past M read the last row, columns past N the last).
// The body of matmul_cpu and matmul_cpu_lanes (MM_A_LANES: A_LANES below).
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "fused_act.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OUT_DT = 0u;
layout(constant_id = 2) const uint RM = 16u; // rows of Y per invocation
layout(constant_id = 3) const uint RN = 16u; // columns of Y per invocation, a multiple of 4
layout(constant_id = 4) const bool HAS_C = false;
layout(constant_id = 5) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)
layout(constant_id = 6) const bool B_DIRECT = false; // B read in place: rows of b_row texels
layout(constant_id = 7) const bool Y_VEC4 = false; // N and y_base multiples of 4: Y stored as uvec4
layout(constant_id = 8) const bool HAS_R = false; // a residual of Y's shape and layout added before ACT (a fused Add)
layout(constant_id = 9) const bool Y_T = false; // Y (and R) stored transposed, [batch][N][M] (a convolution's
                                                // transposed product: src/ops/conv.c); not with Y_VEC4
layout(constant_id = 10) const bool B_KT = false; // B read in place along k: column n's K4 texels from
                                                  // n * b_row (attention's K^T, a view of K); not with B_DIRECT
// C constant along N (scn 0: a convolution's bias, one per row) or along M (scm 0: a Linear's
// bias, one per column): its RM (RN) values are loaded once before the stores, not once per
// element (a storage-buffer load is a loop over the lanes on llvmpipe, ~40 instructions)
layout(constant_id = 11) const uint C_ALONG = 0u; // 0 any C, 1 per row, 2 per column
// A read in place along m (A_T): A(m, k) at a_off + k * a_row + m in elements, M a multiple of 4
// (a 1x1 convolution's transposed product, src/ops/conv.c: A is X [Cin][pixels], so that no
// im2col copy is made); per 4 k a row block fetches, at each k, one texel per 4 rows and
// transposes the 4x4 blocks in registers (as B_KT does): as many fetches as row-major A's
layout(constant_id = 12) const bool A_T = false;
// Y stored through a layout (the y_* push constants: a Transpose after the product, attention's
// heads moved back beside the sequence after P V; src/ops/matmul.c mm_store_transposed); not
// with Y_T or HAS_R; with Y_VEC4 only where the layout keeps texels whole
layout(constant_id = 13) const bool Y_LAYOUT = false;
// A's texels fetched a lane each and handed round with subgroupShuffle (A_LANES; the workgroup is
// one subgroup; rows past RM's last whole LX fetched a row each): per 4 k and LX rows one fetch,
// each lane its own row's texel (A_T: lane l the texel of rows 4 (l / 4).. at k + l % 4), then each row's 4 values
// broadcast by a shuffle of constant lane, which llvmpipe makes one vpermd. A fetch is a call of
// about 40 instructions that gathers a texel per lane even where all lanes want the same one, so
// this is LX times fewer of them for A: the 1024 cube on one llvmpipe thread (Mesa 22.3) 66-68
// -> 61-62 ms at 16 x 16 (the blocks and the rows rounded to whole LX: src/ops/matmul_cpu.c)
#ifdef MM_A_LANES
const bool A_LANES = true;
#define lane_value(v, l) subgroupShuffle(v, l)
#else
const bool A_LANES = false;
#define lane_value(v, l) (v)
#endif

const uint RN4 = RN / 4u;
const uint RMG = (RM + 3u) / 4u; // A_T's groups of 4 rows (RM a multiple of 4 there)

layout(binding = 0) uniform textureBuffer A;
layout(binding = 1) uniform textureBuffer B;
layout(std430, binding = 2) readonly buffer C { uint cb[]; };
layout(std430, binding = 3) writeonly buffer Y { uint y[]; };
layout(std430, binding = 3) writeonly buffer Y4 { uvec4 y4[]; }; // the same buffer, for Y_VEC4
layout(std430, binding = 4) readonly buffer R { uint rb[]; };    // HAS_R (else C again)
layout(std430, binding = 4) readonly buffer R4 { uvec4 r4[]; };

// keep in step with mm_cpu_push in src/ops/matmul_cpu.c; a_* and b_* offsets in texels
layout(push_constant) uniform Push {
    uint M, N, K4, a_row;         // K4: K in texels; a_row: A's row stride in texels
    uint b_row;                   // B's (k) row stride in texels
    uint scm, scn;
    float alpha, beta;
    uint bd1, bd2, sa0, sa1, sa2, sb0, sb1, sb2; // three batch dims (outermost size implied)
    uint a_base, b_base, y_base, batch_base;
    float lo, hi;                 // ACT's bounds (a clamp's)
    // Y_LAYOUT: Y(z, m, n) at (z % y_zb) * y_a + (z / y_zb) * y_a2 + m * y_b + (n / y_nb) * y_c + n % y_nb
    uint y_a, y_zb, y_a2, y_b, y_nb, y_c;
} pc;

// where Y(z, m, n) is stored, from y_off (Y_LAYOUT: z's part of it)
uint y_index(uint y_off, uint m, uint n)
{
    if (Y_LAYOUT) return y_off + m * pc.y_b + (n / pc.y_nb) * pc.y_c + n % pc.y_nb;
    return y_off + (Y_T ? n * pc.M + m : m * pc.N + n);
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
    int cols[RN4]; // this lane's texels of a row of B; in place, past N the last again
    [[unroll]] for (uint j = 0u; j < RN4; j++)
        cols[j] = int(B_DIRECT ? min(nb * RN4 + j, (pc.N + 3u) / 4u - 1u)
                               : gl_WorkGroupID.x * pc.K4 * 4u * LX * RN4 + gl_LocalInvocationID.x * RN4 + j);
    int kcols[RN]; // B_KT: where each of this lane's columns starts; past N, the last column again
    [[unroll]] for (uint j = 0u; j < RN; j++) kcols[j] = int(b_off + min(nb * RN + j, pc.N - 1u) * pc.b_row);
    int rows[RM]; // past M, the last row again (A_T: the texel of rows 4g..4g+3 at k = 0, per group g)
    [[unroll]] for (uint i = 0u; i < RM; i++)
        rows[i] = A_T ? int(a_off + min(m0 + 4u * (i / 4u), pc.M - 4u) / 4u) : int(a_off + min(m0 + i, pc.M - 1u) * pc.a_row);

    uint lane = gl_LocalInvocationID.x;
    uint lane_rows = A_LANES ? RM / LX * LX : 0u; // rows whose A comes through the lanes
    int lrow[RM]; // A_LANES: per group g of LX rows, this lane's texel at k = 0 (the first RM / LX used)
    if (A_LANES)
        [[unroll]] for (uint g = 0u; g < RM / LX; g++)
            lrow[g] = A_T ? int(a_off + min(m0 + LX * g + 4u * (lane / 4u), pc.M - 4u) / 4u + (lane % 4u) * pc.a_row)
                          : int(a_off + min(m0 + LX * g + lane, pc.M - 1u) * pc.a_row);
    vec4 acc[RM][RN4];
    [[unroll]] for (uint i = 0u; i < RM; i++)
        [[unroll]] for (uint j = 0u; j < RN4; j++) acc[i][j] = vec4(0.0);

    int b_row = int(pc.b_row);
    for (uint k4 = 0u; k4 < pc.K4; k4++) {
        int bk = int(b_off + k4 * 4u * pc.b_row);
        vec4 bv[4][RN4]; // this lane's columns at 4 consecutive k
        if (B_KT) {
            // a texel per column (its 4 k), transposed in registers: as many fetches as the
            // packed layout's, and llvmpipe's lanes hold each component apart anyway
            [[unroll]] for (uint j = 0u; j < RN4; j++) {
                vec4 t0 = texelFetch(B, kcols[4u * j] + int(k4)), t1 = texelFetch(B, kcols[4u * j + 1u] + int(k4));
                vec4 t2 = texelFetch(B, kcols[4u * j + 2u] + int(k4)), t3 = texelFetch(B, kcols[4u * j + 3u] + int(k4));
                bv[0][j] = vec4(t0.x, t1.x, t2.x, t3.x);
                bv[1][j] = vec4(t0.y, t1.y, t2.y, t3.y);
                bv[2][j] = vec4(t0.z, t1.z, t2.z, t3.z);
                bv[3][j] = vec4(t0.w, t1.w, t2.w, t3.w);
            }
        } else {
            [[unroll]] for (uint kk = 0u; kk < 4u; kk++)
                [[unroll]] for (uint j = 0u; j < RN4; j++) bv[kk][j] = texelFetch(B, bk + int(kk) * b_row + cols[j]);
        }
        vec4 at[RMG][4]; // A_T: per 4 rows, their texels at the 4 k
        vec4 ar[RM];
        if (A_LANES) {
            [[unroll]] for (uint g = 0u; g < RM / LX; g++) {
                vec4 t = texelFetch(A, lrow[g] + int(A_T ? k4 * 4u * pc.a_row : k4));
                [[unroll]] for (uint l = 0u; l < LX; l++) {
                    if (A_T) // lane l holds rows 4 (l / 4).. of the group at k + l % 4
                        ar[LX * g + l] = vec4(lane_value(t[l % 4u], 4u * (l / 4u)), lane_value(t[l % 4u], 4u * (l / 4u) + 1u),
                                              lane_value(t[l % 4u], 4u * (l / 4u) + 2u), lane_value(t[l % 4u], 4u * (l / 4u) + 3u));
                    else
                        ar[LX * g + l] = vec4(lane_value(t.x, l), lane_value(t.y, l), lane_value(t.z, l),
                                              lane_value(t.w, l));
                }
            }
        }
        // rows past the last whole group of LX (all rows without A_LANES): a fetch per row
        if (A_T)
            [[unroll]] for (uint g = 0u; g < RMG; g++)
                if (4u * g >= lane_rows)
                    [[unroll]] for (uint kk = 0u; kk < 4u; kk++)
                        at[g][kk] = texelFetch(A, rows[4u * g] + int((k4 * 4u + kk) * pc.a_row));
        // the rows' texels of A at these 4 k, all fetched before the products: Mesa 25's llvmpipe
        // makes each texel fetch an indirect call, around which every live vector register is
        // saved; a fetch between two rows' products saved the accumulators each time. 1024 cube
        // on Mesa 25.0.7, 2 cores: 105 -> 72 ms; on Mesa 22.3 unchanged (35 ms)
        if (!A_T)
            [[unroll]] for (uint i = lane_rows; i < RM; i++) ar[i] = texelFetch(A, rows[i] + int(k4)); // the same in every lane
        // a row at a time, 4 k per accumulator: each is loaded and stored once per 4 k
        [[unroll]] for (uint i = 0u; i < RM; i++) {
            uint g = i / 4u, r = i % 4u;
            vec4 av = A_T && i >= lane_rows ? vec4(at[g][0][r], at[g][1][r], at[g][2][r], at[g][3][r]) : ar[i];
            [[unroll]] for (uint j = 0u; j < RN4; j++)
                acc[i][j] = fma(vec4(av.w), bv[3][j], fma(vec4(av.z), bv[2][j],
                                fma(vec4(av.y), bv[1][j], fma(vec4(av.x), bv[0][j], acc[i][j]))));
        }
    }

    uint y_off = Y_LAYOUT ? (z % pc.y_zb) * pc.y_a + (z / pc.y_zb) * pc.y_a2 : pc.y_base + z * pc.M * pc.N;
    float c_row[RM], c_col[RN];
    if (HAS_C && C_ALONG == 1u)
        [[unroll]] for (uint i = 0u; i < RM; i++) c_row[i] = pc.beta * uintBitsToFloat(cb[min(m0 + i, pc.M - 1u) * pc.scm]);
    if (HAS_C && C_ALONG == 2u)
        [[unroll]] for (uint j = 0u; j < RN; j++) c_col[j] = pc.beta * uintBitsToFloat(cb[min(nb * RN + j, pc.N - 1u) * pc.scn]);
    // llvmpipe stores like it loads, a loop over the lanes: a uvec4 store is one such loop
    // for 4 values, which matters where K is small (1x1 convolutions)
    if (Y_VEC4) {
        [[unroll]] for (uint i = 0u; i < RM; i++) {
            uint m = m0 + i;
            if (m >= pc.M) break;
            [[unroll]] for (uint j = 0u; j < RN4; j++) {
                uint n = nb * RN + 4u * j;
                if (n >= pc.N) break;
                vec4 v = pc.alpha * acc[i][j];
                vec4 rv = HAS_R ? uintBitsToFloat(r4[(y_off + m * pc.N + n) / 4u]) : vec4(0.0);
                uvec4 o;
                [[unroll]] for (uint l = 0u; l < 4u; l++) {
                    if (HAS_C) v[l] += C_ALONG == 1u ? c_row[i] : C_ALONG == 2u ? c_col[4u * j + l]
                                     : pc.beta * uintBitsToFloat(cb[m * pc.scm + (n + l) * pc.scn]);
                    if (HAS_R) v[l] += rv[l];
                    o[l] = floatBitsToUint(round_to_dtype(OUT_DT, fused_act(ACT, v[l], pc.lo, pc.hi)));
                }
                y4[y_index(y_off, m, n) / 4u] = o;
            }
        }
        return;
    }
    [[unroll]] for (uint i = 0u; i < RM; i++) {
        uint m = m0 + i;
        if (m >= pc.M) break;
        [[unroll]] for (uint j = 0u; j < RN4; j++) {
            [[unroll]] for (uint l = 0u; l < 4u; l++) {
                uint n = nb * RN + 4u * j + l;
                if (n >= pc.N) break;
                float v = pc.alpha * acc[i][j][l];
                uint at = y_index(y_off, m, n);
                if (HAS_C) v += C_ALONG == 1u ? c_row[i] : C_ALONG == 2u ? c_col[4u * j + l]
                                : pc.beta * uintBitsToFloat(cb[m * pc.scm + n * pc.scn]);
                if (HAS_R) v += uintBitsToFloat(rb[at]);
                y[at] = floatBitsToUint(round_to_dtype(OUT_DT, fused_act(ACT, v, pc.lo, pc.hi)));
            }
        }
    }
}
