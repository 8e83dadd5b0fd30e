#version 450
// norm_rows (shaders/norm_rows.glsl) for CPU Vulkan drivers (lavapipe): one invocation per row, no
// shared memory or barriers. On llvmpipe a workgroup's invocations run as SIMD lanes in a loop that
// every barrier() splits, so the GPU kernel's shared-memory trees (two per row) cost more than the
// row itself for rows of up to a few thousand elements; here the lanes are adjacent rows and each
// lane walks its row three times (mean, variance, normalize). Same bindings, push constants and
// specialization constants as norm_rows (src/ops/normalization.c).
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const uint AFFINE = 0u;  // keep in step with src/ops/normalization.c
layout(constant_id = 3) const uint STRIDED = 0u; // 1: rows and elements through strides, X, Y and R alike (MVN);
                                                 // 2: X's rows only (a Transpose read in place: the
                                                 // fused Add + LayerNorm), Y and R contiguous
layout(constant_id = 4) const uint EPS_OUTSIDE_SQRT = 0u; // 1 / (sqrt(var) + eps), as MVN
layout(constant_id = 5) const bool RESIDUAL = false; // rows of X + R (R at binding 3), as norm_rows.glsl
layout(constant_id = 6) const bool CLAMP = false; // an activation after it, as norm_rows.glsl
layout(constant_id = 7) const float LO = 0.0;
layout(constant_id = 8) const float HI = 0.0;

#define AFFINE_NONE 0u
#define AFFINE_PER_ROW 1u     // pair (row % period): InstanceNormalization's channels
#define AFFINE_PER_ELEMENT 2u // pair (j % period): LayerNormalization's Scale and B
// pair (row % period) * (len / channel_len) + j / channel_len: GroupNormalization's channels,
// a row being one group (period groups) of channels of channel_len elements each
#define AFFINE_PER_CHANNEL 3u

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) readonly buffer ScaleShift { vec2 scale_shift[]; };
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };
layout(std430, binding = 3) writeonly buffer Stats { vec2 stats[]; }; // (mean, 1/stddev) per row
layout(std430, binding = 3) readonly buffer Residual { uint r[]; };
layout(push_constant) uniform Push {
    uint rows; uint len; uint period; float eps;
    uint keep_inner; uint keep_stride_outer; uint keep_stride_inner;
    uint red_inner; uint red_stride_outer; uint red_stride_inner;
    uint channel_len; // AFFINE_PER_CHANNEL
} pc;

#include "norm_rows_layout.glsl"

// X at xat plus R at at
float x_at(uint xat, uint at)
{
    float v = uintBitsToFloat(x[xat]);
    return RESIDUAL ? round_to_dtype(DT, v + uintBitsToFloat(r[at])) : v;
}

void main()
{
    uint row = linear_id();
    if (row >= pc.rows) return;
    uint base = row_start(row), xbase = x_row_start(row);

    float acc = 0.0;
    for (uint j = 0u; j < pc.len; j++) acc += x_at(xbase + element(j), base + element(j));
    float mean = acc / float(pc.len);
    acc = 0.0;
    for (uint j = 0u; j < pc.len; j++) {
        float d = x_at(xbase + element(j), base + element(j)) - mean;
        acc += d * d;
    }
    float variance = acc / float(pc.len);
    float inv_std = EPS_OUTSIDE_SQRT != 0u ? 1.0 / (sqrt(variance) + pc.eps) : 1.0 / sqrt(variance + pc.eps);
    if (!RESIDUAL) stats[row] = vec2(mean, inv_std);

    vec2 ss = AFFINE == AFFINE_PER_ROW ? scale_shift[row % pc.period] : vec2(1.0, 0.0);
    uint first_channel = AFFINE == AFFINE_PER_CHANNEL ? (row % pc.period) * (pc.len / pc.channel_len) : 0u;
    for (uint j = 0u; j < pc.len; j++) {
        uint at = base + element(j);
        if (AFFINE == AFFINE_PER_ELEMENT) ss = scale_shift[j % pc.period];
        if (AFFINE == AFFINE_PER_CHANNEL) ss = scale_shift[first_channel + j / pc.channel_len];
        float v = (x_at(xbase + element(j), at) - mean) * inv_std;
        if (AFFINE != AFFINE_NONE) v = v * ss.x + ss.y;
        y[at] = floatBitsToUint(round_to_dtype(DT, fused_clamp(CLAMP, v, LO, HI)));
    }
}
