#version 450
// GridSample over 4-D (N, C, H, W) and 5-D (N, C, D, H, W) inputs, as ONNX's reference: one
// invocation per output element. The grid holds normalized (x, y[, z]) per output position;
// each is denormalized (align_corners), rounded half to even for nearest, brought inside the
// borders (border: clamped; reflection: reflected), then sampled with 1 (nearest), 2 (linear)
// or 4 (cubic, Keys a = -0.75) taps per dim; taps outside the input read 0 (zeros), the
// clamped index (border) or the reflected one (reflection). A 4-D input is a 5-D one with
// D = 1, sampled with one tap at depth 0.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const uint MODE = 0u;    // 0 linear, 1 nearest, 2 cubic
layout(constant_id = 3) const uint PADDING = 0u; // 0 zeros, 1 border, 2 reflection
layout(constant_id = 4) const bool ALIGN = false;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) readonly buffer Grid { uint grid[]; };
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count, C, spatial; // spatial: 2 or 3
    uint in_dims[3];        // D, H, W (D = 1 for 4-D)
    uint out_dims[3];
} pc;

float denormalize(float v, float len)
{
    return ALIGN ? (v + 1.0) / 2.0 * (len - 1.0) : ((v + 1.0) * len - 1.0) / 2.0;
}

float reflect_into(float v, float lo, float hi)
{
    float range = hi - lo;
    if (v < lo) {
        float dx = lo - v;
        float n = trunc(dx / range), r = dx - n * range;
        return mod(n, 2.0) == 0.0 ? lo + r : hi - r;
    }
    if (v > hi) {
        float dx = v - hi;
        float n = trunc(dx / range), r = dx - n * range;
        return mod(n, 2.0) == 0.0 ? hi - r : lo + r;
    }
    return v;
}

float border_lo(uint len) { return ALIGN ? 0.0 : -0.5; }
float border_hi(uint len) { return ALIGN ? float(len) - 1.0 : float(len) - 0.5; }

// the index read for tap i of a dim of length len; -1: outside (zeros)
int tap_index(int i, uint len)
{
    if (i >= 0 && i < int(len)) return i;
    if (PADDING == 0u) return -1;
    if (PADDING == 1u) return clamp(i, 0, int(len) - 1);
    return int(reflect_into(float(i), border_lo(len), border_hi(len)));
}

void cubic_coeffs(float t, out float w[4])
{
    const float A = -0.75;
    t = abs(t);
    w[0] = ((A * (t + 1.0) - 5.0 * A) * (t + 1.0) + 8.0 * A) * (t + 1.0) - 4.0 * A;
    w[1] = ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0;
    w[2] = ((A + 2.0) * (1.0 - t) - (A + 3.0)) * (1.0 - t) * (1.0 - t) + 1.0;
    w[3] = ((A * (2.0 - t) - 5.0 * A) * (2.0 - t) + 8.0 * A) * (2.0 - t) - 4.0 * A;
}

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint out_spatial = pc.out_dims[0] * pc.out_dims[1] * pc.out_dims[2];
    uint o = i % out_spatial, nc = i / out_spatial, n = nc / pc.C;
    uint in_spatial = pc.in_dims[0] * pc.in_dims[1] * pc.in_dims[2];
    uint g = (n * out_spatial + o) * pc.spatial;
    // per dim (0: D, 1: H, 2: W): first tap, tap count and weights
    int first[3];
    uint taps[3];
    float w[3][4];
    for (uint d = 0u; d < 3u; d++) {
        taps[d] = 1u;
        first[d] = 0;
        w[d][0] = 1.0;
        if (d == 0u && pc.spatial == 2u) continue;
        uint len = pc.in_dims[d];
        // the grid's last axis runs x (W), y (H), z (D)
        float v = denormalize(uintBitsToFloat(grid[g + (2u - d)]), float(len));
        if (MODE == 1u) v = roundEven(v);
        float lo = border_lo(len), hi = border_hi(len);
        if (v < lo || v > hi) {
            if (PADDING == 1u) v = clamp(v, 0.0, float(len) - 1.0);
            else if (PADDING == 2u) v = reflect_into(v, lo, hi);
        }
        if (MODE == 1u) {
            first[d] = int(v); // truncation, as the reference's astype(int32)
        } else if (MODE == 0u) {
            float f = floor(v), t = v - f;
            first[d] = int(f);
            taps[d] = 2u;
            w[d][0] = 1.0 - t;
            w[d][1] = t;
        } else {
            float f = floor(v);
            first[d] = int(f) - 1;
            taps[d] = 4u;
            float c[4];
            cubic_coeffs(v - f, c);
            for (uint k = 0u; k < 4u; k++) w[d][k] = c[k];
        }
    }
    uint base = nc * in_spatial;
    float acc = 0.0;
    for (uint a = 0u; a < taps[0]; a++) {
        int id = tap_index(first[0] + int(a), pc.in_dims[0]);
        if (id < 0) continue;
        for (uint b = 0u; b < taps[1]; b++) {
            int ih = tap_index(first[1] + int(b), pc.in_dims[1]);
            if (ih < 0) continue;
            for (uint k = 0u; k < taps[2]; k++) {
                int iw = tap_index(first[2] + int(k), pc.in_dims[2]);
                if (iw < 0) continue;
                uint at = base + (uint(id) * pc.in_dims[1] + uint(ih)) * pc.in_dims[2] + uint(iw);
                acc += w[0][a] * w[1][b] * w[2][k] * uintBitsToFloat(x[at]);
            }
        }
    }
    y[i] = floatBitsToUint(round_to_dtype(DT, acc));
}
