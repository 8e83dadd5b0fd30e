#version 450
#extension GL_EXT_samplerless_texture_functions : require
// norm_rows_cpu.comp for contiguous float32 rows whose length is a multiple of 4
// (LayerNormalization, the fused Add + LayerNorm, InstanceNormalization of such planes,
// GroupNormalization whose channels are whole texels): an
// invocation per row, the lanes of a workgroup on adjacent rows, X (and the residual R, and the
// (scale, shift) pairs) read as RGBA32F texels and Y stored as uvec4. llvmpipe (Mesa 22.3)
// issues a storage-buffer load as a loop over the SIMD lanes with a branch and a bounds check
// per component, a texel fetch as one gather of 16-byte texels (shaders/matmul_cpu.glsl):
// norm_rows_cpu's word loads ran BERT's [1024,768] Add + LayerNorm at 0.8 GB/s. With N4 > 0
// (rows of exactly N4 texels) the row is fetched once into registers and the loops unrolled,
// instead of three passes of fetches (mean, variance, normalize). Same push constants and
// specialization constants 0-8 as norm_rows_cpu.comp; bindings: 0 X, 1 the pairs (two a
// texel), 2 Y, 3 the statistics, 4 R (src/ops/normalization.c, rows_dispatch_into).
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const uint AFFINE = 0u;  // keep in step with src/ops/normalization.c
// 0, or 2: X's rows through the keep_* strides (a Transpose read in place; in texels, the
// strides multiples of 4), Y and R contiguous
layout(constant_id = 3) const uint STRIDED = 0u;
layout(constant_id = 4) const uint EPS_OUTSIDE_SQRT = 0u;
layout(constant_id = 5) const bool RESIDUAL = false; // rows of X + R (R at binding 4)
layout(constant_id = 6) const bool CLAMP = false;
layout(constant_id = 7) const float LO = 0.0;
layout(constant_id = 8) const float HI = 0.0;
layout(constant_id = 9) const uint N4 = 0u; // texels per row when the row is held in registers; 0: not

#define AFFINE_NONE 0u
#define AFFINE_PER_ROW 1u     // pair (row % period)
#define AFFINE_PER_ELEMENT 2u // pair (j % period), period a multiple of 4
#define AFFINE_PER_CHANNEL 3u // pair (first channel of the row + j / channel_len), channel_len a
                              // multiple of 4 (GroupNormalization: a row is a group of channels)

layout(binding = 0) uniform textureBuffer X4;
layout(binding = 1) uniform textureBuffer SS4; // (scale, shift) pairs k and k + 1 in texel k / 2
layout(std430, binding = 2) writeonly buffer Y4 { uvec4 y4[]; };
layout(std430, binding = 3) writeonly buffer Stats { vec2 stats[]; }; // (mean, 1/stddev) per row
layout(binding = 4) uniform textureBuffer R4;
layout(push_constant) uniform Push {
    uint rows; uint len; uint period; float eps;
    uint keep_inner; uint keep_stride_outer; uint keep_stride_inner;
    uint red_inner; uint red_stride_outer; uint red_stride_inner;
    uint channel_len;
} pc;

const uint CACHED = N4 > 0u ? N4 : 1u;

#include "norm_rows_layout.glsl"

// X's texel xt plus R's texel t
vec4 x_at(uint xt, uint t)
{
    vec4 v = texelFetch(X4, int(xt));
    return RESIDUAL ? v + texelFetch(R4, int(t)) : v; // float32: the sum is already rounded
}

// normalized texel t of the row (element j0 = 4 (t - base4) on), mapped and clamped, as words;
// first_channel: AFFINE_PER_CHANNEL's pair of the row's element 0
uvec4 finish(vec4 v, uint j0, float mean, float inv_std, vec2 row_ss, uint first_channel)
{
    v = (v - mean) * inv_std;
    if (AFFINE == AFFINE_PER_ROW) v = v * row_ss.x + row_ss.y;
    if (AFFINE == AFFINE_PER_CHANNEL) {
        uint k = first_channel + j0 / pc.channel_len;
        vec4 t = texelFetch(SS4, int(k / 2u));
        vec2 ss = k % 2u == 0u ? t.xy : t.zw;
        v = v * ss.x + ss.y;
    }
    if (AFFINE == AFFINE_PER_ELEMENT) {
        uint k = (j0 % pc.period) / 2u;
        vec4 a = texelFetch(SS4, int(k)), b = texelFetch(SS4, int(k + 1u));
        v = v * vec4(a.x, a.z, b.x, b.z) + vec4(a.y, a.w, b.y, b.w);
    }
    return uvec4(floatBitsToUint(fused_clamp(CLAMP, v.x, LO, HI)), floatBitsToUint(fused_clamp(CLAMP, v.y, LO, HI)),
                 floatBitsToUint(fused_clamp(CLAMP, v.z, LO, HI)), floatBitsToUint(fused_clamp(CLAMP, v.w, LO, HI)));
}

float hsum(vec4 v) { return (v.x + v.y) + (v.z + v.w); }

// The corrected two-pass variance: the deviations' own sum corrects the mean's rounding (rows of
// large mean against small deviations: [9,768] of mean 1000 and deviation 0.01 had errors of
// 0.11 against a float64 reference without it, where PyTorch's float32 kernel has 0.007).
float corrected(inout float mean, float dsum, float dsq)
{
    float c = dsum / float(pc.len);
    mean += c;
    return max(dsq / float(pc.len) - c * c, 0.0);
}

void main()
{
    uint row = linear_id();
    if (row >= pc.rows) return;
    uint n4 = N4 > 0u ? N4 : pc.len / 4u, base4 = row * n4, xbase4 = STRIDED == 2u ? kept_row_start(row) / 4u : base4;
    float mean, variance;
    vec4 v[CACHED];
    if (N4 > 0u) {
        vec4 acc = vec4(0.0);
        [[unroll]] for (uint j = 0u; j < N4; j++) {
            v[j] = x_at(xbase4 + j, base4 + j);
            acc += v[j];
        }
        mean = hsum(acc) / float(pc.len);
        acc = vec4(0.0);
        vec4 dsum = vec4(0.0);
        [[unroll]] for (uint j = 0u; j < N4; j++) {
            vec4 d = v[j] - mean;
            dsum += d;
            acc += d * d;
        }
        variance = corrected(mean, hsum(dsum), hsum(acc));
    } else {
        vec4 acc = vec4(0.0);
        for (uint j = 0u; j < n4; j++) acc += x_at(xbase4 + j, base4 + j);
        mean = hsum(acc) / float(pc.len);
        acc = vec4(0.0);
        vec4 dsum = vec4(0.0);
        for (uint j = 0u; j < n4; j++) {
            vec4 d = x_at(xbase4 + j, base4 + j) - mean;
            dsum += d;
            acc += d * d;
        }
        variance = corrected(mean, hsum(dsum), hsum(acc));
    }
    float inv_std = EPS_OUTSIDE_SQRT != 0u ? 1.0 / (sqrt(variance) + pc.eps) : 1.0 / sqrt(variance + pc.eps);
    if (!RESIDUAL) stats[row] = vec2(mean, inv_std);
    vec2 row_ss = vec2(1.0, 0.0);
    if (AFFINE == AFFINE_PER_ROW) {
        uint k = row % pc.period;
        vec4 t = texelFetch(SS4, int(k / 2u));
        row_ss = k % 2u == 0u ? t.xy : t.zw;
    }
    uint first_channel = AFFINE == AFFINE_PER_CHANNEL ? (row % pc.period) * (pc.len / pc.channel_len) : 0u;
    if (N4 > 0u) {
        [[unroll]] for (uint j = 0u; j < N4; j++) y4[base4 + j] = finish(v[j], 4u * j, mean, inv_std, row_ss, first_channel);
    } else {
        for (uint j = 0u; j < n4; j++)
            y4[base4 + j] = finish(x_at(xbase4 + j, base4 + j), 4u * j, mean, inv_std, row_ss, first_channel);
    }
}
