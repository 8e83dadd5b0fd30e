// 2-D Conv for CPU Vulkan drivers (llvmpipe/lavapipe), which run a workgroup's invocations as
// the SIMD lanes of one CPU thread. There, a load whose address is the same in every lane is
// one scalar load, while any other load costs a load per lane; shared memory and barriers are
// expensive. So: no shared memory, lanes take consecutive output pixels (the input loads),
// and the workgroup's block of OCB output channels is uniform (gl_WorkGroupID.y), so that
// each invocation holds OCB x PXB accumulators: every input load serves OCB channels and every
// weight load PXB pixels. Pixel j of an invocation is tile + j * LX + lane.

#include "fused_act.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
#include "conv_window.glsl" // KH, KW, SH, SW, DH, DW: constants 2-7
layout(constant_id = 8) const uint OCB = 8u; // output channels per invocation
layout(constant_id = 9) const uint PXB = 4u; // output pixels per invocation
layout(constant_id = 10) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)
layout(constant_id = 11) const bool PADDED = true; // some window may leave the input

layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) readonly buffer W { ELEM w[]; };
layout(std430, binding = 2) readonly buffer B { ELEM b[]; };
layout(std430, binding = 3) writeonly buffer Y { ELEM y[]; };
layout(push_constant) uniform Push {
    uint pixels; // batch * OH * OW
    uint cin, cin_g, cout, cout_g;
    uint has_bias;
    int IH, IW, OH, OW, PH, PW;
    float lo, hi; // ACT's bounds (a clamp's)
} pc;

void main()
{
    uint g = gl_WorkGroupID.z;
    uint oc0 = gl_WorkGroupID.y * OCB;
    uint tile = gl_WorkGroupID.x * gl_WorkGroupSize.x * PXB + gl_LocalInvocationID.x;
    uint out_plane = uint(pc.OH * pc.OW), in_plane = uint(pc.IH * pc.IW);
    const uint KHW = uint(KH * KW);
    uint K = pc.cin_g * KHW;

    // Per pixel: the top-left input offset of its window (may lie outside when padded).
    // Pixels past the end compute the last pixel again and are not stored.
    int base[PXB], ih0[PXB], iw0[PXB];
    for (uint j = 0u; j < PXB; j++) {
        uint p = min(tile + j * gl_WorkGroupSize.x, pc.pixels - 1u);
        uint n = p / out_plane, q = p % out_plane;
        ih0[j] = int(q) / pc.OW * SH - pc.PH;
        iw0[j] = int(q) % pc.OW * SW - pc.PW;
        base[j] = int((n * pc.cin + g * pc.cin_g) * in_plane) + ih0[j] * pc.IW + iw0[j];
    }
    // Weight rows of the block; channels past the end repeat the last one (never stored).
    uint wrow[OCB];
    for (uint i = 0u; i < OCB; i++) wrow[i] = (g * pc.cout_g + min(oc0 + i, pc.cout_g - 1u)) * K;

    float acc[OCB][PXB];
    for (uint i = 0u; i < OCB; i++)
        for (uint j = 0u; j < PXB; j++) acc[i][j] = 0.0;

    for (uint ic = 0u; ic < pc.cin_g; ic++) {
        int plane = int(ic * in_plane);
        uint wk = ic * KHW;
        for (int kh = 0; kh < KH; kh++) {
            for (int kw = 0; kw < KW; kw++) {
                float xv[PXB];
                for (uint j = 0u; j < PXB; j++) {
                    int off = base[j] + plane + kh * DH * pc.IW + kw * DW;
                    if (PADDED) {
                        int ih = ih0[j] + kh * DH, iw = iw0[j] + kw * DW;
                        bool inside = ih >= 0 && ih < pc.IH && iw >= 0 && iw < pc.IW;
                        float v = uintBitsToFloat(LOAD(x, inside ? off : 0));
                        xv[j] = inside ? v : 0.0;
                    } else {
                        xv[j] = uintBitsToFloat(LOAD(x, off));
                    }
                }
                uint r = wk + uint(kh * KW + kw);
                for (uint i = 0u; i < OCB; i++) {
                    float wv = uintBitsToFloat(LOAD(w, wrow[i] + r));
                    for (uint j = 0u; j < PXB; j++) acc[i][j] += wv * xv[j];
                }
            }
        }
    }

    for (uint i = 0u; i < OCB; i++) {
        uint c = g * pc.cout_g + min(oc0 + i, pc.cout_g - 1u);
        float bias = uintBitsToFloat(LOAD(b, c));
        if (pc.has_bias == 0u) bias = 0.0;
        for (uint j = 0u; j < PXB; j++) {
            uint p = tile + j * gl_WorkGroupSize.x;
            if (p >= pc.pixels || oc0 + i >= pc.cout_g) continue;
            uint n = p / out_plane, q = p % out_plane;
            float v = acc[i][j] + bias;
            v = round_to_dtype(DT, fused_act(ACT, v, pc.lo, pc.hi));
            STORE(y, (n * pc.cout + c) * out_plane + q, floatBitsToUint(v));
        }
    }
}
