#version 450
// NonZero's output [rank, count] once the flat positions are known: y[r, j] is coordinate r
// of positions[j] in x's shape (int64 held as int32 words).
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Positions { int positions[]; };
layout(std430, binding = 1) writeonly buffer Y { int y[]; };
layout(push_constant) uniform Push { uint total, count, rank, unused; uint dims[8]; } pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.total) return;
    uint j = i % pc.count, r = i / pc.count, stride = 1u;
    for (uint k = r + 1u; k < pc.rank; k++) stride *= pc.dims[k];
    y[i] = int((uint(positions[j]) / stride) % pc.dims[r]);
}
