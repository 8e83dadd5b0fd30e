#version 450
// ConvInteger and QLinearConv's product: y[n, oc, p] = sum (x - x_zp) * (w[oc] - w_zp[oc]) over
// oc's group of input channels and the kernel taps that land inside x (padding adds 0), plus
// B[oc] (QLinearConv), in int32; one invocation per output. Spatial dims are padded to 3 with
// leading 1s. The zero points and B sit in one packed buffer (shaders/pack_words.comp): x's
// zero point (none or one), w's (none, one, or one per output channel), then B (none or OC).
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { int x[]; };
layout(std430, binding = 1) readonly buffer W { int w[]; };
layout(std430, binding = 2) readonly buffer ZeroPoints { int zp[]; };
layout(std430, binding = 3) writeonly buffer Y { int y[]; };
layout(push_constant) uniform Push {
    uint count, C, OC, ic_per_group, oc_per_group, x_zps, w_zps, has_bias;
    int in_dims[3], out_dims[3], kernel[3], stride[3], dil[3], pad[3];
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint pixels = uint(pc.out_dims[0] * pc.out_dims[1] * pc.out_dims[2]);
    uint p = i % pixels, oc = (i / pixels) % pc.OC, n = i / (pixels * pc.OC);
    int o[3];
    o[2] = int(p % uint(pc.out_dims[2]));
    o[1] = int((p / uint(pc.out_dims[2])) % uint(pc.out_dims[1]));
    o[0] = int(p / uint(pc.out_dims[2] * pc.out_dims[1]));
    int xz = pc.x_zps != 0u ? zp[0] : 0;
    int wz = pc.w_zps == 0u ? 0 : zp[pc.x_zps + (pc.w_zps == 1u ? 0u : oc)];
    uint first_ic = (oc / pc.oc_per_group) * pc.ic_per_group;
    uint in_plane = uint(pc.in_dims[0] * pc.in_dims[1] * pc.in_dims[2]);
    uint taps = uint(pc.kernel[0] * pc.kernel[1] * pc.kernel[2]);
    int acc = pc.has_bias != 0u ? zp[pc.x_zps + pc.w_zps + oc] : 0;
    for (uint k = 0u; k < pc.ic_per_group; k++) {
        uint x_base = (n * pc.C + first_ic + k) * in_plane, w_base = (oc * pc.ic_per_group + k) * taps;
        for (int a = 0; a < pc.kernel[0]; a++) {
            int z = o[0] * pc.stride[0] - pc.pad[0] + a * pc.dil[0];
            if (z < 0 || z >= pc.in_dims[0]) continue;
            for (int b = 0; b < pc.kernel[1]; b++) {
                int h = o[1] * pc.stride[1] - pc.pad[1] + b * pc.dil[1];
                if (h < 0 || h >= pc.in_dims[1]) continue;
                for (int d = 0; d < pc.kernel[2]; d++) {
                    int ww = o[2] * pc.stride[2] - pc.pad[2] + d * pc.dil[2];
                    if (ww < 0 || ww >= pc.in_dims[2]) continue;
                    int xv = x[x_base + uint((z * pc.in_dims[1] + h) * pc.in_dims[2] + ww)];
                    int wv = w[w_base + uint((a * pc.kernel[1] + b) * pc.kernel[2] + d)];
                    acc += (xv - xz) * (wv - wz);
                }
            }
        }
    }
    y[i] = acc;
}
