// MatMul and Gemm on tensor cores for operands whose rows are 16-byte aligned runs of halves:
// the fast sibling of matmul_coopmat_f16.comp (same push constants, bindings, batching, split K
// and epilogue options). The body of matmul_coopmat_f16_aligned (GL_NV_cooperative_matrix) and of
// matmul_coopmat_khr_f16 (GL_KHR_cooperative_matrix, COOPMAT_KHR defined), rows of
// shaders/variants.txt: only the matrix types and calls differ. Debian 12's glslc (glslang 11)
// does not know the KHR extension, so that kernel is compiled by scripts/build-khr-shaders.sh with
// a newer glslang into shaders/prebuilt/matmul_coopmat_khr_f16.inc, which the build embeds.
// src/ops/matmul_coopmat.c picks the KHR one where the device has VK_KHR_cooperative_matrix.
//
// Each operand is read along its contiguous axis 8 halves (one uvec4) at a time, coalesced; that
// axis's extent, every other stride and every batch offset must be multiples of 8 halves
// (src/ops/matmul_coopmat.c checks). M, N and K may still be ragged: rows and 8-wide runs past the
// edges load as zeros and edge tiles store element by element.
//
// A workgroup of (BM/WM) x (BN/WN) 32-wide subgroups computes a BM x BN block of Y, each
// subgroup a WM x WN warp tile of (WM/16) x (WN/16) fp32 16x16 accumulators. K advances BK at
// a time: every invocation fetches its share of the next A and B tiles into registers while
// the subgroups multiply the current ones out of shared memory, then stores them into the other
// half of a double buffer, so one barrier per step suffices (DOUBLE_BUF false: one buffer,
// two barriers, for tiles whose two copies would not fit 48 KiB). Shared rows are padded by 8
// halves so that the 16-byte rows a fragment load touches fall on different banks.

#ifdef COOPMAT_KHR
// The layout operand of coopMatLoad must be a constant, so the KHR loads branch on the
// spec-constant choice between row and column major, which the driver folds.
#define ACC_MAT coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define A_MAT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define B_MAT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define HALF_ACC_MAT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define MAT_MUL_ADD coopMatMulAdd
#define MAT_STORE_ROWS(mat, buf, at, stride) coopMatStore(mat, buf, at, stride, gl_CooperativeMatrixLayoutRowMajor)
#else
#define ACC_MAT fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define A_MAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define B_MAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define HALF_ACC_MAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define MAT_MUL_ADD coopMatMulAddNV
#define MAT_STORE_ROWS(mat, buf, at, stride) coopMatStoreNV(mat, buf, at, stride, false)
#endif

layout(local_size_x_id = 0) in; // 32 * (BM / WM) * (BN / WN)
// constant ids 1..9 as in matmul_coopmat_f16.comp (6 is the tile's width there too)
layout(constant_id = 1) const uint OUT_DT = 0u;
layout(constant_id = 2) const bool IS_INT = false;      // always false here
layout(constant_id = 3) const bool A_K_CONTIG = true;   // A(m,k+1) follows A(m,k); else A(m+1,k) does
layout(constant_id = 4) const bool B_K_CONTIG = false;  // B(k+1,n) follows B(k,n); else B(k,n+1) does
layout(constant_id = 5) const bool HAS_C = false;
layout(constant_id = 6) const uint BN = 128u;
layout(constant_id = 7) const bool SPLIT_K = false;     // raw fp32 sums to binding 3, [slice][z][M][N]
layout(constant_id = 8) const uint ACT = 0u; // the fused activation (fused_act.glsl's code), compiled in
layout(constant_id = 9) const bool OUT_WORDS = false;
layout(constant_id = 10) const uint BM = 128u;
layout(constant_id = 11) const uint WM = 64u;           // a subgroup's block: 16..64 each way
layout(constant_id = 12) const uint WN = 64u;
layout(constant_id = 13) const uint BK = 32u;           // 32 or 64
layout(constant_id = 14) const bool DOUBLE_BUF = true;

layout(std430, binding = 0) readonly buffer A { uvec4 a8[]; }; // 8 halves per element
layout(std430, binding = 1) readonly buffer B { uvec4 b8[]; };
layout(std430, binding = 2) readonly buffer C { float16_t cb[]; };
layout(std430, binding = 3) writeonly buffer Y { float16_t y[]; };
layout(std430, binding = 3) writeonly buffer YWords { uint y_words[]; };

// keep in step with mm_push in src/ops/matmul.c
layout(push_constant) uniform Push {
    uint M, N, K, sam, sak, sbk, sbn, scm, scn;
    float alpha, beta;
    uint bd1, bd2, sa0, sa1, sa2, sb0, sb1, sb2;
    uint a_base, b_base, y_base, batch_base;
    uint k_slice, z_count;
    float lo, hi;
} pc;

const uint SG_N = BN / WN;                   // subgroups across the tile
const uint SUBGROUPS = (BM / WM) * SG_N;
const uint LOCAL = 32u * SUBGROUPS;
const uint FM = WM / 16u, FN = WN / 16u;      // accumulators per subgroup, down and across
#define MAX_F 4u
// each shared tile is ROWS rows of LEN halves along the operand's contiguous axis, padded
const uint A_ROWS = A_K_CONTIG ? BM : BK, A_LEN = A_K_CONTIG ? BK : BM;
const uint B_ROWS = B_K_CONTIG ? BN : BK, B_LEN = B_K_CONTIG ? BK : BN;
const uint A_STRIDE = A_LEN / 8u + 1u, B_STRIDE = B_LEN / 8u + 1u; // uvec4s per padded row
const uint A_VECS = A_ROWS * A_STRIDE, B_VECS = B_ROWS * B_STRIDE;
const uint A_LOADS = A_ROWS * A_LEN / 8u / LOCAL, B_LOADS = B_ROWS * B_LEN / 8u / LOCAL; // per invocation
#define MAX_LOADS 8u
const uint BUFFERS = DOUBLE_BUF ? 2u : 1u;

shared uvec4 As[BUFFERS * A_VECS];
shared uvec4 Bs[BUFFERS * B_VECS];
shared float staging[SUBGROUPS * 256u]; // the edge epilogue: one 16x16 accumulator per subgroup

uvec4 a_next[MAX_LOADS], b_next[MAX_LOADS];
uint m0, n0, k_end, a_off, b_off;

// the BK-deep tiles starting at k0 into a_next / b_next; zeros past M, N or k_end
void fetch_tiles(uint k0)
{
    [[unroll]] for (uint i = 0u; i < A_LOADS; i++) {
        uint v = gl_LocalInvocationID.x + LOCAL * i, row = v / (A_LEN / 8u), run = (v % (A_LEN / 8u)) * 8u;
        uint m = m0 + (A_K_CONTIG ? row : run), k = k0 + (A_K_CONTIG ? run : row);
        a_next[i] = m < pc.M && k < k_end ? a8[(a_off + m * pc.sam + k * pc.sak) / 8u] : uvec4(0u);
    }
    [[unroll]] for (uint i = 0u; i < B_LOADS; i++) {
        uint v = gl_LocalInvocationID.x + LOCAL * i, row = v / (B_LEN / 8u), run = (v % (B_LEN / 8u)) * 8u;
        uint n = n0 + (B_K_CONTIG ? row : run), k = k0 + (B_K_CONTIG ? run : row);
        b_next[i] = n < pc.N && k < k_end ? b8[(b_off + k * pc.sbk + n * pc.sbn) / 8u] : uvec4(0u);
    }
}

void store_tiles(uint buf)
{
    [[unroll]] for (uint i = 0u; i < A_LOADS; i++) {
        uint v = gl_LocalInvocationID.x + LOCAL * i;
        As[buf * A_VECS + (v / (A_LEN / 8u)) * A_STRIDE + v % (A_LEN / 8u)] = a_next[i];
    }
    [[unroll]] for (uint i = 0u; i < B_LOADS; i++) {
        uint v = gl_LocalInvocationID.x + LOCAL * i;
        Bs[buf * B_VECS + (v / (B_LEN / 8u)) * B_STRIDE + v % (B_LEN / 8u)] = b_next[i];
    }
}

void main()
{
    uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
    n0 = gl_WorkGroupID.x * BN;
    m0 = gl_WorkGroupID.y * BM;
    uint sm = (sg / SG_N) * WM, sn = (sg % SG_N) * WN; // this subgroup's block within the tile
    uint z = gl_WorkGroupID.z + pc.batch_base, k_begin = 0u;
    k_end = pc.K;
    if (SPLIT_K) {
        uint slice = gl_WorkGroupID.z / pc.z_count;
        z = gl_WorkGroupID.z % pc.z_count;
        k_begin = slice * pc.k_slice;
        k_end = min(pc.K, k_begin + pc.k_slice);
    }
    uint i2 = z % pc.bd2, i1 = (z / pc.bd2) % pc.bd1, i0 = z / (pc.bd2 * pc.bd1);
    a_off = pc.a_base + i0 * pc.sa0 + i1 * pc.sa1 + i2 * pc.sa2;
    b_off = pc.b_base + i0 * pc.sb0 + i1 * pc.sb1 + i2 * pc.sb2;

    ACC_MAT acc[MAX_F][MAX_F];
    [[unroll]] for (uint i = 0u; i < FM; i++)
        [[unroll]] for (uint j = 0u; j < FN; j++) acc[i][j] = ACC_MAT(0.0);

    uint steps = (k_end - k_begin + BK - 1u) / BK;
    fetch_tiles(k_begin);
    store_tiles(0u);
    barrier();
    for (uint s = 0u; s < steps; s++) {
        uint buf = DOUBLE_BUF ? s & 1u : 0u;
        bool more = s + 1u < steps;
        if (more) fetch_tiles(k_begin + (s + 1u) * BK); // in flight while the tensor cores work
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
            A_MAT fa[MAX_F];
            B_MAT fb[MAX_F];
            [[unroll]] for (uint i = 0u; i < FM; i++) {
                uint m = sm + 16u * i;
#ifdef COOPMAT_KHR
                if (A_K_CONTIG) coopMatLoad(fa[i], As, buf * A_VECS + m * A_STRIDE + kk / 8u, A_STRIDE, gl_CooperativeMatrixLayoutRowMajor);
                else coopMatLoad(fa[i], As, buf * A_VECS + kk * A_STRIDE + m / 8u, A_STRIDE, gl_CooperativeMatrixLayoutColumnMajor);
#else
                coopMatLoadNV(fa[i], As, buf * A_VECS + (A_K_CONTIG ? m * A_STRIDE + kk / 8u : kk * A_STRIDE + m / 8u),
                              A_STRIDE, !A_K_CONTIG);
#endif
            }
            [[unroll]] for (uint j = 0u; j < FN; j++) {
                uint n = sn + 16u * j;
#ifdef COOPMAT_KHR
                if (B_K_CONTIG) coopMatLoad(fb[j], Bs, buf * B_VECS + n * B_STRIDE + kk / 8u, B_STRIDE, gl_CooperativeMatrixLayoutColumnMajor);
                else coopMatLoad(fb[j], Bs, buf * B_VECS + kk * B_STRIDE + n / 8u, B_STRIDE, gl_CooperativeMatrixLayoutRowMajor);
#else
                coopMatLoadNV(fb[j], Bs, buf * B_VECS + (B_K_CONTIG ? n * B_STRIDE + kk / 8u : kk * B_STRIDE + n / 8u),
                              B_STRIDE, B_K_CONTIG);
#endif
            }
            [[unroll]] for (uint i = 0u; i < FM; i++)
                [[unroll]] for (uint j = 0u; j < FN; j++) acc[i][j] = MAT_MUL_ADD(fa[i], fb[j], acc[i][j]);
        }
        if (!DOUBLE_BUF) barrier(); // everyone has read the one buffer before it is overwritten
        if (more) store_tiles(DOUBLE_BUF ? buf ^ 1u : 0u);
        barrier();
    }

    uint y_off = pc.y_base + (SPLIT_K ? gl_WorkGroupID.z : z) * pc.M * pc.N;
    if (!SPLIT_K && !HAS_C && !OUT_WORDS && m0 + BM <= pc.M && n0 + BN <= pc.N) {
        // a whole tile: scale, clamp and round in registers, store 16x16 halves at once
        [[unroll]] for (uint i = 0u; i < FM; i++)
            [[unroll]] for (uint j = 0u; j < FN; j++) {
                ACC_MAT r = acc[i][j];
                for (int e = 0; e < r.length(); e++) r[e] = fused_act(ACT, pc.alpha * r[e], pc.lo, pc.hi);
                HALF_ACC_MAT h = HALF_ACC_MAT(r);
                MAT_STORE_ROWS(h, y, y_off + (m0 + sm + 16u * i) * pc.N + n0 + sn + 16u * j, pc.N);
            }
        return;
    }
    [[unroll]] for (uint i = 0u; i < FM; i++)
        [[unroll]] for (uint j = 0u; j < FN; j++) {
            MAT_STORE_ROWS(acc[i][j], staging, sg * 256u, 16u);
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
