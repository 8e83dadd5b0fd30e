#version 450
#extension GL_EXT_samplerless_texture_functions : require
// The columns of a 2-D convolution's input for the CPU-device MatMul (src/ops/conv_matmul.c, conv as
// matmul on lavapipe), 32-bit words: col[n][k][oy * ow + ox] with k = (ci, ky, kx) is the input
// pixel that weight k meets at output pixel (oy, ox), or 0 in the padding; each row of k is
// padded with zeros to col_stride, a multiple of 4. shaders/im2col.glsl does the same one
// element per invocation, with ten integer divisions each; llvmpipe has no vector integer
// division and runs those one lane at a time, and it issues every storage-buffer access as a
// loop over the lanes (a uvec4 store: one such loop for 4 values). So here an invocation
// writes a whole row of k, dividing only to find (n, k), 4 elements per store, stepping
// (oy, ox), and reads X through a texel buffer of words (one gather for all lanes).
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(binding = 0) uniform utextureBuffer X;
layout(std430, binding = 1) writeonly buffer Col { uvec4 col4[]; };

// keep in step with im2col_push in src/ops/conv_matmul.c; count: rows (batch * k_pad); the rows of k
// from K = cin * kh * kw to k_pad (K rounded up to 4 where W was padded) are zeros
layout(push_constant) uniform Push {
    uint count, cin, h, w, kh, kw, oh, ow;
    uint sh, sw, dh, dw;
    int ph, pw;
    uint col_stride; // elements from one row (k) of the columns to the next: oh * ow rounded up to 4
    uint col_image;  // from one image's columns to the next: k_pad * col_stride
    uint k_pad;
} pc;

void main()
{
    uint row = linear_id();
    if (row >= pc.count) return;
    uint kk = pc.kh * pc.kw;
    uint k = row % pc.k_pad, n = row / pc.k_pad;
    uint ci = k / kk, r = k % kk, ky = r / pc.kw, kx = r % pc.kw;
    bool k_in = ci < pc.cin;
    int iy = int(ky * pc.dh) - pc.ph, ix0 = int(kx * pc.dw) - pc.pw, ix = ix0;
    int sw = int(pc.sw), sh = int(pc.sh), h = int(pc.h), w = int(pc.w);
    int plane = int((n * pc.cin + min(ci, pc.cin - 1u)) * pc.h * pc.w);
    uint oy = 0u, ox = 0u;
    uint dst = (n * pc.col_image + k * pc.col_stride) / 4u;
    for (uint t = 0u; t < pc.col_stride / 4u; t++) {
        uvec4 o;
        [[unroll]] for (uint l = 0u; l < 4u; l++) {
            // +0.0 in the padding and past the map (oy == oh); the fetch stays in bounds
            bool inside = k_in && oy < pc.oh && iy >= 0 && iy < h && ix >= 0 && ix < w;
            uint v = texelFetch(X, inside ? plane + iy * w + ix : 0).x;
            o[l] = inside ? v : 0u;
            ox++;
            ix += sw;
            if (ox == pc.ow) {
                ox = 0u;
                oy++;
                ix = ix0;
                iy += sh;
            }
        }
        col4[dst + t] = o;
    }
}
