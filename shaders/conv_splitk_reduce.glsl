// Finishes a split-K Conv (conv2d_gemm.glsl with SPLIT_K > 1): Y = sum of the partial sums
// + bias, rounded to the output dtype. The partial sums are fp32 words in every variant.

#include "fused_act.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)

layout(std430, binding = 0) readonly buffer Partial { uint partial[]; };
layout(std430, binding = 1) readonly buffer B { ELEM b[]; };
layout(std430, binding = 2) writeonly buffer Y { ELEM y[]; };
layout(push_constant) uniform Push { uint count, out_plane, cout, splits, has_bias; float lo, hi; } pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    float v = pc.has_bias != 0u ? uintBitsToFloat(LOAD(b, (i / pc.out_plane) % pc.cout)) : 0.0;
    for (uint s = 0u; s < pc.splits; s++) v += uintBitsToFloat(partial[s * pc.count + i]);
    STORE(y, i, floatBitsToUint(round_to_dtype(DT, fused_act(ACT, v, pc.lo, pc.hi))));
}
