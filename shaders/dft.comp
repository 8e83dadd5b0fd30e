#version 450
// DFT and STFT as a direct sum: one invocation per output frequency (outer, k, inner). The
// input is [outer / frames, L, inner, cin] (cin 1: real, 2: complex); frame f of an outer
// row starts at f * step along L (STFT; DFT has frames 1, step 0). The twiddle for k * t is
// taken mod n and reduced to a quarter turn, so multiples of a quarter turn are exact
// (a real signal's DC and Nyquist bins get imaginary parts of exactly 0).
//   forward:      y[k] = sum_{t < min(L, n)} w[t] x[t] e^{-2 pi i k t / n}
//   inverse:      y[t] = 1/n sum_{k < min(L, n)} x[k] e^{+2 pi i k t / n}
//   inverse real: y[t] = 1/n sum_{k < n} X[k] e^{+2 pi i k t / n}, real part, X the
//                 Hermitian extension of the L one-sided bins (X[k] = conj X[n - k])
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const uint MODE = 0u; // 0 forward, 1 inverse, 2 inverse real
layout(constant_id = 3) const bool WINDOW = false;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) readonly buffer Window { uint window[]; };
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count, L, inner, n, n_out, frames, step, cin;
} pc;

// e^{2 pi i m / n} for 0 <= m < n
vec2 twiddle(uint m)
{
    uint q = (4u * m) / pc.n, r = 4u * m - q * pc.n;
    float a = 1.57079632679489662 * float(r) / float(pc.n);
    float c = r == 0u ? 1.0 : cos(a), s = r == 0u ? 0.0 : sin(a);
    return q == 0u ? vec2(c, s) : q == 1u ? vec2(-s, c) : q == 2u ? vec2(-c, -s) : vec2(s, -c);
}

vec2 load(uint at)
{
    float re = uintBitsToFloat(x[at * pc.cin]);
    return vec2(re, pc.cin == 2u ? uintBitsToFloat(x[at * pc.cin + 1u]) : 0.0);
}

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint in_i = i % pc.inner, k = (i / pc.inner) % pc.n_out, o = i / (pc.inner * pc.n_out);
    uint base = ((o / pc.frames) * pc.L + (o % pc.frames) * pc.step) * pc.inner + in_i;
    vec2 acc = vec2(0.0);
    uint m = 0u; // k * t mod n
    if (MODE == 2u) {
        for (uint j = 0u; j < pc.n; j++) {
            uint bin = 2u * j <= pc.n ? j : pc.n - j;
            if (bin < pc.L) {
                vec2 v = load(base + bin * pc.inner);
                if (bin != j) v.y = -v.y;
                vec2 w = twiddle(m);
                acc.x += v.x * w.x - v.y * w.y;
            }
            m += k;
            if (m >= pc.n) m -= pc.n;
        }
        y[i] = floatBitsToUint(round_to_dtype(DT, acc.x / float(pc.n)));
        return;
    }
    uint len = min(pc.L, pc.n);
    for (uint t = 0u; t < len; t++) {
        vec2 v = load(base + t * pc.inner);
        if (WINDOW) v *= uintBitsToFloat(window[t]);
        vec2 w = twiddle(m);
        if (MODE == 0u) w.y = -w.y;
        acc += vec2(v.x * w.x - v.y * w.y, v.x * w.y + v.y * w.x);
        m += k;
        if (m >= pc.n) m -= pc.n;
    }
    if (MODE == 1u) acc /= float(pc.n);
    y[2u * i] = floatBitsToUint(round_to_dtype(DT, acc.x));
    y[2u * i + 1u] = floatBitsToUint(round_to_dtype(DT, acc.y));
}
