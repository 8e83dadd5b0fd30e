// Attention's keys or values: past (4-D, [B, heads, past, D]) then the new ones (3-D
// [B, S, heads * D] or 4-D [B, heads, S, D]) along the sequence, written into their half of the
// packed kv[b][head][key][0, width) that attention.glsl reads (at column `column`) and, with
// PRESENT, into present_key / present_value ([B, heads, past + S, D]). One invocation per
// element.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool NEW_3D = false;
layout(constant_id = 2) const bool PRESENT = false;

layout(std430, binding = 0) readonly buffer Past { ELEM past[]; };
layout(std430, binding = 1) readonly buffer New { ELEM src[]; };
layout(std430, binding = 2) writeonly buffer KV { ELEM kv[]; };
layout(std430, binding = 3) writeonly buffer Present { ELEM present[]; };
layout(push_constant) uniform Push { uint count; uint heads; uint past_len; uint new_len; uint dim; uint width; uint column; } pc;

void main()
{
    uint e = linear_id();
    if (e >= pc.count) return;
    uint len = pc.past_len + pc.new_len;
    uint d = e % pc.dim, j = (e / pc.dim) % len, bh = e / (pc.dim * len);
    uint w;
    if (j < pc.past_len) {
        w = LOAD(past, (bh * pc.past_len + j) * pc.dim + d);
    } else {
        uint s = j - pc.past_len, b = bh / pc.heads, h = bh % pc.heads;
        w = LOAD(src, NEW_3D ? ((b * pc.new_len + s) * pc.heads + h) * pc.dim + d : (bh * pc.new_len + s) * pc.dim + d);
    }
    STORE(kv, (bh * len + j) * pc.width + pc.column + d, w);
    if (PRESENT) STORE(present, e, w);
}
