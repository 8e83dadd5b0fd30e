#version 450
// Attention as the exporters spell it, MatMul(Q, K^T) -> Softmax(last axis) -> MatMul(P, V), in
// one dispatch on GPUs for key sequences longer than attention_rows takes there (ViT's 197,
// BERT's 128; src/ops/matmul.c, attention_rows_try): a workgroup per block of QB query rows of
// one batch, the keys in chunks of KB through shared memory with an online softmax (the
// running max and sum per row; the rows' sums rescaled when the max grows), so that K and V
// are read once per block of queries rather than once per query (attention_rows), and the
// scores never leave shared memory. Head sizes D and E of up to 64, fp32 words; Q, K^T and V
// through element strides with up to three batch dims, as attention_rows reads them (same push
// constants); Y contiguous [z][M][E].
// 256 invocations: invocation t works on row r = t / 16 of the block, on the chunk's keys
// c + 16 j (j < KB / 16) and on Y's columns c + 16 j (j < 4), c = t % 16.
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint KB = 64u; // keys a chunk: 64, or 32 where shared memory is under 43 KB

const uint QB = 16u, DMAX = 64u, KS = DMAX + 4u; // KS: Ks's row stride (vec4 reads, no bank conflicts)
const uint JK = KB / 16u;                         // keys an invocation scores per chunk

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer KT { float kt[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };

// keep in step with attn_rows_push in src/ops/matmul.c
layout(push_constant) uniform Push {
    uint M, S, D, E;              // queries, keys, head size, value size
    uint sqm, sqd, skd, sks, svs, sve; // Q(m,d), K^T(d,s), V(s,e) element strides
    float alpha;
    uint bd1, bd2;                // the inner two batch dims' sizes (the outermost implied)
    uint sq0, sq1, sq2, sk0, sk1, sk2, sv0, sv1, sv2;
    uint q0, k0, v0;              // first elements (strided Slices of one projection read in place)
} pc;

shared vec4 Qs[QB * DMAX / 4u];  // [row][d / 4], zeros past D and past M
shared vec4 Ks[KB * KS / 4u];    // [key][d / 4], zeros past D
shared float Vs[KB * DMAX];      // [key][e]
shared float Ps[QB * KB];        // [row][key]: the chunk's exp(score - max)
shared float red[QB * 16u];      // [row][invocation of the row]

void main()
{
    uint t = gl_LocalInvocationID.x, r = t / 16u, c = t % 16u;
    uint m0 = gl_WorkGroupID.x * QB, z = gl_WorkGroupID.y;
    uint i2 = z % pc.bd2, i1 = (z / pc.bd2) % pc.bd1, i0 = z / (pc.bd2 * pc.bd1);
    uint qo = pc.q0 + i0 * pc.sq0 + i1 * pc.sq1 + i2 * pc.sq2;
    uint ko = pc.k0 + i0 * pc.sk0 + i1 * pc.sk1 + i2 * pc.sk2;
    uint vo = pc.v0 + i0 * pc.sv0 + i1 * pc.sv1 + i2 * pc.sv2;
    for (uint i = t; i < QB * DMAX; i += 256u) {
        uint row = i / DMAX, d = i % DMAX, m = m0 + row;
        Qs[i / 4u][i % 4u] = m < pc.M && d < pc.D ? pc.alpha * q[qo + m * pc.sqm + d * pc.sqd] : 0.0;
    }
    float mx = uintBitsToFloat(0xff800000u), sum = 0.0; // the row's running max and sum
    float o[4] = float[4](0.0, 0.0, 0.0, 0.0);         // Y(r, c + 16 j), unnormalized
    for (uint s0 = 0u; s0 < pc.S; s0 += KB) {
        barrier(); // the last chunk's Ks, Vs and Ps are read
        for (uint i = t; i < KB * DMAX; i += 256u) {
            uint key = i / DMAX, d = i % DMAX, s = s0 + key;
            Ks[(key * KS + d) / 4u][d % 4u] = s < pc.S && d < pc.D ? kt[ko + d * pc.skd + s * pc.sks] : 0.0;
            Vs[i] = s < pc.S && d < pc.E ? v[vo + s * pc.svs + d * pc.sve] : 0.0;
        }
        barrier();
        float sc[JK];
        float cmax = uintBitsToFloat(0xff800000u);
        [[unroll]] for (uint j = 0u; j < JK; j++) {
            uint key = c + 16u * j;
            vec4 acc = vec4(0.0);
            [[unroll]] for (uint d4 = 0u; d4 < DMAX / 4u; d4++) acc = fma(Qs[r * (DMAX / 4u) + d4], Ks[key * (KS / 4u) + d4], acc);
            sc[j] = acc.x + acc.y + acc.z + acc.w;
            if (s0 + key < pc.S) cmax = max(cmax, sc[j]);
        }
        red[r * 16u + c] = cmax;
        barrier();
        float nmax = mx;
        [[unroll]] for (uint k = 0u; k < 16u; k++) nmax = max(nmax, red[r * 16u + k]);
        float csum = 0.0;
        [[unroll]] for (uint j = 0u; j < JK; j++) {
            uint key = c + 16u * j;
            float e = s0 + key < pc.S ? exp(sc[j] - nmax) : 0.0;
            Ps[r * KB + key] = e;
            csum += e;
        }
        barrier(); // every row's maxima are read before red takes the sums
        red[r * 16u + c] = csum;
        barrier();
        float rescale = exp(mx - nmax); // 0 on the first chunk (mx is -inf)
        float chunk_sum = 0.0;
        [[unroll]] for (uint k = 0u; k < 16u; k++) chunk_sum += red[r * 16u + k];
        sum = sum * rescale + chunk_sum;
        mx = nmax;
        [[unroll]] for (uint j = 0u; j < 4u; j++) o[j] *= rescale;
        for (uint key = 0u; key < KB; key++) {
            float pk = Ps[r * KB + key];
            [[unroll]] for (uint j = 0u; j < 4u; j++) o[j] = fma(pk, Vs[key * DMAX + c + 16u * j], o[j]);
        }
    }
    uint m = m0 + r;
    if (m >= pc.M) return;
    float inv = 1.0 / sum;
    [[unroll]] for (uint j = 0u; j < 4u; j++) {
        uint e = c + 16u * j;
        if (e < pc.E) y[(z * pc.M + m) * pc.E + e] = o[j] * inv;
    }
}
