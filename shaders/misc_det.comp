#version 450
// Det of square matrices up to 16x16: one invocation per matrix, LU decomposition with
// partial pivoting in fp32.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push { uint count; uint n; } pc;

void main()
{
    uint id = linear_id();
    if (id >= pc.count) return;
    uint n = pc.n;
    float m[256];
    for (uint e = 0u; e < n * n; e++) m[e] = uintBitsToFloat(x[id * n * n + e]);
    float det = 1.0;
    for (uint k = 0u; k < n; k++) {
        uint pivot = k;
        for (uint i = k + 1u; i < n; i++)
            if (abs(m[i * n + k]) > abs(m[pivot * n + k])) pivot = i;
        if (m[pivot * n + k] == 0.0) {
            det = 0.0;
            break;
        }
        if (pivot != k) {
            for (uint j = 0u; j < n; j++) {
                float t = m[k * n + j];
                m[k * n + j] = m[pivot * n + j];
                m[pivot * n + j] = t;
            }
            det = -det;
        }
        float d = m[k * n + k];
        det *= d;
        for (uint i = k + 1u; i < n; i++) {
            float f = m[i * n + k] / d;
            for (uint j = k + 1u; j < n; j++) m[i * n + j] -= f * m[k * n + j];
        }
    }
    y[id] = floatBitsToUint(round_to_dtype(DT, det));
}
