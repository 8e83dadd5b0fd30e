// Shared by attention.glsl and attention_scores.glsl: the inputs, parameters and the score of one
// (query, key) pair, as ONNX's Attention reference computes it. Keys and values arrive packed
// (attention_kv, shaders/attention_kv.glsl): kv[b][kv head][key][0, D) is the key, [D, D + Dv) the
// value. Intermediates are rounded to the dtype (DT) where the reference rounds them, so that fp16
// and bf16 results follow it; the softmax rounds to SOFTMAX_DT (softmax_precision).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = DT_F32;
layout(constant_id = 2) const uint SOFTMAX_DT = DT_F32;
layout(constant_id = 3) const bool Q_3D = false;  // Q and Y are [B, S, heads * D], else [B, heads, S, D]
layout(constant_id = 4) const bool HAS_BIAS = false; // binding 2 holds the additive bias (attention_bias)
layout(constant_id = 5) const bool CAUSAL = false;   // key j attends query i iff j <= i + pc.offset
layout(constant_id = 6) const bool WINDOW = false;   // pc.left / pc.right bound i + pc.offset - j
layout(constant_id = 7) const bool SOFTCAP = false;

layout(std430, binding = 0) readonly buffer Q { ELEM q[]; };
layout(std430, binding = 1) readonly buffer KV { ELEM kv[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(push_constant) uniform Push {
    uint batch; uint q_heads; uint kv_heads; uint q_len;
    uint kv_len; uint head; uint v_head; int offset;
    float scale_sqrt; float softcap; int left; int right;
    uint bias_b; uint bias_h; uint bias_q; // bias element strides (0: broadcast)
} pc;

#define NEG_INF uintBitsToFloat(0xff800000u)

bool is_neg_inf(float v) { return isinf(v) && v < 0.0; }

// One query row: batch b, query head h, query i (row = (b * q_heads + h) * q_len + i).
struct row_t { uint b; uint h; uint i; uint q_at; uint kv_at; uint bias_at; };

row_t row_of(uint row)
{
    row_t r;
    r.i = row % pc.q_len;
    r.h = (row / pc.q_len) % pc.q_heads;
    r.b = row / (pc.q_len * pc.q_heads);
    r.q_at = Q_3D ? (r.b * pc.q_len + r.i) * pc.q_heads * pc.head + r.h * pc.head
                  : ((r.b * pc.q_heads + r.h) * pc.q_len + r.i) * pc.head;
    // grouped-query attention: query heads share kv head h / (q_heads / kv_heads)
    uint kh = r.h / (pc.q_heads / pc.kv_heads);
    r.kv_at = (r.b * pc.kv_heads + kh) * pc.kv_len * (pc.head + pc.v_head);
    r.bias_at = r.b * pc.bias_b + r.h * pc.bias_h + r.i * pc.bias_q;
    return r;
}

// The additive bias of key j: the mask (with nonpad_kv_seqlen's padding) plus the causal and
// window frontiers; -inf where the key is masked.
float bias_of(row_t r, uint j)
{
    float v = HAS_BIAS ? bias[r.bias_at + j] : 0.0;
    int diff = int(r.i) + pc.offset - int(j);
    if (CAUSAL && diff < 0) v += NEG_INF;
    if (WINDOW && ((pc.left >= 0 && diff > pc.left) || (pc.right >= 0 && -diff > pc.right))) v += NEG_INF;
    return v;
}

// (Q sqrt(scale)) . (K sqrt(scale)), softcapped: the score before the bias.
float score_of(row_t r, uint j)
{
    float s = round_to_dtype(DT, pc.scale_sqrt);
    uint k_at = r.kv_at + j * (pc.head + pc.v_head);
    float acc = 0.0;
    for (uint d = 0u; d < pc.head; d++) {
        float a = round_to_dtype(DT, uintBitsToFloat(LOAD(q, r.q_at + d)) * s);
        float b = round_to_dtype(DT, uintBitsToFloat(LOAD(kv, k_at + d)) * s);
        acc += a * b;
    }
    acc = round_to_dtype(DT, acc);
    if (SOFTCAP) {
        float t = round_to_dtype(DT, tanh(round_to_dtype(DT, acc / pc.softcap)));
        acc = round_to_dtype(DT, t * pc.softcap);
    }
    return acc;
}

// The softmax input: score plus bias, in the softmax's precision.
float logit(float score, float b) { return round_to_dtype(SOFTMAX_DT, round_to_dtype(DT, score + b)); }

// exp(x - max) of one logit; a row whose logits are all -inf takes max 0 (every term 0).
float softmax_term(float x, float m)
{
    return round_to_dtype(SOFTMAX_DT, exp(round_to_dtype(SOFTMAX_DT, x - (is_neg_inf(m) ? 0.0 : m))));
}

// Adds a term to the softmax's sum. bf16 sums round at every step, in key order, as the
// reference's NumPy (ml_dtypes) reduction does; wider sums are fp32 (NumPy sums halves in fp32).
float add_term(float sum, float term)
{
    return SOFTMAX_DT == DT_BF16 ? round_to_dtype(DT_BF16, sum + term) : sum + term;
}

// The probability, in the dtype; rows whose bias masks every key are 0 (not NaN), as the
// reference's fully-masked-row guard gives.
float probability(float term, float sum, bool any_key)
{
    return any_key ? round_to_dtype(DT, round_to_dtype(SOFTMAX_DT, term / sum)) : 0.0;
}
