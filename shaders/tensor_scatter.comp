#version 450
// TensorScatter as a gather: output element (prefix, s, inner) takes update[prefix, u, inner]
// when u = s - write_indices[batch] (circular: modulo max_len) lies in [0, seq_len), else
// past[prefix, s, inner]. 32-bit words, so one shader serves every dtype.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool CIRCULAR = false;

layout(std430, binding = 0) readonly buffer Past { uint past[]; };
layout(std430, binding = 1) readonly buffer Update { uint update[]; };
layout(std430, binding = 2) readonly buffer Indices { int write_indices[]; };
layout(std430, binding = 3) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count, inner, max_len, seq_len, per_batch, has_indices;
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint in_i = i % pc.inner, s = (i / pc.inner) % pc.max_len, prefix = i / (pc.inner * pc.max_len);
    int start = pc.has_indices != 0u ? write_indices[prefix / pc.per_batch] : 0;
    int u = int(s) - start;
    if (CIRCULAR) u = mod_floor(u, int(pc.max_len));
    if (u >= 0 && u < int(pc.seq_len)) y[i] = update[(prefix * pc.seq_len + uint(u)) * pc.inner + in_i];
    else y[i] = past[i];
}
