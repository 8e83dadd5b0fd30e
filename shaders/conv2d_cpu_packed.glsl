// 2-D Conv for CPU Vulkan drivers with weights repacked at plan time (conv_cpu.c) into
// [group][block of OCB output channels][k = (ic, kh, kw)][OCB], so that the OCB weights of one
// k are OCB/4 vec4 loads. On llvmpipe every storage-buffer load instruction costs a scalar
// load per SIMD lane, whatever its address, so the kernel is built to issue few of them: an
// invocation computes OCB output channels x PXB consecutive output pixels of one row, and per
// (ic, kh) loads the input row span that its PXB windows cover once, reusing each value for
// every tap and output channel it feeds. No shared memory, no barriers.
#include "storage_vec4.glsl"

#include "fused_act.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
#include "conv_window.glsl" // KH, KW, SH, SW, DH, DW: constants 2-7
layout(constant_id = 8) const uint OCB = 8u; // output channels per invocation, a multiple of 4
layout(constant_id = 9) const int PXB = 4; // consecutive output pixels of a row per invocation
layout(constant_id = 10) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)
layout(constant_id = 11) const bool PADDED = true; // some window may leave the input

const int SPAN = (PXB - 1) * SW + (KW - 1) * DW + 1; // input columns under PXB windows
const uint OCB4 = OCB / 4u;

layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) readonly buffer W { ELEM4 w[]; };
layout(std430, binding = 2) readonly buffer B { ELEM b[]; };
layout(std430, binding = 3) writeonly buffer Y { ELEM y[]; };
layout(push_constant) uniform Push {
    uint columns; // batch * OH * ceil(OW / PXB): the invocations needed
    uint cin, cin_g, cout, cout_g;
    uint has_bias;
    int IH, IW, OH, OW, PH, PW;
    float lo, hi; // ACT's bounds (a clamp's)
} pc;

void main()
{
    uint g = gl_WorkGroupID.z;
    uint block = gl_WorkGroupID.y;
    uint oc0 = block * OCB;
    uint blocks = (pc.cout_g + OCB - 1u) / OCB;
    // Invocations past the end compute the last column again and store nothing.
    uint column = min(gl_GlobalInvocationID.x, pc.columns - 1u);
    uint col_per_row = uint((pc.OW + PXB - 1) / PXB);
    int ow0 = int(column % col_per_row) * PXB;
    uint row = column / col_per_row;
    int oh = int(row % uint(pc.OH));
    uint n = row / uint(pc.OH);
    uint in_plane = uint(pc.IH * pc.IW), out_plane = uint(pc.OH * pc.OW);
    const int KHW = KH * KW;
    int ih0 = oh * SH - pc.PH, iw0 = ow0 * SW - pc.PW;
    uint x_base = (n * pc.cin + g * pc.cin_g) * in_plane;
    uint w_base = (g * blocks + block) * pc.cin_g * uint(KHW) * OCB4;

    vec4 acc[OCB4][PXB];
    for (uint i = 0u; i < OCB4; i++)
        for (int j = 0; j < PXB; j++) acc[i][j] = vec4(0.0);

    for (uint ic = 0u; ic < pc.cin_g; ic++) {
        for (int kh = 0; kh < KH; kh++) {
            int ih = ih0 + kh * DH;
            bool row_inside = ih >= 0 && ih < pc.IH;
            int row_off = int(x_base + ic * in_plane) + ih * pc.IW + iw0;
            float xs[SPAN];
            for (int e = 0; e < SPAN; e++) {
                if (PADDED) {
                    bool inside = row_inside && iw0 + e >= 0 && iw0 + e < pc.IW;
                    float v = uintBitsToFloat(LOAD(x, inside ? row_off + e : 0));
                    xs[e] = inside ? v : 0.0;
                } else {
                    xs[e] = uintBitsToFloat(LOAD(x, row_off + e));
                }
            }
            uint wk = w_base + (ic * uint(KHW) + uint(kh * KW)) * OCB4;
            for (int kw = 0; kw < KW; kw++) {
                for (uint i = 0u; i < OCB4; i++) {
                    vec4 wv = LOAD4(w, wk + uint(kw) * OCB4 + i);
                    for (int j = 0; j < PXB; j++) acc[i][j] += wv * xs[j * SW + kw * DW];
                }
            }
        }
    }

    if (gl_GlobalInvocationID.x >= pc.columns) return;
    for (uint i = 0u; i < OCB4; i++) {
        for (uint l = 0u; l < 4u; l++) {
            uint oc = oc0 + 4u * i + l;
            if (oc >= pc.cout_g) continue;
            uint c = g * pc.cout_g + oc;
            float bias = pc.has_bias != 0u ? uintBitsToFloat(LOAD(b, c)) : 0.0;
            uint y_row = (n * pc.cout + c) * out_plane + uint(oh * pc.OW);
            for (int j = 0; j < PXB; j++) {
                if (ow0 + j >= pc.OW) continue;
                float v = acc[i][j][l] + bias;
                STORE(y, y_row + uint(ow0 + j), floatBitsToUint(round_to_dtype(DT, fused_act(ACT, v, pc.lo, pc.hi))));
            }
        }
    }
}
