#version 450
#extension GL_EXT_samplerless_texture_functions : require
// 2-D MaxPool and AveragePool of float32 words for CPU Vulkan drivers (lavapipe), after
// conv2d_cpu_depthwise.glsl: an invocation computes PXB consecutive outputs of one row of one
// (n, c) plane, loading per window row the input span its windows cover once, through a texel
// buffer of words (one gather for all lanes, where a storage-buffer load is a loop over them);
// the window is unrolled (spec constants), so no lane branches. No indices output (MaxPool's
// second output takes shaders/pool.glsl).
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0u; // 0 max, 1 average: keep in step with src/ops/pool.c
#include "conv_window.glsl" // KH, KW, SH, SW, DH, DW: constants 2-7
layout(constant_id = 8) const int PXB = 8;
layout(constant_id = 9) const bool COUNT_INCLUDE_PAD = false;

const int SPAN = (PXB - 1) * SW + (KW - 1) * DW + 1; // input columns under PXB windows

layout(binding = 0) uniform utextureBuffer X;
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push {
    uint columns; // planes * OH * ceil(OW / PXB): the invocations needed
    int IH, IW, OH, OW, PH, PW;
    int limit_h, limit_w; // input size + end padding: AveragePool with count_include_pad counts below it
} pc;

void main()
{
    // invocations past the end compute the last column again and store nothing
    uint column = min(linear_id(), pc.columns - 1u);
    uint col_per_row = uint((pc.OW + PXB - 1) / PXB);
    int ow0 = int(column % col_per_row) * PXB;
    uint row = column / col_per_row;
    int oh = int(row % uint(pc.OH));
    uint plane = row / uint(pc.OH);
    int ih0 = oh * SH - pc.PH, iw0 = ow0 * SW - pc.PW;
    int x_base = int(plane) * pc.IH * pc.IW;

    float acc[PXB];
    for (int j = 0; j < PXB; j++) acc[j] = OP == 0u ? uintBitsToFloat(0xff800000u) : 0.0;
    int rows_in = 0, rows_counted = 0;
    for (int kh = 0; kh < KH; kh++) {
        int ih = ih0 + kh * DH;
        bool row_inside = ih >= 0 && ih < pc.IH;
        rows_in += row_inside ? 1 : 0;
        rows_counted += ih < pc.limit_h ? 1 : 0;
        float xs[SPAN];
        for (int e = 0; e < SPAN; e++) {
            bool inside = row_inside && iw0 + e >= 0 && iw0 + e < pc.IW;
            float v = uintBitsToFloat(texelFetch(X, inside ? x_base + ih * pc.IW + iw0 + e : 0).x);
            xs[e] = inside ? v : (OP == 0u ? uintBitsToFloat(0xff800000u) : 0.0);
        }
        for (int kw = 0; kw < KW; kw++)
            for (int j = 0; j < PXB; j++) {
                float v = xs[j * SW + kw * DW];
                if (OP == 0u) acc[j] = (isnan(v) || v > acc[j]) && !isnan(acc[j]) ? v : acc[j];
                else acc[j] += v;
            }
    }

    if (linear_id() >= pc.columns) return;
    uint y_row = (plane * uint(pc.OH) + uint(oh)) * uint(pc.OW);
    for (int j = 0; j < PXB; j++) {
        if (ow0 + j >= pc.OW) continue;
        float r = acc[j];
        if (OP == 1u) { // the window's positions inside the input (or inside its padding)
            int cols = 0;
            for (int kw = 0; kw < KW; kw++) {
                int iw = iw0 + j * SW + kw * DW;
                cols += COUNT_INCLUDE_PAD ? (iw < pc.limit_w ? 1 : 0) : (iw >= 0 && iw < pc.IW ? 1 : 0);
            }
            r /= float((COUNT_INCLUDE_PAD ? rows_counted : rows_in) * cols);
        }
        y[y_row + uint(ow0 + j)] = floatBitsToUint(r);
    }
}
