#version 450
// ScatterElements as a gather: each output element starts from data and applies, in index
// order, every update whose index along the axis points at it. No atomics, and duplicate
// indices reduce in the same order as the reference.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int RANK = 1;
layout(constant_id = 2) const uint DT = DT_F32;
layout(constant_id = 3) const uint REDUCTION = 0u; // 0 none, 1 add, 2 mul, 3 max, 4 min

layout(std430, binding = 0) readonly buffer Data { uint x[]; };
layout(std430, binding = 1) readonly buffer Indices { int indices[]; };
layout(std430, binding = 2) readonly buffer Updates { uint updates[]; };
layout(std430, binding = 3) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count;
    int axis;
    int n_along_axis; // indices' size along the axis
    uint unused;
    int data_dims[8];
    int idx_dims[8];
    int idx_strides[8];
} pc;

uint reduce_bits(uint acc, uint u)
{
    if (REDUCTION == 0u) return u;
    if (dt_is_float(DT)) {
        float a = uintBitsToFloat(acc), b = uintBitsToFloat(u);
        float r = REDUCTION == 1u ? a + b : REDUCTION == 2u ? a * b : REDUCTION == 3u ? max(a, b) : min(a, b);
        return floatBitsToUint(round_to_dtype(DT, r));
    }
    int a = int(acc), b = int(u);
    int r = REDUCTION == 1u ? a + b : REDUCTION == 2u ? a * b : REDUCTION == 3u ? max(a, b) : min(a, b);
    return uint(wrap_to_dtype(DT, r));
}

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint v = x[i];
    // coordinates of the output element; the base offset of its line in the indices
    uint rest = i;
    int target = 0, line = 0;
    bool covered = true;
    for (int k = RANK - 1; k >= 0; k--) {
        int coord = int(rest % uint(pc.data_dims[k]));
        rest /= uint(pc.data_dims[k]);
        if (k == pc.axis) target = coord;
        else if (coord >= pc.idx_dims[k]) covered = false;
        else line += coord * pc.idx_strides[k];
    }
    if (covered) {
        int n = pc.data_dims[pc.axis], step = pc.idx_strides[pc.axis];
        for (int j = 0; j < pc.n_along_axis; j++) {
            int off = line + j * step;
            int idx = indices[off];
            if (idx < 0) idx += n;
            if (idx == target) v = reduce_bits(v, updates[off]);
        }
    }
    y[i] = v;
}
