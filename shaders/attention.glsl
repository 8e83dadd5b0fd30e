// Attention's output Y, one workgroup per query row (common part: attention_common.glsl):
// the row's max logit and its sum of exponentials by shared-memory trees, then Y = P V, each
// invocation accumulating some of the Dv outputs in fp32 in key order. With no more than
// CACHE keys the row's logits, then its probabilities, stay in shared memory; with more they
// are recomputed, the probabilities in tiles of one key per invocation.
layout(constant_id = 8) const uint CACHE = 1u;

layout(std430, binding = 3) writeonly buffer Y { ELEM y[]; };

shared float s_tree[128];
shared float s_logit[CACHE];
shared float s_p[128];

// op 0: max, 1: sum
float tree(float v, uint op)
{
    uint t = gl_LocalInvocationID.x;
    s_tree[t] = v;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {
        if (t < s) s_tree[t] = op == 0u ? max(s_tree[t], s_tree[t + s]) : s_tree[t] + s_tree[t + s];
        barrier();
    }
    float r = s_tree[0];
    barrier();
    return r;
}

float logit_at(row_t r, uint j)
{
    if (pc.kv_len <= CACHE) return s_logit[j];
    return logit(score_of(r, j), bias_of(r, j));
}

void main()
{
    uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (row >= pc.batch * pc.q_heads * pc.q_len) return; // whole workgroups leave together
    row_t r = row_of(row);
    uint t = gl_LocalInvocationID.x, group = gl_WorkGroupSize.x;

    float m = NEG_INF, any_key = 0.0;
    for (uint j = t; j < pc.kv_len; j += group) {
        float b = bias_of(r, j);
        if (!is_neg_inf(b)) any_key = 1.0;
        float x = logit(score_of(r, j), b);
        if (pc.kv_len <= CACHE) s_logit[j] = x;
        m = max(m, x);
    }
    m = tree(m, 0u);
    bool any = tree(any_key, 0u) > 0.0;

    float sum = 0.0;
    if (SOFTMAX_DT == DT_BF16) { // a sequential sum (add_term), by one invocation
        if (t == 0u) {
            for (uint j = 0u; j < pc.kv_len; j++) sum = add_term(sum, softmax_term(logit_at(r, j), m));
            s_tree[0] = sum;
        }
        barrier();
        sum = s_tree[0];
        barrier();
    } else {
        for (uint j = t; j < pc.kv_len; j += group) sum += softmax_term(logit_at(r, j), m);
        sum = tree(sum, 1u);
    }
    sum = round_to_dtype(SOFTMAX_DT, sum);
    if (sum == 0.0) sum = 1.0;

    uint y_row = Q_3D ? (r.b * pc.q_len + r.i) * pc.q_heads * pc.v_head + r.h * pc.v_head
                      : ((r.b * pc.q_heads + r.h) * pc.q_len + r.i) * pc.v_head;
    uint width = pc.head + pc.v_head;
    if (pc.kv_len <= CACHE) { // the row's probabilities replace its logits: one barrier, no tiles
        for (uint j = t; j < pc.kv_len; j += group) s_logit[j] = probability(softmax_term(s_logit[j], m), sum, any);
        barrier();
        for (uint d = t; d < pc.v_head; d += group) {
            float acc = 0.0;
            for (uint j = 0u; j < pc.kv_len; j++) acc += s_logit[j] * uintBitsToFloat(LOAD(kv, r.kv_at + j * width + pc.head + d));
            STORE(y, y_row + d, floatBitsToUint(round_to_dtype(DT, acc)));
        }
        return;
    }
    for (uint d0 = 0u; d0 < pc.v_head; d0 += group) {
        uint d = d0 + t;
        float acc = 0.0;
        for (uint j0 = 0u; j0 < pc.kv_len; j0 += group) {
            uint j = j0 + t;
            s_p[t] = j < pc.kv_len ? probability(softmax_term(logit_at(r, j), m), sum, any) : 0.0;
            barrier();
            uint n = min(group, pc.kv_len - j0);
            if (d < pc.v_head)
                for (uint k = 0u; k < n; k++)
                    acc += s_p[k] * uintBitsToFloat(LOAD(kv, r.kv_at + (j0 + k) * width + pc.head + d));
            barrier();
        }
        if (d < pc.v_head) STORE(y, y_row + d, floatBitsToUint(round_to_dtype(DT, acc)));
    }
}
