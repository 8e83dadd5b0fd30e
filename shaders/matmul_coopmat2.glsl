// MatMul and Gemm on tensor cores through VK_NV_cooperative_matrix2: workgroup-scope matrices,
// so the driver stages the tiles through shared memory and picks the instructions; this kernel
// only says which BM x BK block of A and BK x BN block of B each step multiplies. Same push
// constants, bindings, grid (x: blocks of N, y: blocks of M, z: batches or split-K slices) and
// epilogue options as matmul_coopmat_f16.comp. Operands are read through tensor layouts with their
// own strides, along whichever axis is contiguous (a transposing view for the other), so any stride
// works; blocks that cross an edge of M, N or K load through a clamping layout (zeros outside) and
// store only inside. The body of matmul_coopmat2_f16 and matmul_coopmat2_bf16 and their _dims
// twins (shaders/variants.txt), which define ELEM (float16_t or bfloat16_t: A, B, C and Y's
// element), CONST_DIMS for the twins, and enable the extensions; compiled by
// scripts/build-khr-shaders.sh (the build's glslc predates GL_NV_cooperative_matrix2).
layout(local_size_x_id = 0) in; // as the device's flexible-dimension properties allow (128 or 256)
layout(constant_id = 1) const uint OUT_DT = 0u;
layout(constant_id = 2) const bool IS_INT = false;      // always false here
layout(constant_id = 3) const bool A_K_CONTIG = true;   // A(m,k+1) follows A(m,k); else A(m+1,k) does
layout(constant_id = 4) const bool B_K_CONTIG = false;  // B(k+1,n) follows B(k,n); else B(k,n+1) does
layout(constant_id = 5) const bool HAS_C = false;
layout(constant_id = 6) const uint BN = 256u;
layout(constant_id = 7) const bool SPLIT_K = false;     // raw fp32 sums to binding 3, [slice][z][M][N]
// the fused activation compiled in (fused_act.glsl's code: 0 none, 1 Relu/Clip, 2 SiLU ... 8
// tanh GELU), not decoded per element from lo and hi: with every activation's code in the
// per-element callback, BERT's [1024,768] x [768,3072] + bias + Relu took 0.050 ms on the H200
// against 0.038 with the bias alone
layout(constant_id = 8) const uint ACT = 0u;
layout(constant_id = 9) const bool OUT_WORDS = false;   // Y as fp32 words (fp32 outputs of the fp16 mode)
layout(constant_id = 10) const uint BM = 128u;
layout(constant_id = 11) const uint BK = 32u;
// operands whose strides and batch offsets are multiples of 8 halves (src/ops/matmul.c's
// aligned_operands: bit 0 A, 1 B, 2 Y): said to the compiler by masking, so that it may move
// 16 bytes at a time (measured on the H200: 242 TFLOP/s against 64 on a 4096 cube)
layout(constant_id = 12) const uint ALIGNED = 0u;
const bool A_ALIGNED = (ALIGNED & 1u) != 0u, B_ALIGNED = (ALIGNED & 2u) != 0u, Y_ALIGNED = (ALIGNED & 4u) != 0u;
// blocks taken in columns GROUP_M blocks tall (0: row by row, as the grid lies), so that the
// workgroups running at one time share rows of A and columns of B in the cache
layout(constant_id = 13) const uint GROUP_M = 0u;
// BK steps a pass of the unclamped K loop (src/ops/matmul_coopmat.c: 16 by default)
layout(constant_id = 14) const uint UNROLL = 16u;
#ifdef CONST_DIMS
// matmul_coopmat2_dims_f16/_bf16 (VKINFER_COOPMAT2_EXP=dims, src/ops/matmul_coopmat.c): M, N,
// K and the four operand strides as the constants 15..21, as NVIDIA's vk_cooperative_matrix_perf
// sample specializes them, so that the driver folds every address and knows every block whole
// at compile time; a pipeline per shape (H200, 4096^3: 282 against 265 TFLOP/s fp16,
// docs/results-h200.md)
layout(constant_id = 15) const uint C_M = 1u;
layout(constant_id = 16) const uint C_N = 1u;
layout(constant_id = 17) const uint C_K = 1u;
layout(constant_id = 18) const uint C_SAM = 1u;
layout(constant_id = 19) const uint C_SAK = 1u;
layout(constant_id = 20) const uint C_SBK = 1u;
layout(constant_id = 21) const uint C_SBN = 1u;
#define P_M C_M
#define P_N C_N
#define P_K C_K
#else
#define P_M pc.M
#define P_N pc.N
#define P_K pc.K
#endif

layout(std430, binding = 0) readonly buffer A { ELEM a[]; };
layout(std430, binding = 1) readonly buffer B { ELEM b[]; };
layout(std430, binding = 2) readonly buffer C { ELEM cb[]; };
layout(std430, binding = 3) writeonly buffer Y { ELEM y[]; };
layout(std430, binding = 3) writeonly buffer YWords { float y_words[]; };

// keep in step with mm_push in src/ops/matmul.c
layout(push_constant) uniform Push {
    uint M, N, K, sam, sak, sbk, sbn, scm, scn;
    float alpha, beta;
    uint bd1, bd2, sa0, sa1, sa2, sb0, sb1, sb2;
    uint a_base, b_base, y_base, batch_base;
    uint k_slice, z_count;
    float lo, hi;
} pc;

#define ACC coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#define MAT_A coopmat<ELEM, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA>
#define MAT_B coopmat<ELEM, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB>
const uint CLAMPED = gl_CooperativeMatrixClampModeConstantNV;

// alpha, C and the fused clamp on one element of the block whose corner is (m0, n0)
float epilogue(const in uint row, const in uint col, const in float v, const in uint m0, const in uint n0)
{
    float r = pc.alpha * v;
    uint m = m0 + row, n = n0 + col;
    if (HAS_C && m < P_M && n < P_N) r += pc.beta * float(cb[m * pc.scm + n * pc.scn]);
    return fused_act(ACT, r, pc.lo, pc.hi);
}

// One BK step of the product: the layouts name the whole operands (clamped or not), the
// slices this step's blocks.
#define MMA_STEP(LA, LB, k)                                                                          \
    {                                                                                                \
        MAT_A ma;                                                                                    \
        MAT_B mb;                                                                                    \
        if (A_K_CONTIG) coopMatLoadTensorNV(ma, a, a_off, sliceTensorLayoutNV(LA, m0, BM, k, BK));   \
        else coopMatLoadTensorNV(ma, a, a_off, sliceTensorLayoutNV(LA, k, BK, m0, BM), transposed);  \
        if (B_K_CONTIG) coopMatLoadTensorNV(mb, b, b_off, sliceTensorLayoutNV(LB, n0, BN, k, BK), transposed); \
        else coopMatLoadTensorNV(mb, b, b_off, sliceTensorLayoutNV(LB, k, BK, n0, BN));              \
        acc = coopMatMulAdd(ma, mb, acc);                                                            \
    }

void main()
{
    uint bx = gl_WorkGroupID.x, by = gl_WorkGroupID.y;
    if (GROUP_M > 1u) {
        uint gx = gl_NumWorkGroups.x, id = by * gx + bx, per = GROUP_M * gx, first = id / per * GROUP_M;
        uint rows = min(gl_NumWorkGroups.y - first, GROUP_M), at = id % per;
        by = first + at % rows;
        bx = at / rows;
    }
    uint n0 = bx * BN, m0 = by * BM;
    uint z = gl_WorkGroupID.z + pc.batch_base, k_begin = 0u, k_end = P_K;
    if (SPLIT_K) {
        uint slice = gl_WorkGroupID.z / pc.z_count;
        z = gl_WorkGroupID.z % pc.z_count;
        k_begin = slice * pc.k_slice;
        k_end = min(P_K, k_begin + pc.k_slice);
    }
    uint i2 = z % pc.bd2, i1 = (z / pc.bd2) % pc.bd1, i0 = z / (pc.bd2 * pc.bd1);
    uint a_off = pc.a_base + i0 * pc.sa0 + i1 * pc.sa1 + i2 * pc.sa2;
    uint b_off = pc.b_base + i0 * pc.sb0 + i1 * pc.sb1 + i2 * pc.sb2;
#ifdef CONST_DIMS
    uint sam = C_SAM, sak = C_SAK, sbk = C_SBK, sbn = C_SBN;
#else
    uint sam = pc.sam, sak = pc.sak, sbk = pc.sbk, sbn = pc.sbn;
#endif
    k_begin &= ~15u; // k_slice is a multiple of 16
    if (A_ALIGNED) a_off &= ~7u, sam &= ~7u, sak &= ~7u;
    if (B_ALIGNED) b_off &= ~7u, sbk &= ~7u, sbn &= ~7u;

    // each operand as a 2-D tensor along its storage order: (rows, contiguous axis)
    tensorLayoutNV<2> la = createTensorLayoutNV(2), lb = createTensorLayoutNV(2);
    tensorLayoutNV<2, CLAMPED> la_c = createTensorLayoutNV(2, CLAMPED), lb_c = createTensorLayoutNV(2, CLAMPED);
    if (A_K_CONTIG) {
        la = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(la, P_M, k_end), sam, 1);
        la_c = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(la_c, P_M, k_end), sam, 1);
    } else {
        la = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(la, k_end, P_M), sak, 1);
        la_c = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(la_c, k_end, P_M), sak, 1);
    }
    if (B_K_CONTIG) {
        lb = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(lb, P_N, k_end), sbn, 1);
        lb_c = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(lb_c, P_N, k_end), sbn, 1);
    } else {
        lb = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(lb, k_end, P_N), sbk, 1);
        lb_c = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(lb_c, k_end, P_N), sbk, 1);
    }
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);

    ACC acc = ACC(0.0);
    uint k = k_begin;
    if (m0 + BM <= P_M && n0 + BN <= P_N) {
        // whole blocks along M and N: unclamped loads while a whole BK step remains
        for (; k + UNROLL * BK <= k_end; k += UNROLL * BK) {
            [[unroll]] for (uint u = 0u; u < UNROLL; u++) MMA_STEP(la, lb, k + u * BK)
        }
        for (; k + BK <= k_end; k += BK) MMA_STEP(la, lb, k)
    }
    for (; k < k_end; k += BK) MMA_STEP(la_c, lb_c, k)

    uint y_off = pc.y_base + (SPLIT_K ? gl_WorkGroupID.z : z) * P_M * P_N;
    if (Y_ALIGNED) y_off &= ~7u;
    tensorLayoutNV<2, CLAMPED> ly = createTensorLayoutNV(2, CLAMPED);
    ly = setTensorLayoutStrideNV(setTensorLayoutDimensionNV(ly, P_M, P_N), Y_ALIGNED ? P_N & ~7u : P_N, 1);
    if (!SPLIT_K && (HAS_C || ACT != 0u || pc.alpha != 1.0)) coopMatPerElementNV(acc, acc, epilogue, m0, n0);
    if (SPLIT_K || OUT_WORDS) {
        coopMatStoreTensorNV(acc, y_words, y_off, sliceTensorLayoutNV(ly, m0, BM, n0, BN));
    } else {
        coopmat<ELEM, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> h =
            coopmat<ELEM, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(acc);
        coopMatStoreTensorNV(h, y, y_off, sliceTensorLayoutNV(ly, m0, BM, n0, BN));
    }
}
