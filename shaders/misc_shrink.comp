#version 450
// Shrink: y = x + bias where x < -lambd, x - bias where x > lambd, else 0.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push { uint count; float bias; float lambd; } pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    float v = as_float(DT, x[i]);
    float r = v < -pc.lambd ? v + pc.bias : v > pc.lambd ? v - pc.bias : 0.0;
    y[i] = from_float(DT, r);
}
