#version 450
// Compress's output once its positions are known: y[o, j, k] = x[o, positions[j], k] over
// [outer, count, inner] (x is [outer, len, inner]). 32-bit words, so every dtype.
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer Positions { int positions[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push { uint total, count, len, inner; } pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.total) return;
    uint k = i % pc.inner, j = (i / pc.inner) % pc.count, o = i / (pc.inner * pc.count);
    y[i] = x[(o * pc.len + uint(positions[j])) * pc.inner + k];
}
