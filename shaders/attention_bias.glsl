// Attention's additive bias [B', H', S', kv_len] (dims of 1 where it broadcasts), fp32: the
// attn_mask (bool: 0 or -inf; numbers: their value), padded with -inf past its last dim;
// with NONPAD, -inf for keys at or past nonpad_kv_seqlen[b], and the causal and window
// frontiers at that batch's offset nonpad_kv_seqlen[b] - q_len. One invocation per element.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MASK = 0u; // 0 none, 1 bool, 2 float (fp32 words), 3 integer
layout(constant_id = 2) const bool NONPAD = false;
layout(constant_id = 3) const bool CAUSAL = false;
layout(constant_id = 4) const bool WINDOW = false;

layout(std430, binding = 0) readonly buffer Mask { uint mask[]; };
layout(std430, binding = 1) readonly buffer Nonpad { int nonpad[]; }; // int64 held as int32 words
layout(std430, binding = 2) writeonly buffer Bias { float bias[]; };
layout(push_constant) uniform Push {
    uint count; uint heads; uint q_len; uint kv_len; // the bias's dims 1-3
    uint mask_len; uint mask_b; uint mask_h; uint mask_q; // mask's last dim and element strides
    uint full_q_len; int left; int right;
} pc;

#define NEG_INF uintBitsToFloat(0xff800000u)

void main()
{
    uint e = linear_id();
    if (e >= pc.count) return;
    uint j = e % pc.kv_len, i = (e / pc.kv_len) % pc.q_len, h = (e / (pc.kv_len * pc.q_len)) % pc.heads;
    uint b = e / (pc.kv_len * pc.q_len * pc.heads);
    float v = 0.0;
    if (MASK != 0u) {
        if (j >= pc.mask_len) {
            v = NEG_INF;
        } else {
            uint w = mask[b * pc.mask_b + h * pc.mask_h + i * pc.mask_q + j];
            v = MASK == 1u ? (w != 0u ? 0.0 : NEG_INF) : MASK == 2u ? uintBitsToFloat(w) : float(int(w));
        }
    }
    if (NONPAD) {
        int valid = nonpad[b];
        if (int(j) >= valid) v += NEG_INF;
        int diff = int(i) + valid - int(pc.full_q_len) - int(j);
        if (CAUSAL && diff < 0) v += NEG_INF;
        if (WINDOW && ((pc.left >= 0 && diff > pc.left) || (pc.right >= 0 && -diff > pc.right))) v += NEG_INF;
    }
    bias[e] = v;
}
