// Depthwise 2-D Conv (one input channel per group, any channel multiplier) for CPU Vulkan
// drivers: the channel is uniform (gl_WorkGroupID.y) and an invocation computes PXB consecutive
// output pixels of one row, loading per kernel row the input span its windows cover once, since
// on llvmpipe every storage-buffer load instruction costs a scalar load per SIMD lane.

#include "fused_act.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
#include "conv_window.glsl" // KH, KW, SH, SW, DH, DW: constants 2-7
layout(constant_id = 9) const int PXB = 8; // consecutive output pixels of a row per invocation
layout(constant_id = 10) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)
layout(constant_id = 11) const bool PADDED = true; // some window may leave the input
// the _tx variant: OW and OH * OW multiples of 4 (so every run of 4 outputs starts on 16
// bytes): 4 outputs as one uvec4 store (llvmpipe stores a lane at a time)
layout(constant_id = 12) const bool VEC4_Y = false;
// output rows per invocation: each input row's span is loaded once for every output row whose
// window covers it (stride 1, 3x3: 2 rows read 4 input rows where two invocations read 6)
layout(constant_id = 13) const int OHB = 1;

const int SPAN = (PXB - 1) * SW + (KW - 1) * DW + 1; // input columns under PXB windows

#ifdef DEPTHWISE_TEXEL_X
layout(binding = 0) uniform utextureBuffer X; // 32-bit words (conv2d_cpu_depthwise_tx), W too
#define LOAD_X(i) texelFetch(X, int(i)).x
layout(binding = 1) uniform utextureBuffer W;
#define LOAD_W(i) texelFetch(W, int(i)).x
#else
layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
#define LOAD_X(i) LOAD(x, i)
layout(std430, binding = 1) readonly buffer W { ELEM w[]; };
#define LOAD_W(i) LOAD(w, i)
#endif
layout(std430, binding = 2) readonly buffer B { ELEM b[]; };
layout(std430, binding = 3) writeonly buffer Y { ELEM y[]; };
#ifdef DEPTHWISE_TEXEL_X
layout(std430, binding = 3) writeonly buffer Y4 { uvec4 y4[]; };
#endif
layout(push_constant) uniform Push {
    uint columns; // batch * OH * ceil(OW / PXB): the invocations needed
    uint cin, cin_g, cout, cout_g; // cin_g = 1, cout_g = the channel multiplier
    uint has_bias;
    int IH, IW, OH, OW, PH, PW;
    float lo, hi; // ACT's bounds (a clamp's)
} pc;

void main()
{
    uint oc = gl_WorkGroupID.y;
    // Invocations past the end compute the last column again and store nothing.
    uint column = min(gl_GlobalInvocationID.x, pc.columns - 1u);
    uint col_per_row = uint((pc.OW + PXB - 1) / PXB), row_blocks = uint((pc.OH + OHB - 1) / OHB);
    int ow0 = int(column % col_per_row) * PXB;
    uint row = column / col_per_row;
    int oh0 = int(row % row_blocks) * OHB;
    uint n = row / row_blocks;
    int ih0 = oh0 * SH - pc.PH, iw0 = ow0 * SW - pc.PW;
    uint x_base = (n * pc.cin + oc / pc.cout_g) * uint(pc.IH * pc.IW);

    float acc[OHB][PXB];
    for (int r = 0; r < OHB; r++)
        for (int j = 0; j < PXB; j++) acc[r][j] = 0.0;
    const int IR = (OHB - 1) * SH + (KH - 1) * DH + 1; // input rows under the OHB output rows
    for (int ir = 0; ir < IR; ir++) {
        int ih = ih0 + ir;
        bool row_inside = ih >= 0 && ih < pc.IH;
        int row_off = int(x_base) + ih * pc.IW + iw0;
        float xs[SPAN];
        for (int e = 0; e < SPAN; e++) {
            if (PADDED) {
                bool inside = row_inside && iw0 + e >= 0 && iw0 + e < pc.IW;
                float v = uintBitsToFloat(LOAD_X(inside ? row_off + e : 0));
                xs[e] = inside ? v : 0.0;
            } else {
                xs[e] = uintBitsToFloat(LOAD_X(row_off + e));
            }
        }
        for (int r = 0; r < OHB; r++) {
            int kd = ir - r * SH; // kh * DH for output row r, if this input row is under its window
            if (kd < 0 || kd % DH != 0 || kd / DH >= KH) continue;
            int kh = kd / DH;
            for (int kw = 0; kw < KW; kw++) {
                float wv = uintBitsToFloat(LOAD_W(oc * uint(KH * KW) + uint(kh * KW + kw)));
                for (int j = 0; j < PXB; j++) acc[r][j] += wv * xs[j * SW + kw * DW];
            }
        }
    }

    if (gl_GlobalInvocationID.x >= pc.columns) return;
    float bias = pc.has_bias != 0u ? uintBitsToFloat(LOAD(b, oc)) : 0.0;
    for (int r = 0; r < OHB; r++) {
        int oh = oh0 + r;
        if (oh >= pc.OH) break;
        uint y_row = (n * pc.cout + oc) * uint(pc.OH * pc.OW) + uint(oh * pc.OW);
#ifdef DEPTHWISE_TEXEL_X
        if (VEC4_Y) {
            for (int j = 0; j < PXB; j += 4) {
                if (ow0 + j >= pc.OW) break;
                uvec4 o;
                for (int e = 0; e < 4; e++)
                    o[e] = floatBitsToUint(round_to_dtype(DT, fused_act(ACT, acc[r][j + e] + bias, pc.lo, pc.hi)));
                y4[(y_row + uint(ow0 + j)) / 4u] = o;
            }
            continue;
        }
#endif
        for (int j = 0; j < PXB; j++) {
            if (ow0 + j >= pc.OW) continue;
            STORE(y, y_row + uint(ow0 + j), floatBitsToUint(round_to_dtype(DT, fused_act(ACT, acc[r][j] + bias, pc.lo, pc.hi))));
        }
    }
}
