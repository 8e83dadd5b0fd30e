// Numpy broadcasting for element-wise shaders. The host (src/ops/binary.c) collapses the
// output shape to at most 6 dimensions and passes, for each input, the element stride of
// every dimension (0 where that input is broadcast). The includer declares RANK (a
// specialization constant): 0 means every input has the output's shape (no index math).

#define BROADCAST_MAX_RANK 6

layout(push_constant, std430) uniform Push {
    uint count;   // output elements
    float param;  // op parameter (Mean: the input count)
    uint dims[BROADCAST_MAX_RANK];
    uint strides[3 * BROADCAST_MAX_RANK]; // input k, dimension j at [k * 6 + j]
    uint base[3]; // input k's first element (a strided Slice read in place; 0 otherwise)
} pc;

// Element offsets of up to three inputs for output element i.
uvec3 broadcast_offsets(uint i)
{
    uvec3 base = uvec3(pc.base[0], pc.base[1], pc.base[2]);
    if (RANK == 0u) return uvec3(i) + base;
    uvec3 offset = uvec3(0u);
    for (uint j = RANK - 1u; j > 0u; j--) {
        uint coord = i % pc.dims[j];
        i /= pc.dims[j];
        offset += coord * uvec3(pc.strides[j], pc.strides[BROADCAST_MAX_RANK + j], pc.strides[2 * BROADCAST_MAX_RANK + j]);
    }
    return base + offset + i * uvec3(pc.strides[0], pc.strides[BROADCAST_MAX_RANK], pc.strides[2 * BROADCAST_MAX_RANK]);
}
