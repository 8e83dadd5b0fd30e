// Attention as the exporters spell it, MatMul(Q, K^T) [-> Mul(scale)] [-> Add(mask)] ->
// Softmax(last axis) [-> IsNaN/Where(0)] -> MatMul(P, V), in one dispatch on GPUs for key
// sequences longer than attention_rows takes there (src/ops/matmul.c, attention_rows_try): a
// workgroup per block of QB query rows of one batch, the keys in chunks of KB through shared
// memory with an online softmax (the running max and sum per row; the rows' sums rescaled when
// the max grows), so that K and V are read once per block of queries rather than once per
// query (attention_rows), and the scores never leave shared memory. Head sizes D and E of up
// to DMAX (64, 128 or 256, a define of the variant); Q, K^T, V and the mask through element
// strides with up to two batch dims; Y [z][M][E], or a Transpose of it (y_at). PACK16 (the
// 16-bit variants of heads of 256, whose fp32 staging would pass 32 KB of shared memory) keeps
// the staged K and V as their 16-bit words, four to a uvec2 (exact: they are 16-bit values).
// The body of attention_tile (fp32 words) and of its _f16 / _bf16 variants (16-bit words, the
// fp16 mode and bfloat16 models): elements go through storage.glsl's LOAD and STORE, the scores,
// the softmax and the sums stay fp32 (PyTorch's fused attention keeps them so too).
// MASK: an additive mask M(z, m, s) is added to the scaled scores (HF's and PyTorch's SDPA
// spelling of a boolean mask as 0 / -inf). ZERO_EMPTY: a row whose keys are all masked (every
// score -inf) gives zeros, the exporter's IsNaN/Where after the softmax; without it NaN, as the
// softmax gives.
// QB / 2 x 16 invocations: invocation t holds rows 2 (t / 16) and 2 (t / 16) + 1 of the block,
// scores keys c + 16 j of a chunk (j < KB / 16) and sums Y's columns 4 c + 64 w .. +3
// (w < DMAX / 64: a 2 x 4 block each, 3 shared-memory reads for 8 multiply-adds); the next
// chunk of K and V is read into registers, four consecutive elements of a key an invocation,
// while this one is used.

layout(local_size_x_id = 0) in;               // QB / 2 * 16
layout(constant_id = 1) const uint QB = 32u;   // query rows a workgroup: 16 or 32 (DMAX 64), 16 (128), 8 (256)
layout(constant_id = 2) const bool MASK = false;
layout(constant_id = 3) const bool ZERO_EMPTY = false;

const uint KS = DMAX + 4u;                     // Ks's row stride (vec4 reads, no bank conflicts)
const uint JK = KB / 16u;                      // keys an invocation scores per chunk
const uint EW = DMAX / 64u;                    // Y's 64-column groups an invocation sums
const uint LOCAL = QB / 2u * 16u;
const uint KV_PER = KB * DMAX / 4u / LOCAL;    // K (and V) groups of 4 an invocation stages per chunk
#define NEG_INF uintBitsToFloat(0xff800000u)

layout(std430, binding = 0) readonly buffer Q { ELEM q[]; };
layout(std430, binding = 1) readonly buffer KT { ELEM kt[]; };
layout(std430, binding = 2) readonly buffer V { ELEM v[]; };
layout(std430, binding = 3) writeonly buffer Y { ELEM y[]; };
layout(std430, binding = 4) readonly buffer MK { ELEM mk[]; }; // Q again where there is no mask

// keep in step with attn_tile_push in src/ops/matmul.c
layout(push_constant) uniform Push {
    uint M, S, D, E;              // queries, keys, head size, value size
    uint sqm, sqd, skd, sks, svs, sve; // Q(m,d), K^T(d,s), V(s,e) element strides
    float alpha;
    uint bd2;                     // the inner batch dim's size (the outer implied)
    uint sq1, sq2, sk1, sk2, sv1, sv2; // the outer and inner batch dims' strides
    uint q0, k0, v0;              // first elements (strided Slices of one projection read in place)
    uint smm, sm1, sm2, mk0;      // the mask's query, outer and inner batch strides (key stride 1), first element
    // where Y(z, m, e) goes (a Transpose after the attention stored through: src/ops/matmul_fuse.c
    // transposed_store; dense: y_a = M E, y_zb = Z, y_a2 = 0, y_b = E, y_nb = E, y_c = 0)
    uint y_a, y_zb, y_a2, y_b, y_nb, y_c;
} pc;

#include "store_layout.glsl"

shared vec4 Qs[QB * DMAX / 4u]; // [row][d / 4], alpha applied; zeros past D and past M
#ifdef PACK16
#define STAGED uvec2
#if defined(STORAGE_BF16)
uvec2 pack4(vec4 x)
{
    uvec4 b = floatBitsToUint(x);
    return uvec2((b.x >> 16) | (b.y & 0xffff0000u), (b.z >> 16) | (b.w & 0xffff0000u));
}
vec4 unpack4(uvec2 p) { return uintBitsToFloat(uvec4(p.x << 16, p.x & 0xffff0000u, p.y << 16, p.y & 0xffff0000u)); }
#else
uvec2 pack4(vec4 x) { return uvec2(packHalf2x16(x.xy), packHalf2x16(x.zw)); }
vec4 unpack4(uvec2 p) { return vec4(unpackHalf2x16(p.x), unpackHalf2x16(p.y)); }
#endif
#else
#define STAGED vec4
#define pack4(x) (x)
#define unpack4(x) (x)
#endif
shared STAGED Ks[KB * KS / 4u];   // [key][d / 4], zeros past D and past S
shared STAGED Vs[KB * DMAX / 4u]; // [key][e / 4], zeros past E and past S
shared float Ps[QB * KB];       // [row][key]: the chunk's exp(score - max)
shared float red[QB * 16u];     // [row][invocation of the row]

uint ko, vo;

#define AT(buf, i) uintBitsToFloat(LOAD(buf, i))

// group g (elements 4 g .. 4 g + 3) of chunk s0's K (as [key][d]) and V (as [key][e]) staging,
// 0 outside
vec4 k_at(uint s0, uint g)
{
    uint key = 4u * g / DMAX, d = 4u * g % DMAX, s = s0 + key;
    vec4 r = vec4(0.0);
    if (s < pc.S)
        [[unroll]] for (uint k = 0u; k < 4u; k++)
            if (d + k < pc.D) r[k] = AT(kt, ko + (d + k) * pc.skd + s * pc.sks);
    return r;
}

vec4 v_at(uint s0, uint g)
{
    uint key = 4u * g / DMAX, e = 4u * g % DMAX, s = s0 + key;
    vec4 r = vec4(0.0);
    if (s < pc.S)
        [[unroll]] for (uint k = 0u; k < 4u; k++)
            if (e + k < pc.E) r[k] = AT(v, vo + s * pc.svs + (e + k) * pc.sve);
    return r;
}

void main()
{
    uint t = gl_LocalInvocationID.x, tr = t / 16u, c = t % 16u;
    uint m0 = gl_WorkGroupID.x * QB, z = gl_WorkGroupID.y;
    uint i2 = z % pc.bd2, i1 = z / pc.bd2;
    uint qo = pc.q0 + i1 * pc.sq1 + i2 * pc.sq2;
    ko = pc.k0 + i1 * pc.sk1 + i2 * pc.sk2;
    vo = pc.v0 + i1 * pc.sv1 + i2 * pc.sv2;
    uint mo = pc.mk0 + i1 * pc.sm1 + i2 * pc.sm2;
    for (uint i = t; i < QB * DMAX; i += LOCAL) {
        uint row = i / DMAX, d = i % DMAX, m = m0 + row;
        Qs[i / 4u][i % 4u] = m < pc.M && d < pc.D ? pc.alpha * AT(q, qo + m * pc.sqm + d * pc.sqd) : 0.0;
    }
    vec4 kn[KV_PER], vn[KV_PER]; // the next chunk, in flight
    [[unroll]] for (uint u = 0u; u < KV_PER; u++) {
        kn[u] = k_at(0u, t + u * LOCAL);
        vn[u] = v_at(0u, t + u * LOCAL);
    }
    float mx[2], sum[2];
    vec4 o[2][EW];
    [[unroll]] for (uint rr = 0u; rr < 2u; rr++) {
        mx[rr] = NEG_INF;
        sum[rr] = 0.0;
        [[unroll]] for (uint w = 0u; w < EW; w++) o[rr][w] = vec4(0.0);
    }
    for (uint s0 = 0u; s0 < pc.S; s0 += KB) {
        barrier(); // the last chunk's Ks, Vs and Ps are read
        [[unroll]] for (uint u = 0u; u < KV_PER; u++) {
            uint g = t + u * LOCAL, key = 4u * g / DMAX, d = 4u * g % DMAX;
            Ks[(key * KS + d) / 4u] = pack4(kn[u]);
            Vs[g] = pack4(vn[u]);
        }
        barrier();
        if (s0 + KB < pc.S)
            [[unroll]] for (uint u = 0u; u < KV_PER; u++) {
                kn[u] = k_at(s0 + KB, t + u * LOCAL);
                vn[u] = v_at(s0 + KB, t + u * LOCAL);
            }
        float sc[2][JK];
        float cmax[2];
        [[unroll]] for (uint rr = 0u; rr < 2u; rr++) cmax[rr] = NEG_INF;
        [[unroll]] for (uint j = 0u; j < JK; j++) {
            uint key = c + 16u * j;
            vec4 a0 = vec4(0.0), a1 = vec4(0.0);
            [[unroll]] for (uint d4 = 0u; d4 < DMAX / 4u; d4++) {
                vec4 kv = unpack4(Ks[key * (KS / 4u) + d4]);
                a0 = fma(Qs[(2u * tr) * (DMAX / 4u) + d4], kv, a0);
                a1 = fma(Qs[(2u * tr + 1u) * (DMAX / 4u) + d4], kv, a1);
            }
            sc[0][j] = (a0.x + a0.y) + (a0.z + a0.w);
            sc[1][j] = (a1.x + a1.y) + (a1.z + a1.w);
            if (s0 + key < pc.S) {
                if (MASK)
                    [[unroll]] for (uint rr = 0u; rr < 2u; rr++) {
                        uint m = min(m0 + 2u * tr + rr, pc.M - 1u); // rows past M: any row's mask
                        sc[rr][j] += AT(mk, mo + m * pc.smm + s0 + key);
                    }
                cmax[0] = max(cmax[0], sc[0][j]);
                cmax[1] = max(cmax[1], sc[1][j]);
            }
        }
        [[unroll]] for (uint rr = 0u; rr < 2u; rr++) red[(2u * tr + rr) * 16u + c] = cmax[rr];
        barrier();
        float nmax[2], csum[2];
        [[unroll]] for (uint rr = 0u; rr < 2u; rr++) {
            nmax[rr] = mx[rr];
            [[unroll]] for (uint k = 0u; k < 16u; k++) nmax[rr] = max(nmax[rr], red[(2u * tr + rr) * 16u + k]);
            // every key so far masked (-inf): exp(-inf - -inf) would be NaN; the keys weigh 0
            float base = nmax[rr] == NEG_INF ? 0.0 : nmax[rr];
            csum[rr] = 0.0;
            [[unroll]] for (uint j = 0u; j < JK; j++) {
                uint key = c + 16u * j;
                float e = s0 + key < pc.S ? exp(sc[rr][j] - base) : 0.0;
                Ps[(2u * tr + rr) * KB + key] = e;
                csum[rr] += e;
            }
        }
        barrier(); // every row's maxima are read before red takes the sums
        [[unroll]] for (uint rr = 0u; rr < 2u; rr++) red[(2u * tr + rr) * 16u + c] = csum[rr];
        barrier();
        [[unroll]] for (uint rr = 0u; rr < 2u; rr++) {
            // 0 on the first chunk (mx is -inf); 1 while every key so far is masked
            float rescale = nmax[rr] == NEG_INF ? 1.0 : exp(mx[rr] - nmax[rr]);
            float chunk_sum = 0.0;
            [[unroll]] for (uint k = 0u; k < 16u; k++) chunk_sum += red[(2u * tr + rr) * 16u + k];
            sum[rr] = sum[rr] * rescale + chunk_sum;
            mx[rr] = nmax[rr];
            [[unroll]] for (uint w = 0u; w < EW; w++) o[rr][w] *= rescale;
        }
        [[unroll]] for (uint key = 0u; key < KB; key++) {
            float p0 = Ps[(2u * tr) * KB + key], p1 = Ps[(2u * tr + 1u) * KB + key];
            [[unroll]] for (uint w = 0u; w < EW; w++) {
                vec4 vv = unpack4(Vs[key * (DMAX / 4u) + 16u * w + c]);
                o[0][w] = fma(vec4(p0), vv, o[0][w]);
                o[1][w] = fma(vec4(p1), vv, o[1][w]);
            }
        }
    }
    [[unroll]] for (uint rr = 0u; rr < 2u; rr++) {
        uint m = m0 + 2u * tr + rr;
        if (m >= pc.M) continue;
        // a row with every key masked: sum 0 (its scores all -inf)
        bool empty = sum[rr] == 0.0;
        [[unroll]] for (uint w = 0u; w < EW; w++) {
            vec4 r = empty ? (ZERO_EMPTY ? vec4(0.0) : vec4(uintBitsToFloat(0x7fc00000u))) : o[rr][w] / sum[rr];
            [[unroll]] for (uint k = 0u; k < 4u; k++) {
                uint e = 64u * w + 4u * c + k;
                if (e < pc.E) STORE(y, y_at(z, m, e), floatBitsToUint(r[k]));
            }
        }
    }
}
