#version 450
// Gradient (ai.onnx.preview.training): the backward step of MatMul y = a b, a [.., M, K],
// b [.., K, N], g [.., M, N]. TARGET 0: da[.., m, k] = sum_n g[.., m, n] b[.., k, n]; TARGET 1:
// db[.., k, n] = sum_m a[.., m, k] g[.., m, n]; each also summed over the batch dims the
// operand was broadcast along. Batch strides count matrices, in y's batch index space.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TARGET = 0u;
layout(constant_id = 2) const uint ACCUMULATE = 0u;

layout(std430, binding = 0) readonly buffer G { float g[]; };
layout(std430, binding = 1) readonly buffer A { float a[]; };
layout(std430, binding = 2) readonly buffer B { float b[]; };
layout(std430, binding = 3) buffer Out { float out_[]; };
layout(push_constant) uniform Push {
    uint count, rank, M, K, N;
    uint dims[6];     // y's batch dims
    uint a_stride[6]; // in matrices, 0 along a broadcast dim
    uint b_stride[6];
} pc;

bool reduced(uint k) { return (TARGET == 0u ? pc.a_stride[k] : pc.b_stride[k]) == 0u && pc.dims[k] > 1u; }

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint rows = TARGET == 0u ? pc.M : pc.K, cols = TARGET == 0u ? pc.K : pc.N;
    uint col = i % cols, row = (i / cols) % rows, rem = i / (cols * rows);
    uint coord[6], combos = 1u;
    for (int k = int(pc.rank) - 1; k >= 0; k--) {
        coord[k] = 0u;
        if (reduced(uint(k))) { combos *= pc.dims[k]; continue; }
        coord[k] = rem % pc.dims[k];
        rem /= pc.dims[k];
    }
    float sum = 0.0;
    for (uint r = 0u; r < combos; r++) {
        uint rr = r, yi = 0u, ai = 0u, bi = 0u, ystride = 1u;
        for (int k = int(pc.rank) - 1; k >= 0; k--) {
            uint ck = coord[k];
            if (reduced(uint(k))) { ck = rr % pc.dims[k]; rr /= pc.dims[k]; }
            yi += ck * ystride;
            ystride *= pc.dims[k];
            ai += ck * pc.a_stride[k];
            bi += ck * pc.b_stride[k];
        }
        uint gm = yi * pc.M * pc.N, am = ai * pc.M * pc.K, bm = bi * pc.K * pc.N;
        if (TARGET == 0u) // row m, col k
            for (uint n = 0u; n < pc.N; n++) sum += g[gm + row * pc.N + n] * b[bm + col * pc.N + n];
        else // row k, col n
            for (uint m = 0u; m < pc.M; m++) sum += a[am + m * pc.K + row] * g[gm + m * pc.N + col];
    }
    out_[i] = ACCUMULATE != 0u ? out_[i] + sum : sum;
}
