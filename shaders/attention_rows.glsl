// Attention as the exporters spell it, MatMul(Q, K^T) -> Softmax(last axis) -> MatMul(P, V), in
// one dispatch for short key sequences (src/ops/matmul.c, attention_rows_try): a workgroup per
// query row of a batch, its invocations over the keys for the scores (alpha * q . k, alpha
// the scale folded into the first product), their max and sum in shared memory, then over
// the value columns: y = sum_s exp(score_s - max) v_s / sum_s exp(score_s - max). Q, K^T and
// V are read through element strides with up to three batch dims (V's stride 0 where it
// broadcasts); Y [z][M][E], or a Transpose of it (y_at). The scores never leave shared
// memory. The body of attention_rows (fp32 words) and of its _f16 / _bf16 variants
// (16-bit words, the fp16 mode and bfloat16 models): elements go through storage.glsl's LOAD
// and STORE, arithmetic stays fp32.

layout(local_size_x_id = 0) in; // a power of two, at most 64
layout(constant_id = 1) const uint MAX_KEYS = 1024u;

layout(std430, binding = 0) readonly buffer Q { ELEM q[]; };
layout(std430, binding = 1) readonly buffer KT { ELEM kt[]; };
layout(std430, binding = 2) readonly buffer V { ELEM v[]; };
layout(std430, binding = 3) writeonly buffer Y { ELEM y[]; };

// keep in step with attn_rows_push in src/ops/matmul.c
layout(push_constant) uniform Push {
    uint M, S, D, E;              // queries, keys, head size, value size
    uint sqm, sqd, skd, sks, svs, sve; // Q(m,d), K^T(d,s), V(s,e) element strides
    float alpha;
    uint bd1, bd2;                // the inner two batch dims' sizes (the outermost implied)
    uint sq0, sq1, sq2, sk0, sk1, sk2, sv0, sv1, sv2;
    uint q0, k0, v0;              // first elements (strided Slices of one projection read in place)
    // where Y(z, m, e) goes (a Transpose after the attention stored through: src/ops/matmul_fuse.c
    // transposed_store; dense: y_a = M E, y_zb = Z, y_a2 = 0, y_b = E, y_nb = E, y_c = 0)
    uint y_a, y_zb, y_a2, y_b, y_nb, y_c;
} pc;

#include "store_layout.glsl"

shared float p[MAX_KEYS];
shared float red[64];

float reduce(float x, uint t, bool is_max)
{
    uint L = gl_WorkGroupSize.x;
    red[t] = x;
    barrier();
    for (uint h = L / 2u; h > 0u; h /= 2u) {
        if (t < h) red[t] = is_max ? max(red[t], red[t + h]) : red[t] + red[t + h];
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}

void main()
{
    uint t = gl_LocalInvocationID.x, L = gl_WorkGroupSize.x;
    uint m = gl_WorkGroupID.x, z = gl_WorkGroupID.y;
    uint i2 = z % pc.bd2, i1 = (z / pc.bd2) % pc.bd1, i0 = z / (pc.bd2 * pc.bd1);
    uint qo = pc.q0 + i0 * pc.sq0 + i1 * pc.sq1 + i2 * pc.sq2 + m * pc.sqm;
    uint ko = pc.k0 + i0 * pc.sk0 + i1 * pc.sk1 + i2 * pc.sk2;
    uint vo = pc.v0 + i0 * pc.sv0 + i1 * pc.sv1 + i2 * pc.sv2;
    float mx = uintBitsToFloat(0xff800000u); // -inf
    for (uint s = t; s < pc.S; s += L) {
        float acc = 0.0;
        for (uint d = 0u; d < pc.D; d++) acc = fma(uintBitsToFloat(LOAD(q, qo + d * pc.sqd)), uintBitsToFloat(LOAD(kt, ko + d * pc.skd + s * pc.sks)), acc);
        acc *= pc.alpha;
        p[s] = acc;
        mx = max(mx, acc);
    }
    mx = reduce(mx, t, true);
    float sum = 0.0;
    for (uint s = t; s < pc.S; s += L) {
        float e = exp(p[s] - mx);
        p[s] = e;
        sum += e;
    }
    sum = reduce(sum, t, false); // its barriers also make every p[s] visible
    float inv = 1.0 / sum;
    for (uint e = t; e < pc.E; e += L) {
        float acc = 0.0;
        for (uint s = 0u; s < pc.S; s++) acc = fma(p[s], uintBitsToFloat(LOAD(v, vo + s * pc.svs + e * pc.sve)), acc);
        STORE(y, y_at(z, m, e), floatBitsToUint(acc * inv));
    }
}
