#version 450
// AffineGrid: one invocation per grid point (n, d, h, w). The point's normalized base
// coordinates (x along W, y along H, z along D) are -1 + (2i + 1) / L, or with align_corners
// -1 + 2i / (L - 1) (-1 for L = 1); the output is theta[n] times (x, y[, z], 1).
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const bool ALIGN = false;

layout(std430, binding = 0) readonly buffer Theta { uint theta[]; };
layout(std430, binding = 1) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count, spatial; // spatial: 2 or 3
    uint len[3];         // D, H, W (D = 1 for 2-D)
} pc;

float base(uint i, uint len)
{
    if (ALIGN) return len == 1u ? -1.0 : -1.0 + 2.0 * float(i) / float(len - 1u);
    return float(2u * i + 1u) / float(len) - 1.0;
}

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint w = i % pc.len[2], h = (i / pc.len[2]) % pc.len[1], d = (i / (pc.len[2] * pc.len[1])) % pc.len[0];
    uint n = i / (pc.len[2] * pc.len[1] * pc.len[0]), s = pc.spatial;
    float coord[3] = float[3](base(w, pc.len[2]), base(h, pc.len[1]), base(d, pc.len[0]));
    uint t = n * s * (s + 1u);
    for (uint r = 0u; r < s; r++) {
        float acc = uintBitsToFloat(theta[t + r * (s + 1u) + s]);
        for (uint k = 0u; k < s; k++) acc += uintBitsToFloat(theta[t + r * (s + 1u) + k]) * coord[k];
        y[i * s + r] = floatBitsToUint(round_to_dtype(DT, acc));
    }
}
