#version 450
// GatherElements: out[p] = data[p with p[axis] replaced by indices[p]], for every position p
// of the indices. Negative indices count from the end; out-of-range ones are clamped.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int RANK = 1;

layout(std430, binding = 0) readonly buffer Data { uint x[]; };
layout(std430, binding = 1) readonly buffer Indices { int indices[]; };
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count;
    int axis;
    int axis_dim;
    uint unused;
    uint dims[8];         // of the indices (= of the output)
    int data_strides[8];
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    int idx = indices[i];
    if (idx < 0) idx += pc.axis_dim;
    idx = clamp(idx, 0, pc.axis_dim - 1);
    int src = 0;
    uint rest = i;
    for (int k = RANK - 1; k >= 0; k--) {
        int coord = int(rest % pc.dims[k]);
        rest /= pc.dims[k];
        src += (k == pc.axis ? idx : coord) * pc.data_strides[k];
    }
    y[i] = x[src];
}
