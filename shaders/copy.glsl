// Strided copy, the data movement behind Transpose, Concat, Slice, Split, Expand, Tile,
// DepthToSpace and SpaceToDepth. Element i of a region (row-major over dims) moves from
// in[in_base + sum idx_k * in_stride_k] to out[out_base + sum idx_k * out_stride_k]. A stride
// of 0 broadcasts, a negative one walks backwards. Elements are moved as they lie, never
// converted: COPY_ELEM is a 32-bit word (copy), a 16-bit one (copy_16: f16, bf16,
// int16, uint16) or a byte (copy_8: int8, uint8, bool), so one body serves every dtype.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int RANK = 1; // of the region after collapsing, 1..8
layout(constant_id = 2) const bool GRID_STRIDE = false; // common.glsl's ELEMENTWISE_MAIN

layout(std430, binding = 0) readonly buffer In { COPY_ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Out { COPY_ELEM y[]; };
layout(push_constant) uniform Push {
    uint count;
    int in_base;
    int out_base;
    uint unused;
    uint dims[8];
    int in_strides[8];
    int out_strides[8];
} pc;

void element(uint i)
{
    int src = pc.in_base, dst = pc.out_base;
    uint rest = i;
    for (int k = RANK - 1; k >= 0; k--) {
        uint idx = rest % pc.dims[k];
        rest /= pc.dims[k];
        src += int(idx) * pc.in_strides[k];
        dst += int(idx) * pc.out_strides[k];
    }
    y[dst] = x[src];
}

ELEMENTWISE_MAIN(pc.count, element)
