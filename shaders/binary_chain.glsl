// Two element-wise steps of floats in one pass, with numpy broadcasting: r = a OP1 b, then
// r OP2 c (or c OP2 r, or r OP2 r: SWAP2), then an activation (common.glsl's fused_clamp): a
// Mul whose only reader is an Add, Sub, Mul or Div of a value already known (FiLM's x * scale +
// shift, ConvNeXt's layer scale then residual), or of the result itself (a square). src/ops/binary.c plans it from the first node. Each
// step rounds to the output dtype, as the two nodes would; arithmetic is fp32.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP1 = 0u; // keep in step with src/ops/binary.c (B_ADD..B_DIV)
layout(constant_id = 2) const uint OP2 = 0u;
// 0: r OP2 c; 1: c OP2 r; 2: r OP2 r (the second node reads the first's result twice: a
// square, (x - mean)^2 of a variance; c unread)
layout(constant_id = 3) const uint SWAP2 = 0u;
layout(constant_id = 4) const uint OUT_DT = 0u;
layout(constant_id = 5) const uint RANK = 0u;
layout(constant_id = 6) const bool CLAMP = false;
layout(constant_id = 7) const float LO = 0.0;
layout(constant_id = 8) const float HI = 0.0;
layout(constant_id = 9) const bool GRID_STRIDE = false; // common.glsl's ELEMENTWISE_MAIN
#include "broadcast.glsl"

layout(std430, binding = 0) readonly buffer A { ELEM a_data[]; };
layout(std430, binding = 1) readonly buffer B { ELEM b_data[]; };
layout(std430, binding = 2) readonly buffer C { ELEM c_data[]; };
layout(std430, binding = 3) writeonly buffer Out { ELEM result[]; };

#include "binary_combine.glsl"

void element(uint i)
{
    uvec3 offset = broadcast_offsets(i);
    float a = uintBitsToFloat(LOAD(a_data, offset.x)), b = uintBitsToFloat(LOAD(b_data, offset.y));
    float c = uintBitsToFloat(LOAD(c_data, offset.z));
    float r = round_to_dtype(OUT_DT, combine(OP1, a, b));
    r = SWAP2 == 2u ? combine(OP2, r, r) : SWAP2 == 1u ? combine(OP2, c, r) : combine(OP2, r, c);
    STORE(result, i, floatBitsToUint(round_to_dtype(OUT_DT, fused_clamp(CLAMP, r, LO, HI))));
}

ELEMENTWISE_MAIN(pc.count, element)
