// Pointwise 2-D Conv (1x1 kernel, stride 1, no padding) for CPU Vulkan drivers: a GEMM
// Y[oc, pixel] = sum_ic W[oc, ic] * X[ic, pixel] per image. As in conv2d_cpu_packed.glsl, every
// storage-buffer load instruction costs a scalar load per SIMD lane on llvmpipe, so both
// operands are read as vec4: W repacked at plan time to [block of OCB channels][ic][OCB], and
// X, Y as 4 consecutive pixels (conv_cpu.c takes this kernel only when a plane is a multiple of 4
// pixels). An invocation computes OCB output channels x PXB pixels.
#include "storage_vec4.glsl"

#include "fused_act.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 8) const uint OCB = 16u; // output channels per invocation, a multiple of 4
layout(constant_id = 9) const uint PXB = 8u; // pixels per invocation, a multiple of 4
layout(constant_id = 10) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)

const uint OCB4 = OCB / 4u, PX4 = PXB / 4u;

layout(std430, binding = 0) readonly buffer X { ELEM4 x[]; };
layout(std430, binding = 1) readonly buffer W { ELEM4 w[]; };
layout(std430, binding = 2) readonly buffer B { ELEM b[]; };
layout(std430, binding = 3) writeonly buffer Y { ELEM4 y[]; };
layout(push_constant) uniform Push {
    uint columns; // batch * ceil(plane / PXB): the invocations needed
    uint cin, cin_g, cout, cout_g;
    uint has_bias;
    int IH, IW, OH, OW, PH, PW;
    float lo, hi; // ACT's bounds (a clamp's)
} pc;

void main()
{
    uint g = gl_WorkGroupID.z;
    uint block = gl_WorkGroupID.y;
    uint blocks = (pc.cout_g + OCB - 1u) / OCB;
    uint plane4 = uint(pc.OH * pc.OW) / 4u;
    uint col_per_image = (plane4 + PX4 - 1u) / PX4;
    // Invocations past the end compute the last column again and store nothing.
    uint column = min(gl_GlobalInvocationID.x, pc.columns - 1u);
    uint n = column / col_per_image;
    uint q0 = (column % col_per_image) * PX4; // in vec4s of pixels
    uint x_base = (n * pc.cin + g * pc.cin_g) * plane4 + q0;
    uint w_base = (g * blocks + block) * pc.cin_g * OCB4;

    vec4 acc[OCB][PX4];
    for (uint o = 0u; o < OCB; o++)
        for (uint q = 0u; q < PX4; q++) acc[o][q] = vec4(0.0);

    for (uint ic = 0u; ic < pc.cin_g; ic++) {
        // a column's tail past the plane reads the next plane (or 0 past the buffer): unused
        vec4 xv[PX4];
        for (uint q = 0u; q < PX4; q++) xv[q] = LOAD4(x, x_base + ic * plane4 + q);
        for (uint i = 0u; i < OCB4; i++) {
            vec4 wv = LOAD4(w, w_base + ic * OCB4 + i);
            for (uint q = 0u; q < PX4; q++) {
                acc[4u * i][q] += wv.x * xv[q];
                acc[4u * i + 1u][q] += wv.y * xv[q];
                acc[4u * i + 2u][q] += wv.z * xv[q];
                acc[4u * i + 3u][q] += wv.w * xv[q];
            }
        }
    }

    if (gl_GlobalInvocationID.x >= pc.columns) return;
    for (uint o = 0u; o < OCB; o++) {
        uint oc = block * OCB + o;
        if (oc >= pc.cout_g) continue;
        uint c = g * pc.cout_g + oc;
        float bias = pc.has_bias != 0u ? uintBitsToFloat(LOAD(b, c)) : 0.0;
        for (uint q = 0u; q < PX4; q++) {
            if (q0 + q >= plane4) continue;
            vec4 v = acc[o][q] + bias;
            if (ACT == 1u) v = min(max(v, vec4(pc.lo)), vec4(pc.hi));
            else if (ACT != 0u)
                for (uint l = 0u; l < 4u; l++) v[l] = fused_act(ACT, v[l], pc.lo, pc.hi);
            if (DT != DT_F32)
                for (uint l = 0u; l < 4u; l++) v[l] = round_to_dtype(DT, v[l]);
            STORE4(y, (n * pc.cout + c) * plane4 + q0 + q, v);
        }
    }
}
