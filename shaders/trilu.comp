#version 450
// Trilu: keeps the upper (col - row >= k) or lower (col - row <= k) triangle of each matrix
// in the last two dimensions and zeroes the rest (0 bits are 0 for every dtype). k comes from
// the push constants, or from binding 1 when it is only known at run time.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool UPPER = true;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) readonly buffer K { int k_value[]; };
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push { uint count; uint rows; uint cols; int k; uint k_from_buffer; } pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    int col = int(i % pc.cols);
    int row = int((i / pc.cols) % pc.rows);
    int k = pc.k_from_buffer != 0u ? k_value[0] : pc.k;
    bool keep = UPPER ? col - row >= k : col - row <= k;
    y[i] = keep ? x[i] : 0u;
}
