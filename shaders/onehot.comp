#version 450
// OneHot: the output viewed as [outer, depth, inner] holds values[1] where the index at
// [outer, inner] equals the depth position (negative indices count from the end) and
// values[0] elsewhere.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint IDX_DT = DT_I32;

layout(std430, binding = 0) readonly buffer Indices { uint indices[]; };
layout(std430, binding = 1) readonly buffer Values { uint values[]; };
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push { uint count; uint depth; uint inner; } pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint r = i % pc.inner;
    uint t = i / pc.inner;
    int d = int(t % pc.depth);
    uint o = t / pc.depth;
    uint bits = indices[o * pc.inner + r];
    int idx = dt_is_float(IDX_DT) ? int(trunc(uintBitsToFloat(bits))) : int(bits);
    if (idx < 0) idx += int(pc.depth);
    y[i] = idx == d ? values[1] : values[0];
}
