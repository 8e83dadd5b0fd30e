#version 450
#extension GL_EXT_samplerless_texture_functions : require
// binary_chain (r = a OP1 b, then r OP2 c, then an activation), and a lone Add, Sub, Mul or Div
// (binary's), of float32 words for CPU Vulkan drivers (lavapipe): the same steps and rounding as binary_chain.glsl, but an invocation
// computes 4 consecutive outputs of one innermost row (src/ops/binary.c takes it where that
// row's length and the count are multiples of 4): one broadcast index (its integer divisions
// run a lane at a time on llvmpipe) for 4 elements, the inputs read through texel buffers of
// words (a gather for all lanes, where a storage-buffer load is a loop over them) and the
// results stored as one uvec4 (one loop over the lanes for 4 values). The FiLM step of the 1-D
// U-Net policy (x * scale + shift over [2, 32, 16]) took 20-30 us on binary_chain.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP1 = 0u; // keep in step with src/ops/binary.c (B_ADD..B_DIV)
layout(constant_id = 2) const uint OP2 = 0u; // 4: no second step (a lone Add, Sub, Mul or Div; c unread)
layout(constant_id = 3) const uint SWAP2 = 0u; // 0: r OP2 c; 1: c OP2 r; 2: r OP2 r (c unread)
layout(constant_id = 4) const uint OUT_DT = 0u;
layout(constant_id = 5) const uint RANK = 0u;
layout(constant_id = 6) const bool CLAMP = false;
layout(constant_id = 7) const float LO = 0.0;
layout(constant_id = 8) const float HI = 0.0;
layout(constant_id = 9) const bool GRID_STRIDE = false; // unused: an invocation per 4 outputs
#include "broadcast.glsl"

layout(binding = 0) uniform utextureBuffer A;
layout(binding = 1) uniform utextureBuffer B;
layout(binding = 2) uniform utextureBuffer C;
layout(std430, binding = 3) writeonly buffer Out { uvec4 result4[]; };

#include "binary_combine.glsl"

void main()
{
    uint i = 4u * linear_id();
    if (i >= pc.count) return;
    uvec3 offset = broadcast_offsets(i);
    // along the innermost dim each input moves by its stride there (0 where it is broadcast)
    uint j = RANK == 0u ? 0u : RANK - 1u;
    uvec3 step = RANK == 0u ? uvec3(1u)
                            : uvec3(pc.strides[j], pc.strides[BROADCAST_MAX_RANK + j], pc.strides[2 * BROADCAST_MAX_RANK + j]);
    uvec4 o;
    [[unroll]] for (uint l = 0u; l < 4u; l++) {
        uvec3 at = offset + l * step;
        float a = uintBitsToFloat(texelFetch(A, int(at.x)).x), b = uintBitsToFloat(texelFetch(B, int(at.y)).x);
        float c = SWAP2 == 2u || OP2 == 4u ? 0.0 : uintBitsToFloat(texelFetch(C, int(at.z)).x);
        float r = round_to_dtype(OUT_DT, combine(OP1, a, b));
        if (OP2 < 4u) r = SWAP2 == 2u ? combine(OP2, r, r) : SWAP2 == 1u ? combine(OP2, c, r) : combine(OP2, r, c);
        o[l] = floatBitsToUint(round_to_dtype(OUT_DT, fused_clamp(CLAMP, r, LO, HI)));
    }
    result4[i / 4u] = o;
}
