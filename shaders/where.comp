#version 450
// Where with numpy broadcasting: out = cond ? x : y. X and Y share a dtype, so the 32-bit
// storage form is copied unchanged.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint RANK = 0u;
#include "common.glsl"
#include "broadcast.glsl"

layout(std430, binding = 0) readonly buffer Cond { uint cond[]; };
layout(std430, binding = 1) readonly buffer X { uint x[]; };
layout(std430, binding = 2) readonly buffer Y { uint y[]; };
layout(std430, binding = 3) writeonly buffer Out { uint result[]; };

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uvec3 offset = broadcast_offsets(i);
    result[i] = cond[offset.x] != 0u ? x[offset.y] : y[offset.z];
}
