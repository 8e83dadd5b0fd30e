#version 450
// MaxUnpool in two dispatches: SCATTER = false zeroes the output, SCATTER = true writes every
// input value at its index. An index counts in the flattened shape the unpooling infers; an
// explicit, larger output_shape keeps each element's coordinates (as onnxruntime does).
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool SCATTER = false;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) readonly buffer Indices { int indices[]; };
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count;
    uint out_count;
    uint rank;
    uint unused;
    uint inferred[8]; // the shape the indices count in
    uint dims[8];     // the output's shape
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    if (!SCATTER) {
        y[i] = 0u; // 0.0 and integer 0 share their bits
        return;
    }
    int at = indices[i];
    if (at < 0) return;
    uint rest = uint(at), dst = 0u, stride = 1u;
    for (int k = int(pc.rank) - 1; k >= 0; k--) {
        dst += (rest % pc.inferred[k]) * stride;
        rest /= pc.inferred[k];
        stride *= pc.dims[k];
    }
    if (rest == 0u) y[dst] = x[i]; // indices past the inferred shape are dropped
}
