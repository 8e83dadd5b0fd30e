#version 450
// The columns of a 2-D convolution's input for the CPU-device MatMul (src/ops/conv.c, conv as
// matmul on lavapipe), 32-bit words: col[n][k][oy * ow + ox] with k = (ci, ky, kx) is the input
// pixel that weight k meets at output pixel (oy, ox), or 0 in the padding. shaders/im2col.glsl
// does the same one element per invocation, with ten integer divisions each; llvmpipe has no
// vector integer division and runs those one lane at a time, so here an invocation writes a
// whole output row (ow elements) and divides only to find its (n, k, oy).
#include "common.glsl"

layout(local_size_x_id = 0) in;

// X as a texel buffer of 32-bit words: llvmpipe fetches a texel for all lanes as one gather,
// where it runs a storage-buffer load as a loop over the lanes with a bounds check each
layout(binding = 0) uniform usamplerBuffer X;
layout(std430, binding = 1) writeonly buffer Col { uint col[]; };

// keep in step with im2col_push in src/ops/conv.c; count: rows (batch * k_pad * oh); the
// rows of k from K = cin * kh * kw to k_pad (K rounded up to 4 where W was padded) are zeros
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
    uint oy = row % pc.oh, rest = row / pc.oh, k = rest % pc.k_pad, n = rest / pc.k_pad;
    uint ci = k / kk, r = k % kk, ky = r / pc.kw, kx = r % pc.kw;
    int iy = int(oy * pc.sh + ky * pc.dh) - pc.ph;
    bool row_in = ci < pc.cin && iy >= 0 && uint(iy) < pc.h;
    uint src = ((n * pc.cin + ci) * pc.h + uint(max(iy, 0))) * pc.w;
    int ix = int(kx * pc.dw) - pc.pw, step = int(pc.sw);
    uint dst = n * pc.col_image + k * pc.col_stride + oy * pc.ow;
    for (uint ox = 0u; ox < pc.ow; ox++, ix += step) {
        bool inside = row_in && ix >= 0 && uint(ix) < pc.w;
        uint v = texelFetch(X, inside ? int(src) + ix : 0).x; // unconditional: one gather for all lanes
        col[dst + ox] = inside ? v : 0u; // +0.0 in the padding
    }
    // the last output row also zeroes the row's padding to whole texels
    if (oy == pc.oh - 1u)
        for (uint e = pc.oh * pc.ow; e < pc.col_stride; e++) col[n * pc.col_image + k * pc.col_stride + e] = 0u;
}
