// Matrix multiply for few rows (M <= 8: a batch-1 Linear layer, a policy's state token) at
// memory bandwidth: Y = act(alpha * A B + beta * C). The weight B is the traffic, so every
// invocation reads it 16 bytes at a time (a uvec4: 8 halves or 4 floats) and keeps M sums per
// element it reads; the grid is column blocks times slices of K, enough workgroups to keep every
// multiprocessor's loads in flight even where N is narrow.
// - B_K_CONTIG false (B(k, n+1) follows B(k, n): a MatMul's [K, N] weight): 32 invocations
//   side by side read a 16-byte run of columns each (256 halves or 128 floats a row of the
//   block) and 8 such rows of invocations walk the slice's k; A(m, k) is one value for all 32.
// - B_K_CONTIG true (B(k+1, n) follows B(k, n): Gemm's transB weight [N, K]): 32 invocations
//   read one column's K in 16-byte runs side by side, 8 columns a workgroup; A's rows are read
//   16 bytes at a time alongside.
// The sums of a workgroup's invocations meet in shared memory. FINISH (the *_fin kernels, more
// than one slice): each workgroup writes its slice's sums to P (binding 4, [slice][m][n] fp32)
// and counts itself done for its column block (binding 5, zero between runs: the last puts it
// back); the last of a block adds the slices in slice order, as a reduce pass would (the same
// sums whichever workgroup is last), and stores Y. Without FINISH one slice stores Y directly.
// Storage: storage.glsl's (STORAGE_F16, STORAGE_BF16, or words). A, B and Y's first elements,
// B's row stride and, for B_K_CONTIG, K and A's row stride are multiples of the run's elements
// (src/ops/matmul_gemv.c checks). Include after common.glsl, storage.glsl and fused_act.glsl.

layout(local_size_x_id = 0) in; // 256
layout(constant_id = 1) const uint OUT_DT = 0u;
layout(constant_id = 2) const uint ROWS = 1u; // M, 1..8
layout(constant_id = 3) const bool B_K_CONTIG = false;
layout(constant_id = 4) const bool HAS_C = false;
layout(constant_id = 5) const uint ACT = 0u; // fused_act.glsl's code

#if defined(STORAGE_F16) || defined(STORAGE_BF16)
#define RUN 8u // elements in 16 bytes
#else
#define RUN 4u
#endif

layout(std430, binding = 0) readonly buffer A { ELEM a[]; };
layout(std430, binding = 0) readonly buffer A4 { uvec4 a4[]; };
layout(std430, binding = 1) readonly buffer B4 { uvec4 b4[]; };
layout(std430, binding = 2) readonly buffer C { ELEM cb[]; };
layout(std430, binding = 3) writeonly buffer Y { ELEM y[]; };
#ifdef FINISH
layout(std430, binding = 4) coherent buffer P { float part[]; };
layout(std430, binding = 5) coherent buffer Count { uint done[]; };
shared bool last_slice;
#endif

// keep in step with gemv_push in src/ops/matmul_gemv.c
layout(push_constant) uniform Push {
    uint M, N, K, sam, sak, sbk, sbn, scm, scn;
    float alpha, beta;
    uint a_base, b_base, y_base;
    uint k_slice; // K's elements a workgroup (gl_WorkGroupID.y its slice)
    float lo, hi; // ACT's bounds (a clamp's)
} pc;

#define LOCAL 256u
#define SIDE 32u              // invocations side by side along B's contiguous dim
#define DEEP (LOCAL / SIDE)   // and one above the other
#define UNROLL 4u

// the 16 bytes of a run as RUN floats (halves widened; bfloat16's bits are the top of a float's)
void unpack_run(uvec4 w, out float v[RUN])
{
#if defined(STORAGE_BF16)
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        v[2u * i] = uintBitsToFloat(w[i] << 16);
        v[2u * i + 1u] = uintBitsToFloat(w[i] & 0xffff0000u);
    }
#elif defined(STORAGE_F16)
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        vec2 h = unpackHalf2x16(w[i]);
        v[2u * i] = h.x;
        v[2u * i + 1u] = h.y;
    }
#else
    [[unroll]] for (uint i = 0u; i < 4u; i++) v[i] = uintBitsToFloat(w[i]);
#endif
}

// a block's partial sums: of one row, SIDE * RUN columns by DEEP (B_K_CONTIG false), or of
// every row, DEEP columns by SIDE (true)
shared float red[LOCAL * 8u];

float epilogue(float s, uint m, uint n)
{
    float v = pc.alpha * s;
    if (HAS_C) v += pc.beta * uintBitsToFloat(LOAD(cb, m * pc.scm + n * pc.scn));
    return round_to_dtype(OUT_DT, fused_act(ACT, v, pc.lo, pc.hi));
}

// the block's sum of (m, n) for this slice: stored as Y, or as the slice's part of P
void put(float s, uint m, uint n)
{
#ifdef FINISH
    part[(gl_WorkGroupID.y * pc.M + m) * pc.N + n] = s;
#else
    STORE(y, pc.y_base + m * pc.N + n, floatBitsToUint(epilogue(s, m, n)));
#endif
}

void main()
{
    uint t = gl_LocalInvocationID.x;
    uint side = t % SIDE, deep = t / SIDE;
    uint k0 = gl_WorkGroupID.y * pc.k_slice, k1 = min(k0 + pc.k_slice, pc.K);
    uint cols = B_K_CONTIG ? DEEP : SIDE * RUN; // Y's columns a workgroup
    uint n0 = gl_WorkGroupID.x * cols;

    if (!B_K_CONTIG) {
        float acc[ROWS][RUN];
        [[unroll]] for (uint r = 0u; r < ROWS; r++)
            [[unroll]] for (uint j = 0u; j < RUN; j++) acc[r][j] = 0.0;
        uint n = n0 + side * RUN;
        if (n < pc.N) {
            uint run = (pc.b_base + n) / RUN, row_runs = pc.sbk / RUN;
            for (uint k = k0 + deep; k < k1; k += DEEP * UNROLL) {
                uvec4 w[UNROLL];
                [[unroll]] for (uint u = 0u; u < UNROLL; u++)
                    w[u] = k + u * DEEP < k1 ? b4[run + (k + u * DEEP) * row_runs] : uvec4(0u);
                [[unroll]] for (uint u = 0u; u < UNROLL; u++) {
                    uint ku = k + u * DEEP;
                    if (ku >= k1) break;
                    float bv[RUN];
                    unpack_run(w[u], bv);
                    [[unroll]] for (uint r = 0u; r < ROWS; r++) {
                        float av = uintBitsToFloat(LOAD(a, pc.a_base + r * pc.sam + ku * pc.sak));
                        [[unroll]] for (uint j = 0u; j < RUN; j++) acc[r][j] = fma(av, bv[j], acc[r][j]);
                    }
                }
            }
        }
        // row by row: red[deep][column] then each column's DEEP sums added by one invocation
        for (uint r = 0u; r < ROWS; r++) {
            [[unroll]] for (uint j = 0u; j < RUN; j++) red[deep * SIDE * RUN + side * RUN + j] = acc[r][j];
            barrier();
            for (uint c = t; c < SIDE * RUN; c += LOCAL) {
                float s = 0.0;
                for (uint d = 0u; d < DEEP; d++) s += red[d * SIDE * RUN + c];
                if (n0 + c < pc.N) put(s, r, n0 + c);
            }
            barrier();
        }
    } else {
        float acc[ROWS];
        [[unroll]] for (uint r = 0u; r < ROWS; r++) acc[r] = 0.0;
        uint n = n0 + deep;
        if (n < pc.N) {
            uint col = (pc.b_base + n * pc.sbn) / RUN;
            // runs of k: k0 and k1 are multiples of RUN
            for (uint q = k0 / RUN + side; q < k1 / RUN; q += SIDE * UNROLL) {
                uvec4 w[UNROLL];
                [[unroll]] for (uint u = 0u; u < UNROLL; u++)
                    w[u] = q + u * SIDE < k1 / RUN ? b4[col + q + u * SIDE] : uvec4(0u);
                [[unroll]] for (uint u = 0u; u < UNROLL; u++) {
                    uint qu = q + u * SIDE;
                    if (qu >= k1 / RUN) break;
                    float bv[RUN];
                    unpack_run(w[u], bv);
                    [[unroll]] for (uint r = 0u; r < ROWS; r++) {
                        float av[RUN];
                        unpack_run(a4[(pc.a_base + r * pc.sam) / RUN + qu], av);
                        [[unroll]] for (uint j = 0u; j < RUN; j++) acc[r] = fma(av[j], bv[j], acc[r]);
                    }
                }
            }
        }
        // every row at once: red[r][t], then halving over the SIDE lanes of each column
        [[unroll]] for (uint r = 0u; r < ROWS; r++) red[r * LOCAL + t] = acc[r];
        barrier();
        for (uint h = SIDE / 2u; h > 0u; h /= 2u) {
            if (side < h)
                [[unroll]] for (uint r = 0u; r < ROWS; r++) red[r * LOCAL + t] += red[r * LOCAL + t + h];
            barrier();
        }
        if (side < ROWS && n < pc.N) put(red[side * LOCAL + deep * SIDE], side, n);
    }

#ifdef FINISH
    // this slice's sums written (the release: the stores before the count); the block's last
    // workgroup adds every slice's
    memoryBarrierBuffer();
    barrier();
    uint slices = gl_NumWorkGroups.y;
    if (t == 0u) {
        last_slice = atomicAdd(done[gl_WorkGroupID.x], 1u) == slices - 1u;
        if (last_slice) atomicExchange(done[gl_WorkGroupID.x], 0u);
    }
    barrier();
    if (!last_slice) return;
    memoryBarrierBuffer(); // the acquire: the other slices' sums are read after the count
    for (uint o = t; o < ROWS * cols; o += LOCAL) {
        uint m = o / cols, n = n0 + o % cols;
        if (n >= pc.N) continue;
        float s = 0.0;
        for (uint l = 0u; l < slices; l++) s += part[(l * pc.M + m) * pc.N + n];
        STORE(y, pc.y_base + m * pc.N + n, floatBitsToUint(epilogue(s, m, n)));
    }
#endif
}
