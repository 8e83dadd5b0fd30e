// Depthwise 2-D Conv (one input channel per group, any channel multiplier) in float32 for CPU
// Vulkan drivers (lavapipe). The lanes of a workgroup are LX adjacent output planes (image,
// channel); the workgroup's column block (PXB outputs of a row) and chunk of RB output rows are
// uniform. An invocation walks its RB rows keeping the input rows under the window in
// registers, so that each input row is fetched once per column block (KH x more on a
// per-output-row kernel) and the per-workgroup cost of llvmpipe (a call with its set-up, ~1,000
// cycles) is spread over RB rows. Where lanes ran along a row's columns (conv2d_cpu_depthwise),
// maps narrower than 8 blocks left lanes idle and every workgroup held 16 outputs a lane.
// X and W are read as texel buffers (a texel fetch is one gather for all lanes where a
// storage-buffer load is a loop over them): X as 32-bit words (conv2d_cpu_dw_planes) or,
// where rows are whole texels, as RGBA32F texels, 4 columns a fetch (conv2d_cpu_dw_planes_v4,
// DW_X_VEC4); Y is stored 4 outputs at once where rows are whole uvec4s (llvmpipe stores one
// lane at a time). Include after common.glsl and fused_act.glsl.

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int PXB = 8; // consecutive output columns per invocation
#include "conv_window.glsl" // KH, KW, SH, SW, DH, DW: constants 2-7
layout(constant_id = 8) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)
layout(constant_id = 9) const bool PADDED = true; // some window may leave the input
layout(constant_id = 10) const bool VEC4_Y = false; // OW, OH * OW and y's base multiples of 4
layout(constant_id = 11) const int RB = 8; // output rows per invocation
// DW_X_VEC4: the first window column's place in its texel, (4 - PW % 4) % 4 (whole-texel rows
// and column blocks of whole texels put every row's window start there)
layout(constant_id = 12) const int MIS = 0;

const int SPAN = (PXB - 1) * SW + (KW - 1) * DW + 1; // input columns under PXB windows
const int IR = (KH - 1) * DH + 1;                     // input rows under one output row's window
const int KEEP = IR > SH ? IR - SH : 0;               // rows the next output row reuses
const int NEW = IR - KEEP;                            // rows it fetches

#ifdef DW_X_VEC4
layout(binding = 0) uniform textureBuffer X;
const int NT = (MIS + SPAN + 3) / 4; // texels under a row's span
#else
layout(binding = 0) uniform utextureBuffer X;
#endif
layout(binding = 1) uniform utextureBuffer W;
layout(std430, binding = 2) readonly buffer B { uint b[]; };
layout(std430, binding = 3) writeonly buffer Y { uint y[]; };
layout(std430, binding = 3) writeonly buffer Y4 { uvec4 y4[]; };
// keep in step with record_cpu_dw_planes in src/ops/conv_cpu.c
layout(push_constant) uniform Push {
    uint planes;           // batch * cout
    uint cin, cout, cout_g; // cout_g: the channel multiplier
    uint has_bias;
    int IH, IW, OH, OW, PH, PW;
    uint col_blocks;       // ceil(OW / PXB)
    float lo, hi;          // ACT's bounds (a clamp's)
} pc;

float rows[IR][SPAN];

// Input row ih's span from column iw0 into rows[slot] (zeros outside the input).
void fetch_row(int slot, uint x_plane, int ih, int iw0)
{
    bool row_inside = ih >= 0 && ih < pc.IH;
    int off = int(x_plane) + ih * pc.IW + iw0;
#ifdef DW_X_VEC4
    // off - MIS is a texel's first column; texels outside the buffer are clamped to it (their
    // columns are outside the row, so zeros)
    int tb = (off - MIS) / 4, last = textureSize(X) - 1;
    vec4 tx[NT];
    [[unroll]] for (int q = 0; q < NT; q++) tx[q] = texelFetch(X, clamp(tb + q, 0, last));
    [[unroll]] for (int e = 0; e < SPAN; e++) {
        float v = tx[(MIS + e) / 4][(MIS + e) % 4];
        bool inside = !PADDED || (row_inside && iw0 + e >= 0 && iw0 + e < pc.IW);
        rows[slot][e] = inside ? v : 0.0;
    }
#else
    [[unroll]] for (int e = 0; e < SPAN; e++) {
        if (PADDED) {
            bool inside = row_inside && iw0 + e >= 0 && iw0 + e < pc.IW;
            float v = uintBitsToFloat(texelFetch(X, inside ? off + e : 0).x);
            rows[slot][e] = inside ? v : 0.0;
        } else {
            rows[slot][e] = uintBitsToFloat(texelFetch(X, off + e).x);
        }
    }
#endif
}

void main()
{
    // lanes past the last plane compute the last plane again and store nothing
    uint plane = min(gl_GlobalInvocationID.x, pc.planes - 1u);
    uint block = gl_WorkGroupID.y;
    int ow0 = int(block % pc.col_blocks) * PXB, oh0 = int(block / pc.col_blocks) * RB;
    uint n = plane / pc.cout, oc = plane % pc.cout;
    uint x_plane = (n * pc.cin + oc / pc.cout_g) * uint(pc.IH * pc.IW);
    int iw0 = ow0 * SW - pc.PW;

    float wk[KH * KW];
    [[unroll]] for (int k = 0; k < KH * KW; k++) wk[k] = uintBitsToFloat(texelFetch(W, int(oc) * KH * KW + k).x);
    float bias = pc.has_bias != 0u ? uintBitsToFloat(b[oc]) : 0.0;

    // the rows the first output row shares with the one before it
    int ih_prev = (oh0 - 1) * SH - pc.PH;
    [[unroll]] for (int t = SH; t < IR; t++) fetch_row(t, x_plane, ih_prev + t, iw0);

    uint y_plane = plane * uint(pc.OH * pc.OW);
    int rb = min(RB, pc.OH - oh0);
    for (int r = 0; r < rb; r++) {
        int oh = oh0 + r, ih0 = oh * SH - pc.PH;
        [[unroll]] for (int t = 0; t < KEEP; t++)
            [[unroll]] for (int e = 0; e < SPAN; e++) rows[t][e] = rows[t + SH][e];
        [[unroll]] for (int t = KEEP; t < IR; t++) fetch_row(t, x_plane, ih0 + t, iw0);

        float acc[PXB];
        [[unroll]] for (int j = 0; j < PXB; j++) acc[j] = bias;
        [[unroll]] for (int kh = 0; kh < KH; kh++)
            [[unroll]] for (int kw = 0; kw < KW; kw++)
                [[unroll]] for (int j = 0; j < PXB; j++) acc[j] += wk[kh * KW + kw] * rows[kh * DH][j * SW + kw * DW];

        if (gl_GlobalInvocationID.x >= pc.planes) continue;
        uint y_row = y_plane + uint(oh * pc.OW + ow0);
        if (VEC4_Y) {
            [[unroll]] for (int j = 0; j < PXB; j += 4) {
                if (ow0 + j >= pc.OW) break;
                uvec4 o;
                [[unroll]] for (int e = 0; e < 4; e++) o[e] = floatBitsToUint(fused_act(ACT, acc[j + e], pc.lo, pc.hi));
                y4[(y_row + uint(j)) / 4u] = o;
            }
        } else {
            [[unroll]] for (int j = 0; j < PXB; j++) {
                if (ow0 + j >= pc.OW) break;
                y[y_row + uint(j)] = floatBitsToUint(fused_act(ACT, acc[j], pc.lo, pc.hi));
            }
        }
    }
}
