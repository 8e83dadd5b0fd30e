#version 450
// Fills the output with one 32-bit value (ConstantOfShape of large shapes).
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push { uint count; uint value; } pc;

void main()
{
    uint i = linear_id();
    if (i < pc.count) y[i] = pc.value;
}
