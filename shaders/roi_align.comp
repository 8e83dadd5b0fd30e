#version 450
// RoiAlign as ONNX's reference: one invocation per output element (roi, c, ph, pw). Each bin
// averages (avg) or takes the maximum (max; of the weighted corner values, as the reference)
// of grid_h x grid_w bilinear samples; the grid is sampling_ratio per side, or adaptive
// (ceil(roi size / output size)). Samples beyond [-1, size] read 0.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const bool MAX_MODE = false;
layout(constant_id = 3) const bool HALF_PIXEL = true;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) readonly buffer Rois { uint rois[]; };
layout(std430, binding = 2) readonly buffer Batch { int batch_index[]; };
layout(std430, binding = 3) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count, C, H, W, out_h, out_w, N;
    int sampling_ratio;
    float spatial_scale;
} pc;

float roi(uint r, uint k) { return uintBitsToFloat(rois[r * 4u + k]); }

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint pw = i % pc.out_w, ph = (i / pc.out_w) % pc.out_h, c = (i / (pc.out_w * pc.out_h)) % pc.C;
    uint r = i / (pc.out_w * pc.out_h * pc.C);
    int b = batch_index[r];
    if (b < 0 || uint(b) >= pc.N) { // an out-of-range batch index reads nothing
        y[i] = floatBitsToUint(0.0);
        return;
    }
    float offset = HALF_PIXEL ? 0.5 : 0.0;
    float start_w = roi(r, 0u) * pc.spatial_scale - offset, start_h = roi(r, 1u) * pc.spatial_scale - offset;
    float roi_w = roi(r, 2u) * pc.spatial_scale - offset - start_w, roi_h = roi(r, 3u) * pc.spatial_scale - offset - start_h;
    if (!HALF_PIXEL) {
        roi_w = max(roi_w, 1.0);
        roi_h = max(roi_h, 1.0);
    }
    float bin_h = roi_h / float(pc.out_h), bin_w = roi_w / float(pc.out_w);
    int grid_h = pc.sampling_ratio > 0 ? pc.sampling_ratio : int(ceil(roi_h / float(pc.out_h)));
    int grid_w = pc.sampling_ratio > 0 ? pc.sampling_ratio : int(ceil(roi_w / float(pc.out_w)));
    float count = float(max(grid_h * grid_w, 1));
    uint base = (uint(b) * pc.C + c) * pc.H * pc.W;
    float acc = 0.0;
    bool first = true;
    for (int iy = 0; iy < grid_h; iy++) {
        float yy = start_h + float(ph) * bin_h + (float(iy) + 0.5) * bin_h / float(grid_h);
        for (int ix = 0; ix < grid_w; ix++) {
            float xx = start_w + float(pw) * bin_w + (float(ix) + 0.5) * bin_w / float(grid_w);
            float v = 0.0;
            if (!(yy < -1.0 || yy > float(pc.H) || xx < -1.0 || xx > float(pc.W))) {
                float sy = max(yy, 0.0), sx = max(xx, 0.0);
                int y_low = int(sy), x_low = int(sx), y_high, x_high;
                if (y_low >= int(pc.H) - 1) {
                    y_high = y_low = int(pc.H) - 1;
                    sy = float(y_low);
                } else {
                    y_high = y_low + 1;
                }
                if (x_low >= int(pc.W) - 1) {
                    x_high = x_low = int(pc.W) - 1;
                    sx = float(x_low);
                } else {
                    x_high = x_low + 1;
                }
                float ly = sy - float(y_low), lx = sx - float(x_low), hy = 1.0 - ly, hx = 1.0 - lx;
                float v1 = hy * hx * uintBitsToFloat(x[base + uint(y_low) * pc.W + uint(x_low)]);
                float v2 = hy * lx * uintBitsToFloat(x[base + uint(y_low) * pc.W + uint(x_high)]);
                float v3 = ly * hx * uintBitsToFloat(x[base + uint(y_high) * pc.W + uint(x_low)]);
                float v4 = ly * lx * uintBitsToFloat(x[base + uint(y_high) * pc.W + uint(x_high)]);
                v = MAX_MODE ? max(max(v1, v2), max(v3, v4)) : v1 + v2 + v3 + v4;
            }
            if (MAX_MODE) acc = first ? v : max(acc, v);
            else acc += v;
            first = false;
        }
    }
    y[i] = floatBitsToUint(round_to_dtype(DT, MAX_MODE ? acc : acc / count));
}
