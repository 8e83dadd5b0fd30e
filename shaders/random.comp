#version 450
// RandomUniform(Like), RandomNormal(Like), Bernoulli and Multinomial. Counter-based: the
// numbers for element i are a hash of (i, the node's run counter, the seed) (pcg4d, Jarzynski
// & Olano 2020), so any invocation order gives the same values, a seed gives the same
// sequence in every session, and each run of the plan advances the counter (ADVANCE: a
// one-invocation dispatch after the draw) so that runs differ.
//   MODE 0: uniform in [low, high)   MODE 1: normal(mean, scale), Box-Muller
//   MODE 2: Bernoulli: 1 where u < p[i]
//   MODE 3: Multinomial: y[b, s] = a class drawn from softmax(x[b, :]), C classes
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;    // the output's dtype
layout(constant_id = 2) const uint IN_DT = 0u; // Bernoulli's and Multinomial's input dtype
layout(constant_id = 3) const uint MODE = 0u;
layout(constant_id = 4) const bool ADVANCE = false;

layout(std430, binding = 0) buffer Counter { uint counter[]; };
layout(std430, binding = 1) readonly buffer In { uint x[]; }; // Bernoulli, Multinomial (else a dummy)
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count, seed_lo, seed_hi, classes, samples;
    float a, b; // low and high, or mean and scale
} pc;

uvec4 pcg4d(uvec4 v)
{
    v = v * 1664525u + 1013904223u;
    v.x += v.y * v.w;
    v.y += v.z * v.x;
    v.z += v.x * v.y;
    v.w += v.y * v.z;
    v ^= v >> 16u;
    v.x += v.y * v.w;
    v.y += v.z * v.x;
    v.z += v.x * v.y;
    v.w += v.y * v.z;
    return v;
}

// uniforms in [0, 1) with 24 random bits
vec4 uniforms(uint i) { return vec4(pcg4d(uvec4(i, counter[0], pc.seed_lo, pc.seed_hi)) >> 8u) * (1.0 / 16777216.0); }

void store(uint i, float v) { y[i] = from_float(DT, v); }

void main()
{
    uint i = linear_id();
    if (ADVANCE) {
        if (i == 0u) counter[0] += 1u;
        return;
    }
    if (i >= pc.count) return;
    vec4 u = uniforms(i);
    if (MODE == 0u) {
        store(i, pc.a + (pc.b - pc.a) * u.x);
    } else if (MODE == 1u) {
        float r = sqrt(-2.0 * log(1.0 - u.x)); // 1 - u in (0, 1]
        store(i, pc.a + pc.b * r * cos(6.283185307179586 * u.y));
    } else if (MODE == 2u) {
        store(i, u.x < as_float(IN_DT, x[i]) ? 1.0 : 0.0);
    } else {
        uint row = (i / pc.samples) * pc.classes;
        float top = -1.0 / 0.0;
        for (uint c = 0u; c < pc.classes; c++) top = max(top, as_float(IN_DT, x[row + c]));
        float total = 0.0;
        for (uint c = 0u; c < pc.classes; c++) total += exp(as_float(IN_DT, x[row + c]) - top);
        float target = u.x * total, run = 0.0;
        uint pick = pc.classes - 1u;
        for (uint c = 0u; c < pc.classes; c++) {
            run += exp(as_float(IN_DT, x[row + c]) - top);
            if (target < run) {
                pick = c;
                break;
            }
        }
        y[i] = pick;
    }
}
