// The body of matmul_sgemm and matmul_sgemm_res: float32 MatMul and Gemm on GPUs:
// Y = alpha * A B + beta * C, batched over gl_WorkGroupID.z,
// with matmul_tiled's push constants, bindings, grid and split-K output, so src/ops/matmul_record.c
// records it in matmul_tiled's place. What it does that matmul_tiled does not: each invocation
// holds a TM x TN block of sums (4 x 4 up to 8 x 8) as 4 x 4 blocks BM / (TM / 4) rows and
// BN / (TN / 4) columns apart, so that every shared-memory read is a vec4 and each k step costs
// TM / 4 + TN / 4 reads for TM * TN multiply-adds (8 x 8: 4 reads for 64; matmul_tiled: 24 scalar
// reads for 128); (BM / TM) x (BN / TN) invocations a workgroup (256 for 128 x 128 tiles of 8 x 8,
// 64 for 64 x 64 ones); the next BK slice of A and B is read into registers while this one is
// multiplied, then stored into the other of two shared buffers (one barrier a step); operands
// whose contiguous runs start on 16 bytes are read 16 bytes at a time (VEC). fp32 words only.

layout(local_size_x_id = 0) in; // (BM / TM) x (BN / TN): src/ops/matmul_record.c sets both
layout(constant_id = 3) const bool A_K_CONTIG = true;  // A(m,k+1) follows A(m,k): quads along k
layout(constant_id = 4) const bool B_K_CONTIG = false; // B(k+1,n) follows B(k,n): quads along k
layout(constant_id = 5) const bool HAS_C = false;
layout(constant_id = 6) const uint BN = 128u; // 64 or 128
// 0: the whole of K; 1: a slice of K per gl_WorkGroupID.z / z_count, raw sums written for
// the reduce pass (shaders/matmul_splitk_reduce.glsl); 2 (the *_fin shaders): the same, and
// the tile's last workgroup to finish adds the slices itself and stores Y (no reduce pass)
layout(constant_id = 7) const uint SPLIT = 0u;
const bool SPLIT_K = SPLIT != 0u;
layout(constant_id = 8) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)
layout(constant_id = 9) const uint BM = 128u; // 64 or 128
layout(constant_id = 10) const uint BK = 8u;  // 8 or 16
// bit 0: A's quads may be read as one vec4 (its contiguous stride is 1, every other stride,
// batch offset and base a multiple of 4); bit 1 the same for B; bit 2: Y's rows and base too
layout(constant_id = 11) const uint VEC = 0u;
// sums an invocation holds along M and N (4 or 8; 0: BM / 16 and BN / 16, 16 x 16 invocations)
layout(constant_id = 12) const uint TM0 = 0u;
layout(constant_id = 13) const uint TN0 = 0u;
// every block whole: M a multiple of BM, N of BN, each K range of BK, A and B read as vec4
// (VEC bits 0 and 1), so that the loads of the main loop carry no bounds
layout(constant_id = 14) const bool EXACT = false;
// RESIDUAL defined (the *_res shaders): Y = act(alpha A B + beta C + R), R of Y's shape and
// layout (a fused Add) at binding 4; a fifth storage buffer, which some devices lack
const bool A_VEC = (VEC & 1u) != 0u, B_VEC = (VEC & 2u) != 0u, Y_VEC = (VEC & 4u) != 0u;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 0) readonly buffer A4 { vec4 a4[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 1) readonly buffer B4 { vec4 b4[]; };
layout(std430, binding = 2) readonly buffer C { float cb[]; };
#ifdef FINISH
// FINISH defined (the *_fin shaders, SPLIT 2): binding 3 holds the slices' raw sums, read back
// by the tile's last workgroup (coherent: written by other workgroups); Y and a counter per
// tile (zero between runs: the last workgroup puts it back) follow R
layout(std430, binding = 3) coherent buffer Y { float y[]; };
layout(std430, binding = 3) coherent buffer Y4 { vec4 y4[]; };
#else
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(std430, binding = 3) writeonly buffer Y4 { vec4 y4[]; };
#endif
#ifdef RESIDUAL
layout(std430, binding = 4) readonly buffer R { float res[]; };
#endif
#ifdef FINISH
#ifdef RESIDUAL
#define BIND_OUT 5
#define BIND_COUNT 6
#else
#define BIND_OUT 4
#define BIND_COUNT 5
#endif
layout(std430, binding = BIND_OUT) writeonly buffer Out { float yo[]; };
layout(std430, binding = BIND_OUT) writeonly buffer Out4 { vec4 yo4[]; };
layout(std430, binding = BIND_COUNT) coherent buffer Count { uint done[]; };
shared bool last_slice;
#endif

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

const uint TM = TM0 != 0u ? TM0 : BM / 16u, TN = TN0 != 0u ? TN0 : BN / 16u;
const uint RG = TM / 4u, CG = TN / 4u;      // 4 x 4 blocks per invocation along M and N
const uint LX = BN / TN, LY = BM / TM;      // invocations along N and M
const uint LOCAL = LX * LY;
const uint RS = BM / RG, CS = BN / CG;      // rows (columns) between an invocation's blocks
const uint QA = BM * BK / 4u, QB = BN * BK / 4u; // quads of one slice
const uint QA_PER = (QA + LOCAL - 1u) / LOCAL, QB_PER = (QB + LOCAL - 1u) / LOCAL;

// [buffer][k][quad of 4 rows (columns)]
shared vec4 As[2u * BK * (BM / 4u)];
shared vec4 Bs[2u * BK * (BN / 4u)];
// An activation beyond a clamp (GELU, SiLU, Mish...) on 8 x 8 sums an invocation is applied after
// the tile's sums pass through shared memory, in a loop that is not unrolled: unrolled over the
// 64 sums its code made Linear(768, 3072) + erf GELU on 4096 rows 15x slower on the H200 (8.4 ms
// on 128 x 128 tiles against 0.54 with a Relu; 0.62 this way, 0.58 on 64 x 128 tiles of 8 x 8;
// docs/history/benchmarks-notebook.md, sessions 14 and 15). Smaller blocks keep it inline, where it was fast (on
// 64 x 128 tiles of 4 x 8 sums, 1024 rows: 0.171 ms inline, 0.23 through shared memory).
// Split-K products leave it to their reduce pass.
const bool BLOCK64 = TM * TN >= 64u;
const bool EPI_SHARED = ACT >= 2u && !SPLIT_K && BLOCK64;
shared vec4 Cs[EPI_SHARED ? LY * BN / 4u : 1u]; // a slab of LY rows: [row][quad of 4 columns]

// four elements from idx on, `step` apart, the e-th kept where e < count (zeros after)
vec4 quad_a(uint idx, uint step, uint count)
{
    if (A_VEC && count >= 4u) return a4[idx >> 2];
    vec4 v = vec4(0.0);
    [[unroll]] for (uint e = 0u; e < 4u; e++)
        if (e < count) v[e] = a[idx + e * step];
    return v;
}

vec4 quad_b(uint idx, uint step, uint count)
{
    if (B_VEC && count >= 4u) return b4[idx >> 2];
    vec4 v = vec4(0.0);
    [[unroll]] for (uint e = 0u; e < 4u; e++)
        if (e < count) v[e] = b[idx + e * step];
    return v;
}

// quad q of the BK slice from k0 on: along k (K_CONTIG) or along rows/columns
vec4 fetch_a(uint q, uint a_off, uint m0, uint k0, uint k_end)
{
    if (q >= QA) return vec4(0.0);
    uint m, k, count;
    if (EXACT) {
        if (A_K_CONTIG) m = m0 + q / (BK / 4u), k = k0 + (q % (BK / 4u)) * 4u;
        else k = k0 + q / (BM / 4u), m = m0 + (q % (BM / 4u)) * 4u;
        return a4[(a_off + m * pc.sam + k * pc.sak) >> 2];
    }
    if (A_K_CONTIG) {
        m = m0 + q / (BK / 4u), k = k0 + (q % (BK / 4u)) * 4u;
        count = m < pc.M && k < k_end ? min(4u, k_end - k) : 0u;
        return quad_a(a_off + m * pc.sam + k * pc.sak, pc.sak, count);
    }
    k = k0 + q / (BM / 4u), m = m0 + (q % (BM / 4u)) * 4u;
    count = k < k_end && m < pc.M ? min(4u, pc.M - m) : 0u;
    return quad_a(a_off + m * pc.sam + k * pc.sak, pc.sam, count);
}

vec4 fetch_b(uint q, uint b_off, uint n0, uint k0, uint k_end)
{
    if (q >= QB) return vec4(0.0);
    uint n, k, count;
    if (EXACT) {
        if (B_K_CONTIG) n = n0 + q / (BK / 4u), k = k0 + (q % (BK / 4u)) * 4u;
        else k = k0 + q / (BN / 4u), n = n0 + (q % (BN / 4u)) * 4u;
        return b4[(b_off + k * pc.sbk + n * pc.sbn) >> 2];
    }
    if (B_K_CONTIG) {
        n = n0 + q / (BK / 4u), k = k0 + (q % (BK / 4u)) * 4u;
        count = n < pc.N && k < k_end ? min(4u, k_end - k) : 0u;
        return quad_b(b_off + k * pc.sbk + n * pc.sbn, pc.sbk, count);
    }
    k = k0 + q / (BN / 4u), n = n0 + (q % (BN / 4u)) * 4u;
    count = k < k_end && n < pc.N ? min(4u, pc.N - n) : 0u;
    return quad_b(b_off + k * pc.sbk + n * pc.sbn, pc.sbn, count);
}

void stage_a(uint buf, uint q, vec4 v)
{
    if (q >= QA) return;
    if (A_K_CONTIG) { // a quad along k: one element into each of 4 k rows
        uint m = q / (BK / 4u), k = (q % (BK / 4u)) * 4u;
        [[unroll]] for (uint e = 0u; e < 4u; e++) As[(buf * BK + k + e) * (BM / 4u) + m / 4u][m % 4u] = v[e];
    } else {
        As[(buf * BK + q / (BM / 4u)) * (BM / 4u) + q % (BM / 4u)] = v;
    }
}

void stage_b(uint buf, uint q, vec4 v)
{
    if (q >= QB) return;
    if (B_K_CONTIG) {
        uint n = q / (BK / 4u), k = (q % (BK / 4u)) * 4u;
        [[unroll]] for (uint e = 0u; e < 4u; e++) Bs[(buf * BK + k + e) * (BN / 4u) + n / 4u][n % 4u] = v[e];
    } else {
        Bs[(buf * BK + q / (BN / 4u)) * (BN / 4u) + q % (BN / 4u)] = v;
    }
}

// Y = act(alpha * sums + beta * C + R) on four sums of row m from column n on, Y's at `at`
vec4 epilogue(vec4 v, uint m, uint n, uint at)
{
    [[unroll]] for (uint jj = 0u; jj < 4u; jj++) {
        float r = v[jj] * pc.alpha;
        if (HAS_C && n + jj < pc.N) r += pc.beta * cb[m * pc.scm + (n + jj) * pc.scn];
#ifdef RESIDUAL
        if (n + jj < pc.N) r += res[at + jj];
#endif
        v[jj] = fused_act(ACT, r, pc.lo, pc.hi);
    }
    return v;
}

// four values of a row from column n on, at `at` of Y (of Out where to_out: FINISH's Y)
void put(vec4 v, uint at, uint n, bool to_out)
{
#ifdef FINISH
    if (to_out) {
        if (Y_VEC && n + 3u < pc.N) {
            yo4[at >> 2] = v;
        } else {
            [[unroll]] for (uint jj = 0u; jj < 4u; jj++)
                if (n + jj < pc.N) yo[at + jj] = v[jj];
        }
        return;
    }
#endif
    if (Y_VEC && n + 3u < pc.N) {
        y4[at >> 2] = v;
    } else {
        [[unroll]] for (uint jj = 0u; jj < 4u; jj++)
            if (n + jj < pc.N) y[at + jj] = v[jj];
    }
}

void main()
{
    uint t = gl_LocalInvocationID.x, tx = t % LX, ty = t / LX;
    uint n0 = gl_WorkGroupID.x * BN, m0 = gl_WorkGroupID.y * BM;
    uint z, k_begin, k_end, a_off, b_off;
    mm_workgroup_slice(pc.K, z, k_begin, k_end, a_off, b_off);

    float acc[RG * 4u][CG * 4u];
    [[unroll]] for (uint i = 0u; i < RG * 4u; i++)
        [[unroll]] for (uint j = 0u; j < CG * 4u; j++) acc[i][j] = 0.0;

    vec4 ra[QA_PER], rb[QB_PER];
    [[unroll]] for (uint r = 0u; r < QA_PER; r++) stage_a(0u, t + r * LOCAL, fetch_a(t + r * LOCAL, a_off, m0, k_begin, k_end));
    [[unroll]] for (uint r = 0u; r < QB_PER; r++) stage_b(0u, t + r * LOCAL, fetch_b(t + r * LOCAL, b_off, n0, k_begin, k_end));
    barrier();

    uint buf = 0u;
    for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
        bool more = k0 + BK < k_end;
        if (more) { // the next slice, in flight while this one is multiplied
            [[unroll]] for (uint r = 0u; r < QA_PER; r++) ra[r] = fetch_a(t + r * LOCAL, a_off, m0, k0 + BK, k_end);
            [[unroll]] for (uint r = 0u; r < QB_PER; r++) rb[r] = fetch_b(t + r * LOCAL, b_off, n0, k0 + BK, k_end);
        }
        [[unroll]] for (uint kk = 0u; kk < BK; kk++) {
            vec4 av[RG], bv[CG];
            [[unroll]] for (uint i = 0u; i < RG; i++) av[i] = As[(buf * BK + kk) * (BM / 4u) + i * (RS / 4u) + ty];
            [[unroll]] for (uint j = 0u; j < CG; j++) bv[j] = Bs[(buf * BK + kk) * (BN / 4u) + j * (CS / 4u) + tx];
            [[unroll]] for (uint i = 0u; i < RG; i++)
                [[unroll]] for (uint ii = 0u; ii < 4u; ii++)
                    [[unroll]] for (uint j = 0u; j < CG; j++)
                        [[unroll]] for (uint jj = 0u; jj < 4u; jj++)
                            acc[i * 4u + ii][j * 4u + jj] = fma(av[i][ii], bv[j][jj], acc[i * 4u + ii][j * 4u + jj]);
        }
        if (more) {
            [[unroll]] for (uint r = 0u; r < QA_PER; r++) stage_a(buf ^ 1u, t + r * LOCAL, ra[r]);
            [[unroll]] for (uint r = 0u; r < QB_PER; r++) stage_b(buf ^ 1u, t + r * LOCAL, rb[r]);
        }
        barrier();
        buf ^= 1u;
    }

    uint y_off = pc.y_base + (SPLIT_K ? gl_WorkGroupID.z : z) * pc.M * pc.N;
    if (EPI_SHARED) {
        // a slab at a time: row ii of block row i of every invocation's sums (LY rows of the
        // tile), selected by constant indices so that the sums stay in registers
        [[dont_unroll]] for (uint s = 0u; s < RG * 4u; s++) {
            uint i_s = s / 4u, ii_s = s % 4u;
            uint lm = i_s * RS + ty * 4u + ii_s, m = min(m0 + lm, pc.M - 1u);
            [[unroll]] for (uint i = 0u; i < RG; i++)
                [[unroll]] for (uint ii = 0u; ii < 4u; ii++) {
                    if (i * 4u + ii != s) continue;
                    [[unroll]] for (uint j = 0u; j < CG; j++) {
                        uint ln = j * CS + tx * 4u, n = n0 + ln;
                        vec4 v;
                        [[unroll]] for (uint jj = 0u; jj < 4u; jj++) {
                            float r = acc[i * 4u + ii][j * 4u + jj] * pc.alpha;
                            if (HAS_C && n + jj < pc.N) r += pc.beta * cb[m * pc.scm + (n + jj) * pc.scn];
#ifdef RESIDUAL
                            if (n + jj < pc.N && m0 + lm < pc.M) r += res[y_off + m * pc.N + n + jj];
#endif
                            v[jj] = r;
                        }
                        Cs[ty * (BN / 4u) + ln / 4u] = v;
                    }
                }
            barrier();
            [[dont_unroll]] for (uint e = t; e < LY * BN / 4u; e += LOCAL) {
                uint m = m0 + i_s * RS + (e / (BN / 4u)) * 4u + ii_s, n = n0 + (e % (BN / 4u)) * 4u;
                if (m < pc.M && n < pc.N) {
                    vec4 v = Cs[e];
                    [[unroll]] for (uint jj = 0u; jj < 4u; jj++) v[jj] = fused_act(ACT, v[jj], pc.lo, pc.hi);
                    uint at = y_off + m * pc.N + n;
                    if (Y_VEC && n + 3u < pc.N) {
                        y4[at >> 2] = v;
                    } else {
                        [[unroll]] for (uint jj = 0u; jj < 4u; jj++)
                            if (n + jj < pc.N) y[at + jj] = v[jj];
                    }
                }
            }
            barrier();
        }
        return;
    }
    [[unroll]] for (uint i = 0u; i < RG; i++)
        [[unroll]] for (uint ii = 0u; ii < 4u; ii++) {
            uint m = m0 + i * RS + ty * 4u + ii;
            if (m >= pc.M) continue;
            [[unroll]] for (uint j = 0u; j < CG; j++) {
                uint n = n0 + j * CS + tx * 4u, at = y_off + m * pc.N + n;
                vec4 v;
                [[unroll]] for (uint jj = 0u; jj < 4u; jj++) v[jj] = acc[i * 4u + ii][j * 4u + jj];
                put(SPLIT_K ? v : epilogue(v, m, n, at), at, n, false);
            }
        }
#ifdef FINISH
    // every slice's sums written (the release: this invocation's stores before the count);
    // the workgroup that counts the tile's last slice adds them in slice order, as the reduce
    // pass does (the same sums whichever workgroup is last), then stores Y
    memoryBarrierBuffer();
    barrier();
    uint slices = gl_NumWorkGroups.z / pc.z_count;
    if (t == 0u) {
        uint tile = (z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x + gl_WorkGroupID.x;
        last_slice = atomicAdd(done[tile], 1u) == slices - 1u;
        if (last_slice) atomicExchange(done[tile], 0u);
    }
    barrier();
    if (!last_slice) return;
    memoryBarrierBuffer(); // the acquire: the other slices' sums are read after the count
    uint count = pc.z_count * pc.M * pc.N;
    [[unroll]] for (uint i = 0u; i < RG; i++)
        [[unroll]] for (uint ii = 0u; ii < 4u; ii++) {
            uint m = m0 + i * RS + ty * 4u + ii;
            if (m >= pc.M) continue;
            [[unroll]] for (uint j = 0u; j < CG; j++) {
                uint n = n0 + j * CS + tx * 4u, at = z * pc.M * pc.N + m * pc.N + n;
                vec4 v = vec4(0.0);
                [[unroll]] for (uint jj = 0u; jj < 4u; jj++)
                    if (n + jj < pc.N)
                        for (uint l = 0u; l < slices; l++) v[jj] += y[l * count + at + jj];
                put(epilogue(v, m, n, at), at, n, true);
            }
        }
#endif
}

