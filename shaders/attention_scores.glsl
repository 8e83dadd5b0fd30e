// Attention's optional qk_matmul_output, one invocation per query row (common part:
// attention_common.glsl). MODE 0 and 1: the scores after the softcap (the reference applies
// the softcap before mode 0's copy too), 2: plus the bias, 3: the softmax probabilities.
layout(constant_id = 8) const uint MODE = 0u;

layout(std430, binding = 3) writeonly buffer Out { ELEM o[]; };

void main()
{
    uint row = linear_id();
    if (row >= pc.batch * pc.q_heads * pc.q_len) return;
    row_t r = row_of(row);
    uint base = row * pc.kv_len;
    if (MODE < 3u) {
        for (uint j = 0u; j < pc.kv_len; j++) {
            float s = score_of(r, j);
            if (MODE == 2u) s = round_to_dtype(DT, s + bias_of(r, j));
            STORE(o, base + j, floatBitsToUint(s));
        }
        return;
    }
    float m = NEG_INF;
    bool any = false;
    for (uint j = 0u; j < pc.kv_len; j++) {
        float b = bias_of(r, j);
        any = any || !is_neg_inf(b);
        m = max(m, logit(score_of(r, j), b));
    }
    float sum = 0.0;
    for (uint j = 0u; j < pc.kv_len; j++) sum = add_term(sum, softmax_term(logit(score_of(r, j), bias_of(r, j)), m));
    sum = round_to_dtype(SOFTMAX_DT, sum);
    if (sum == 0.0) sum = 1.0;
    for (uint j = 0u; j < pc.kv_len; j++) {
        float p = probability(softmax_term(logit(score_of(r, j), bias_of(r, j)), m), sum, any);
        STORE(o, base + j, floatBitsToUint(p));
    }
}
