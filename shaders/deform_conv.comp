#version 450
// DeformConv 2-D: one invocation per output element (n, oc, i, j). For each input channel of
// oc's group and each kernel tap (a, b), the sample point is
//   (i * stride_h - pad_h + a * dil_h + dy, j * stride_w - pad_w + b * dil_w + dx)
// with (dy, dx) from offset[n, g, a, b, {0, 1}, i, j] (g: the channel's offset group); it is
// read bilinearly, corners outside X reading 0, times mask[n, g, a, b, i, j] and the weight.
// offset, mask and B sit in one packed buffer (shaders/pack_words.comp), mask from mask_at
// and B from bias_at.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;

layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer Weight { uint weight[]; };
layout(std430, binding = 2) readonly buffer Params { uint params[]; };
layout(std430, binding = 3) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count, C, H, W, OC, OH, OW, KH, KW;
    int stride_h, stride_w, dil_h, dil_w, pad_h, pad_w;
    uint ic_per_group, oc_per_group, ic_per_offset_group, offset_groups, has_bias, has_mask, mask_at, bias_at;
} pc;

float at(uint plane, int h, int w)
{
    if (h < 0 || w < 0 || h >= int(pc.H) || w >= int(pc.W)) return 0.0;
    return uintBitsToFloat(x[plane + uint(h) * pc.W + uint(w)]);
}

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint ow = i % pc.OW, oh = (i / pc.OW) % pc.OH, oc = (i / (pc.OW * pc.OH)) % pc.OC, n = i / (pc.OW * pc.OH * pc.OC);
    uint plane_out = pc.OH * pc.OW, pos = oh * pc.OW + ow, taps = pc.KH * pc.KW;
    uint first_ic = (oc / pc.oc_per_group) * pc.ic_per_group;
    float acc = pc.has_bias != 0u ? uintBitsToFloat(params[pc.bias_at + oc]) : 0.0;
    for (uint k = 0u; k < pc.ic_per_group; k++) {
        uint ic = first_ic + k, g = ic / pc.ic_per_offset_group;
        uint plane = (n * pc.C + ic) * pc.H * pc.W;
        for (uint t = 0u; t < taps; t++) {
            uint a = t / pc.KW, b = t % pc.KW;
            uint tap = (n * pc.offset_groups + g) * taps + t; // offset channels 2 * tap, 2 * tap + 1; mask channel tap
            float dy = uintBitsToFloat(params[(2u * tap) * plane_out + pos]);
            float dx = uintBitsToFloat(params[(2u * tap + 1u) * plane_out + pos]);
            float h = float(int(oh) * pc.stride_h - pc.pad_h + int(a) * pc.dil_h) + dy;
            float w = float(int(ow) * pc.stride_w - pc.pad_w + int(b) * pc.dil_w) + dx;
            float h0 = floor(h), w0 = floor(w), lh = h - h0, lw = w - w0;
            int ih = int(h0), iw = int(w0);
            float v = (1.0 - lh) * ((1.0 - lw) * at(plane, ih, iw) + lw * at(plane, ih, iw + 1)) +
                      lh * ((1.0 - lw) * at(plane, ih + 1, iw) + lw * at(plane, ih + 1, iw + 1));
            if (pc.has_mask != 0u) v *= uintBitsToFloat(params[pc.mask_at + tap * plane_out + pos]);
            acc += v * uintBitsToFloat(weight[(oc * pc.ic_per_group + k) * taps + t]);
        }
    }
    y[i] = floatBitsToUint(round_to_dtype(DT, acc));
}
