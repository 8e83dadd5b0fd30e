#version 450
#extension GL_EXT_samplerless_texture_functions : require
// The columns of a 2-D convolution's input transposed, for the CPU-device MatMul's transposed
// products (src/ops/conv_matmul.c, record_cpu_transposed): colT[n][oy * ow + ox][k], k = (ci, ky, kx), is
// the input pixel that weight k meets at output pixel (oy, ox), or 0 in the padding and for k
// from K = cin * kh * kw to k_pad (K rounded up to 4). An invocation writes the row of one output
// pixel, 4 k per store (llvmpipe stores one lane at a time: a uvec4 is one such loop for 4
// values), stepping (ci, ky, kx) without divisions, and reads X through a texel buffer of words
// (one gather for all lanes), as shaders/im2col_cpu.comp does for the untransposed columns.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(binding = 0) uniform utextureBuffer X;
layout(std430, binding = 1) writeonly buffer Col { uvec4 col4[]; };

// keep in step with im2col_push in src/ops/conv_matmul.c; count: rows (batch * oh * ow); col_stride:
// k_pad, the elements of a row; col_image: oh * ow * k_pad
layout(push_constant) uniform Push {
    uint count, cin, h, w, kh, kw, oh, ow;
    uint sh, sw, dh, dw;
    int ph, pw;
    uint col_stride;
    uint col_image;
    uint k_pad;
} pc;

void main()
{
    uint row = linear_id();
    if (row >= pc.count) return;
    uint ohw = pc.oh * pc.ow, n = row / ohw, pix = row % ohw, oy = pix / pc.ow, ox = pix % pc.ow;
    int iy0 = int(oy * pc.sh) - pc.ph, ix0 = int(ox * pc.sw) - pc.pw, h = int(pc.h), w = int(pc.w);
    int dh = int(pc.dh), dw = int(pc.dw);
    int plane = int(n * pc.cin * pc.h * pc.w), plane_size = h * w;
    uint ci = 0u, ky = 0u, kx = 0u;
    int iy = iy0, ix = ix0;
    uint dst = (n * pc.col_image + pix * pc.col_stride) / 4u;
    for (uint t = 0u; t < pc.k_pad / 4u; t++) {
        uvec4 o;
        [[unroll]] for (uint l = 0u; l < 4u; l++) {
            // +0.0 in the padding and past K (ci == cin); the fetch stays in bounds
            bool inside = ci < pc.cin && iy >= 0 && iy < h && ix >= 0 && ix < w;
            uint v = texelFetch(X, inside ? plane + iy * w + ix : 0).x;
            o[l] = inside ? v : 0u;
            kx++;
            ix += dw;
            if (kx == pc.kw) {
                kx = 0u;
                ix = ix0;
                ky++;
                iy += dh;
                if (ky == pc.kh) {
                    ky = 0u;
                    iy = iy0;
                    ci++;
                    plane += plane_size;
                }
            }
        }
        col4[dst + t] = o;
    }
}
