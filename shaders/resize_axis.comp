#version 450
// Resize along one axis: y[o, j, k] = sum over taps t of w[j][t] * x[o, idx[j][t], k]. The taps
// (source index, weight) of every output coordinate j come from the host (src/ops/resize.c),
// which computes them exactly as the ONNX reference does for every mode.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint IN_DT = 0u;
layout(constant_id = 2) const uint OUT_DT = 0u;
layout(constant_id = 3) const bool COPY = false; // nearest: one tap of weight 1, copy the bits

layout(std430, binding = 0) readonly buffer In { uint x[]; };
// per output coordinate: n_taps pairs (index, weight bits); a first index of -1 means
// "outside the crop box: write the extrapolation value" (tf_crop_and_resize)
layout(std430, binding = 1) readonly buffer Taps { uint taps[]; };
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count;
    uint inner;   // elements after the axis
    uint out_len;
    uint in_len;
    uint n_taps;
    float extrapolation;
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint k = i % pc.inner;
    uint j = (i / pc.inner) % pc.out_len;
    uint o = i / pc.inner / pc.out_len;
    uint src = o * pc.in_len * pc.inner + k;
    uint t0 = j * pc.n_taps * 2u;
    int first = int(taps[t0]);
    if (first < 0) {
        y[i] = from_float(OUT_DT, pc.extrapolation);
        return;
    }
    if (COPY) {
        y[i] = x[src + uint(first) * pc.inner];
        return;
    }
    float acc = 0.0;
    for (uint t = 0u; t < pc.n_taps; t++) {
        uint idx = taps[t0 + 2u * t];
        float w = uintBitsToFloat(taps[t0 + 2u * t + 1u]);
        acc += w * as_float(IN_DT, x[src + idx * pc.inner]);
    }
    // integers interpolate in float and round to the nearest value
    y[i] = from_float(OUT_DT, dt_is_float(OUT_DT) ? acc : roundEven(acc));
}
