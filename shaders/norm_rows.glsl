// Normalizes each row to zero mean and unit variance, then applies an optional affine map:
// InstanceNormalization (a row is one (n, c) plane), LayerNormalization (the trailing dims
// from `axis`) and MeanVarianceNormalization (rows gathered through strides). One workgroup
// per row: a strided pass per invocation, then a shared-memory tree, for the mean and then
// for the variance (two passes keep the variance accurate for large means). Statistics are
// fp32 in every storage variant.
layout(local_size_x_id = 0) in; // a power of two, at most 128
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const uint AFFINE = 0u;  // keep in step with src/ops/normalization.c
layout(constant_id = 3) const uint STRIDED = 0u; // 1: rows and elements through strides, X, Y and R alike (MVN);
                                                 // 2: X's rows only (a Transpose read in place: the
                                                 // fused Add + LayerNorm), Y and R contiguous
layout(constant_id = 4) const uint EPS_OUTSIDE_SQRT = 0u; // 1 / (sqrt(var) + eps), as MVN
// rows of X + R, each sum rounded to the dtype (a residual Add before a LayerNormalization,
// src/ops/normalization.c norm_fuse_add); R is bound at 3 in place of the statistics
layout(constant_id = 5) const bool RESIDUAL = false;
// an activation after a LayerNormalization (op_fuse_activation): common.glsl's fused_clamp
layout(constant_id = 6) const bool CLAMP = false;
layout(constant_id = 7) const float LO = 0.0;
layout(constant_id = 8) const float HI = 0.0;

#define AFFINE_NONE 0u
#define AFFINE_PER_ROW 1u     // pair (row % period): InstanceNormalization's channels
#define AFFINE_PER_ELEMENT 2u // pair (j % period): LayerNormalization's Scale and B
// pair (row % period) * (len / channel_len) + j / channel_len: GroupNormalization's channels,
// a row being one group (period groups) of channels of channel_len elements each
#define AFFINE_PER_CHANNEL 3u

layout(std430, binding = 0) readonly buffer In { ELEM x[]; };
layout(std430, binding = 1) readonly buffer ScaleShift { vec2 scale_shift[]; };
layout(std430, binding = 2) writeonly buffer Out { ELEM y[]; };
layout(std430, binding = 3) writeonly buffer Stats { vec2 stats[]; }; // (mean, 1/stddev) per row
layout(std430, binding = 3) readonly buffer Residual { ELEM r[]; };
layout(push_constant) uniform Push {
    uint rows; uint len; uint period; float eps;
    // STRIDED: row r starts at (r / keep_inner) * keep_stride_outer + (r % keep_inner) * keep_stride_inner,
    // element j of it sits at (j / red_inner) * red_stride_outer + (j % red_inner) * red_stride_inner
    uint keep_inner; uint keep_stride_outer; uint keep_stride_inner;
    uint red_inner; uint red_stride_outer; uint red_stride_inner;
    uint channel_len; // AFFINE_PER_CHANNEL
} pc;

shared float partial[128];

float tree_sum(float v)
{
    uint t = gl_LocalInvocationID.x;
    partial[t] = v;
    memoryBarrierShared();
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {
        if (t < s) partial[t] += partial[t + s];
        memoryBarrierShared();
        barrier();
    }
    float total = partial[0];
    barrier(); // everyone has read partial[0] before it is reused
    return total;
}

#include "norm_rows_layout.glsl"

// X at xat plus R at at
float x_at(uint xat, uint at)
{
    float v = uintBitsToFloat(LOAD(x, xat));
    return RESIDUAL ? round_to_dtype(DT, v + uintBitsToFloat(LOAD(r, at))) : v;
}

void main()
{
    uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (row >= pc.rows) return; // whole workgroups leave together
    uint t = gl_LocalInvocationID.x;
    uint group = gl_WorkGroupSize.x;
    uint base = row_start(row), xbase = x_row_start(row);

    float acc = 0.0;
    for (uint j = t; j < pc.len; j += group) acc += x_at(xbase + element(j), base + element(j));
    float mean = tree_sum(acc) / float(pc.len);
    acc = 0.0;
    for (uint j = t; j < pc.len; j += group) {
        float d = x_at(xbase + element(j), base + element(j)) - mean;
        acc += d * d;
    }
    float variance = tree_sum(acc) / float(pc.len);
    float inv_std = EPS_OUTSIDE_SQRT != 0u ? 1.0 / (sqrt(variance) + pc.eps) : 1.0 / sqrt(variance + pc.eps);
    if (t == 0u && !RESIDUAL) stats[row] = vec2(mean, inv_std);

    vec2 ss = AFFINE == AFFINE_PER_ROW ? scale_shift[row % pc.period] : vec2(1.0, 0.0);
    uint first_channel = AFFINE == AFFINE_PER_CHANNEL ? (row % pc.period) * (pc.len / pc.channel_len) : 0u;
    for (uint j = t; j < pc.len; j += group) {
        uint at = base + element(j);
        if (AFFINE == AFFINE_PER_ELEMENT) ss = scale_shift[j % pc.period];
        if (AFFINE == AFFINE_PER_CHANNEL) ss = scale_shift[first_channel + j / pc.channel_len];
        float v = (x_at(xbase + element(j), at) - mean) * inv_std;
        if (AFFINE != AFFINE_NONE) v = v * ss.x + ss.y;
        STORE(y, at, floatBitsToUint(round_to_dtype(DT, fused_clamp(CLAMP, v, LO, HI))));
    }
}
