// The columns of a 2-D convolution's input, for running it as a matrix product
// (src/ops/conv.c, conv as matmul): col[n][k][p] with k = (ci, ky, kx) and p = (oy, ox) is the
// input pixel that weight k meets at output pixel p, or 0 in the padding. One invocation
// writes a run of RUN consecutive output pixels of one (n, k) row, so that the index
// arithmetic is paid once per run and neighbouring invocations write neighbouring runs; the
// body is shared by every storage (storage.glsl).
layout(local_size_x_id = 0) in;
#define RUN 8u

layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Col { ELEM col[]; };

// keep in step with im2col_push in src/ops/conv.c
layout(push_constant) uniform Push {
    uint count, cin, h, w, kh, kw, oh, ow; // count: invocations, (n, k) rows x runs per row
    uint sh, sw, dh, dw;
    int ph, pw;
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint ohw = pc.oh * pc.ow, kk = pc.kh * pc.kw, k_count = pc.cin * kk, runs = (ohw + RUN - 1u) / RUN;
    uint row = i / runs, p0 = (i % runs) * RUN, k = row % k_count, n = row / k_count;
    uint ci = k / kk, r = k % kk, ky = r / pc.kw, kx = r % pc.kw;
    uint plane = (n * pc.cin + ci) * pc.h, out_base = row * ohw;
    uint oy = p0 / pc.ow, ox = p0 % pc.ow;
    for (uint j = 0u; j < RUN && p0 + j < ohw; j++) {
        int iy = int(oy * pc.sh + ky * pc.dh) - pc.ph, ix = int(ox * pc.sw + kx * pc.dw) - pc.pw;
        uint v = 0u; // +0.0 in every float storage
        if (iy >= 0 && ix >= 0 && uint(iy) < pc.h && uint(ix) < pc.w) v = LOAD(x, (plane + uint(iy)) * pc.w + uint(ix));
        STORE(col, out_base + p0 + j, v);
        if (++ox == pc.ow) ox = 0u, oy++;
    }
}
