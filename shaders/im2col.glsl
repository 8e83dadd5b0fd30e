// The columns of a 2-D convolution's input, for running it as a matrix product
// (src/ops/conv.c, conv as matmul): col[n][k][p] with k = (ci, ky, kx) and p = (oy, ox) is the
// input pixel that weight k meets at output pixel p, or 0 in the padding. One invocation
// writes one element; the body is shared by every storage (storage.glsl).
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Col { ELEM col[]; };

// keep in step with im2col_push in src/ops/conv.c
layout(push_constant) uniform Push {
    uint count, cin, h, w, kh, kw, oh, ow;
    uint sh, sw, dh, dw;
    int ph, pw;
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint ohw = pc.oh * pc.ow, kk = pc.kh * pc.kw, k_count = pc.cin * kk;
    uint p = i % ohw, rest = i / ohw, k = rest % k_count, n = rest / k_count;
    uint ci = k / kk, r = k % kk, ky = r / pc.kw, kx = r % pc.kw;
    int iy = int((p / pc.ow) * pc.sh + ky * pc.dh) - pc.ph, ix = int((p % pc.ow) * pc.sw + kx * pc.dw) - pc.pw;
    uint v = 0u; // +0.0 in every float storage
    if (iy >= 0 && ix >= 0 && uint(iy) < pc.h && uint(ix) < pc.w)
        v = LOAD(x, ((n * pc.cin + ci) * pc.h + uint(iy)) * pc.w + uint(ix));
    STORE(col, i, v);
}
