#version 450
// CausalConvWithState. OUTPUT: y[b, c, t] = act(sum_j w[c, j] * p[b, c, t + j] + bias[c]) over
// the padded sequence p = past_state (or zeros) ++ input, length L + k - 1; the convolution is
// rounded to the dtype before the SiLU, as ONNX's reference. The weights, then the biases, sit
// packed in one buffer (shaders/pack_words.comp). STATE: present[b, c, i] = p[b, c, L + i].
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const bool STATE = false;
layout(constant_id = 3) const bool SILU = false;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) readonly buffer Past { uint past[]; };
layout(std430, binding = 2) readonly buffer Params { uint params[]; }; // OUTPUT only
layout(std430, binding = 3) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push { uint count, C, L, k, has_past, has_bias; } pc;

// element j of the padded sequence of row r = b * C + c
float padded(uint r, uint j)
{
    uint km1 = pc.k - 1u;
    if (j >= km1) return uintBitsToFloat(x[r * pc.L + j - km1]);
    return pc.has_past != 0u ? uintBitsToFloat(past[r * km1 + j]) : 0.0;
}

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    if (STATE) {
        uint km1 = pc.k - 1u;
        y[i] = floatBitsToUint(padded(i / km1, pc.L + i % km1));
        return;
    }
    uint t = i % pc.L, r = i / pc.L, c = r % pc.C;
    float acc = pc.has_bias != 0u ? uintBitsToFloat(params[pc.C * pc.k + c]) : 0.0;
    for (uint j = 0u; j < pc.k; j++) acc += uintBitsToFloat(params[c * pc.k + j]) * padded(r, t + j);
    acc = round_to_dtype(DT, acc);
    if (SILU) acc = acc / (1.0 + exp(-acc));
    y[i] = floatBitsToUint(round_to_dtype(DT, acc));
}
