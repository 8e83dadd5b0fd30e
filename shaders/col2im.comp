#version 450
// Col2Im: one invocation per output element (n, c, pixel). For every block offset b the
// pixel p came from column position q with q * stride - pad + b * dilation = p along each
// spatial dim; the entries found are summed. Spatial dims are padded to 4 with leading 1s.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count, C, block_size, col_count;
    int image[4], block[4], dil[4], stride[4], pad[4], cols[4];
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint pixels = uint(pc.image[0] * pc.image[1] * pc.image[2] * pc.image[3]);
    uint nc = i / pixels, rest = i % pixels;
    int p[4];
    for (int k = 3; k >= 0; k--) {
        p[k] = int(rest % uint(pc.image[k]));
        rest /= uint(pc.image[k]);
    }
    uint in_base = nc * pc.block_size * pc.col_count; // (n * C + c) * block_size rows of col_count
    float acc_f = 0.0;
    int acc_i = 0;
    for (uint b = 0u; b < pc.block_size; b++) {
        uint brest = b, col = 0u, col_stride = 1u;
        bool hit = true;
        for (int k = 3; k >= 0 && hit; k--) {
            int off = int(brest % uint(pc.block[k]));
            brest /= uint(pc.block[k]);
            int q = p[k] + pc.pad[k] - off * pc.dil[k];
            if (q < 0 || q % pc.stride[k] != 0 || q / pc.stride[k] >= pc.cols[k]) hit = false;
            col += uint(q / pc.stride[k]) * col_stride;
            col_stride *= uint(pc.cols[k]);
        }
        if (!hit) continue;
        uint w = x[in_base + b * pc.col_count + col];
        if (dt_is_float(DT)) acc_f += uintBitsToFloat(w);
        else acc_i += int(w);
    }
    y[i] = dt_is_float(DT) ? floatBitsToUint(round_to_dtype(DT, acc_f)) : uint(wrap_to_dtype(DT, acc_i));
}
