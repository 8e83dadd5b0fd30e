#version 450
#extension GL_EXT_samplerless_texture_functions : require
// Softmax and LogSoftmax of float32 rows for CPU Vulkan drivers (lavapipe): an invocation per
// row, the lanes of a workgroup on adjacent rows, no shared memory, barriers or subgroup
// operations, X read through uniform texel buffers. llvmpipe (Mesa 22.3) runs a workgroup's
// invocations as the lanes of one SIMD vector and issues a storage-buffer load as a loop over
// the lanes with a branch and a bounds check per component, whereas a texel fetch is one
// gather (shaders/matmul_cpu.glsl says more): softmax.glsl's invocation-per-row mode, reading
// words from a storage buffer, ran BERT's [96,128,128] scores at 0.7 GB/s.
// - VEC4 (rows contiguous, n a multiple of 4): X as RGBA32F texels, 4 elements a fetch, Y
//   stored as uvec4; else X as R32 words (binding 1), element k of a row at base + k * inner
//   (an axis that is not the last: adjacent lanes then read adjacent words).
// - N4 > 0 (VEC4 rows of exactly N4 texels): the row is fetched once into registers, the loops
//   unrolled, instead of three passes of fetches.
// Bindings 0 and 1 are the same tensor X; src/ops/softmax.c, plan_softmax_cpu.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KIND = 0u; // 0 Softmax, 1 LogSoftmax
layout(constant_id = 2) const bool VEC4 = false;
layout(constant_id = 3) const uint N4 = 0u;  // texels per row when the row is held in registers; 0: not

layout(binding = 0) uniform textureBuffer X4;
layout(binding = 1) uniform utextureBuffer Xw;
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
layout(std430, binding = 2) writeonly buffer Y4 { uvec4 y4[]; };
layout(push_constant) uniform Push { uint rows, n, inner; } pc;

const uint CACHED = N4 > 0u ? N4 : 1u;

vec4 finish4(vec4 v, float m, float log_sum, float inv_sum)
{
    return KIND == 1u ? v - m - log_sum : exp(v - m) * inv_sum;
}

void main()
{
    uint row = linear_id();
    if (row >= pc.rows) return;
    float m = uintBitsToFloat(0xff800000u), sum = 0.0;
    if (VEC4 && N4 > 0u) {
        uint base4 = row * N4;
        vec4 v[CACHED];
        vec4 m4 = vec4(m);
        [[unroll]] for (uint j = 0u; j < N4; j++) {
            v[j] = texelFetch(X4, int(base4 + j));
            m4 = max(m4, v[j]);
        }
        m = max(max(m4.x, m4.y), max(m4.z, m4.w));
        vec4 s4 = vec4(0.0);
        [[unroll]] for (uint j = 0u; j < N4; j++) {
            vec4 e = exp(v[j] - m);
            s4 += e;
            if (KIND == 0u) v[j] = e; // each exp once
        }
        sum = (s4.x + s4.y) + (s4.z + s4.w);
        float log_sum = log(sum), inv_sum = 1.0 / sum;
        [[unroll]] for (uint j = 0u; j < N4; j++)
            y4[base4 + j] = floatBitsToUint(KIND == 0u ? v[j] * inv_sum : v[j] - m - log_sum);
    } else if (VEC4) {
        uint n4 = pc.n / 4u, base4 = row * n4;
        vec4 m4 = vec4(m), s4 = vec4(0.0);
        for (uint j = 0u; j < n4; j++) m4 = max(m4, texelFetch(X4, int(base4 + j)));
        m = max(max(m4.x, m4.y), max(m4.z, m4.w));
        for (uint j = 0u; j < n4; j++) s4 += exp(texelFetch(X4, int(base4 + j)) - m);
        sum = (s4.x + s4.y) + (s4.z + s4.w);
        float log_sum = log(sum), inv_sum = 1.0 / sum;
        for (uint j = 0u; j < n4; j++)
            y4[base4 + j] = floatBitsToUint(finish4(texelFetch(X4, int(base4 + j)), m, log_sum, inv_sum));
    } else {
        uint base = (row / pc.inner) * pc.n * pc.inner + row % pc.inner;
        for (uint k = 0u; k < pc.n; k++) m = max(m, uintBitsToFloat(texelFetch(Xw, int(base + k * pc.inner)).x));
        for (uint k = 0u; k < pc.n; k++) sum += exp(uintBitsToFloat(texelFetch(Xw, int(base + k * pc.inner)).x) - m);
        float log_sum = log(sum), inv_sum = 1.0 / sum;
        for (uint k = 0u; k < pc.n; k++) {
            float v = uintBitsToFloat(texelFetch(Xw, int(base + k * pc.inner)).x) - m;
            y[base + k * pc.inner] = floatBitsToUint(KIND == 1u ? v - log_sum : exp(v) * inv_sum);
        }
    }
}
