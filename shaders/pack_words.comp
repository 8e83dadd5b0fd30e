#version 450
// Copies up to three small values, 32-bit words each, one after another into one buffer, so
// that a kernel needing their contents binds one buffer (the Android Baseline 2022 limit is
// four per stage): out = in0[0..n0) ++ in1[0..n1) ++ in2[0..n2).
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer In0 { uint in0[]; };
layout(std430, binding = 1) readonly buffer In1 { uint in1[]; };
layout(std430, binding = 2) readonly buffer In2 { uint in2[]; };
layout(std430, binding = 3) writeonly buffer Out { uint result[]; };
layout(push_constant) uniform Push { uint n0, n1, n2; } pc;

void main()
{
    uint i = linear_id();
    if (i < pc.n0) result[i] = in0[i];
    else if (i < pc.n0 + pc.n1) result[i] = in1[i - pc.n0];
    else if (i < pc.n0 + pc.n1 + pc.n2) result[i] = in2[i - pc.n0 - pc.n1];
}
