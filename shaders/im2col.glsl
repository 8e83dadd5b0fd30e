// The columns of a 2-D convolution's input, for running it as a matrix product
// (src/ops/conv_matmul.c, conv as matmul): col[n][k][p] with k = (ci, ky, kx) and p = (oy, ox) is the
// input pixel that weight k meets at output pixel p, or 0 in the padding; element (n, k, p) is
// at n * col_image + k * col_stride + p (rows padded to 16 bytes, or the images side by side
// in one row per k; padding elements are not written and never read). One invocation
// writes RUN consecutive k of one output pixel (index arithmetic paid once per run, kx, ky
// and ci stepped), neighbouring invocations neighbouring pixels, so that each store of a
// subgroup is contiguous; the body is shared by every storage (storage.glsl).
layout(local_size_x_id = 0) in;
#define RUN 8u

layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Col { ELEM col[]; };

// keep in step with im2col_push in src/ops/conv_matmul.c
layout(push_constant) uniform Push {
    uint count, cin, h, w, kh, kw, oh, ow; // count: invocations, n x runs of k x pixels
    uint sh, sw, dh, dw;
    int ph, pw;
    uint col_stride; // elements from one row (k) of the columns to the next
    uint col_image;  // elements from one image's columns to the next (K rows, or ohw: images side by side)
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint ohw = pc.oh * pc.ow, kk = pc.kh * pc.kw, k_count = pc.cin * kk, runs = (k_count + RUN - 1u) / RUN;
    uint p = i % ohw, rest = i / ohw, k0 = (rest % runs) * RUN, n = rest / runs;
    uint ci = k0 / kk, r = k0 % kk, ky = r / pc.kw, kx = r % pc.kw;
    int y0 = int((p / pc.ow) * pc.sh) - pc.ph, x0 = int((p % pc.ow) * pc.sw) - pc.pw;
    for (uint j = 0u; j < RUN && k0 + j < k_count; j++) {
        int iy = y0 + int(ky * pc.dh), ix = x0 + int(kx * pc.dw);
        uint v = 0u; // +0.0 in every float storage
        if (iy >= 0 && ix >= 0 && uint(iy) < pc.h && uint(ix) < pc.w)
            v = LOAD(x, ((n * pc.cin + ci) * pc.h + uint(iy)) * pc.w + uint(ix));
        STORE(col, n * pc.col_image + (k0 + j) * pc.col_stride + p, v);
        if (++kx == pc.kw) {
            kx = 0u;
            if (++ky == pc.kh) ky = 0u, ci++;
        }
    }
}
