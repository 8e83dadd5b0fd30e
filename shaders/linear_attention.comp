#version 450
// LinearAttention: one invocation per (b, KV head h, value dim m) runs the T steps in order on
// column m of the state S[b, h] (d_k entries, held in `state`, which is present_state or a
// scratch value). Per step t, with k, v, q the step's vectors:
//   gated:  S[d] *= exp(g[d])            (g per head or per key dim)
//   delta:  u = beta * (v[m] - sum_d S[d] k[d]), else u = v[m]
//   write:  S[d] += k[d] * u
//   read:   out[b, t, hq, m] = scale * sum_d q_hq[d] S[d] for the query heads hq of group h
// Query, key and value are packed in `qkv` (key from k_at, value from v_at); past_state, decay
// (from decay_at) and beta (from beta_at) in `params`. Arithmetic in fp32.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;

layout(std430, binding = 0) readonly buffer QKV { uint qkv[]; };
layout(std430, binding = 1) readonly buffer Params { uint params[]; };
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };
layout(std430, binding = 3) buffer State { uint state[]; };
layout(push_constant) uniform Push {
    uint columns, T, Hq, Hkv, dk, dv, k_at, v_at, has_past, decay_mode, beta_mode, decay_at, beta_at;
    float scale;
} pc;

float f(uint w) { return uintBitsToFloat(w); }

void main()
{
    uint i = linear_id();
    if (i >= pc.columns) return;
    uint m = i % pc.dv, h = (i / pc.dv) % pc.Hkv, b = i / (pc.dv * pc.Hkv);
    uint group = pc.Hq / pc.Hkv;
    uint s0 = (b * pc.Hkv + h) * pc.dk * pc.dv + m; // S[d] at s0 + d * dv
    for (uint d = 0u; d < pc.dk; d++)
        state[s0 + d * pc.dv] = pc.has_past != 0u ? params[s0 + d * pc.dv] : floatBitsToUint(0.0);
    for (uint t = 0u; t < pc.T; t++) {
        uint bt = b * pc.T + t;
        uint k0 = pc.k_at + (bt * pc.Hkv + h) * pc.dk;
        if (pc.decay_mode != 0u)
            for (uint d = 0u; d < pc.dk; d++) {
                uint g = pc.decay_at + (pc.decay_mode == 1u ? bt * pc.Hkv + h : (bt * pc.Hkv + h) * pc.dk + d);
                state[s0 + d * pc.dv] = floatBitsToUint(f(state[s0 + d * pc.dv]) * exp(f(params[g])));
            }
        float u = f(qkv[pc.v_at + (bt * pc.Hkv + h) * pc.dv + m]);
        if (pc.beta_mode != 0u) {
            float retrieved = 0.0;
            for (uint d = 0u; d < pc.dk; d++) retrieved += f(state[s0 + d * pc.dv]) * f(qkv[k0 + d]);
            u = f(params[pc.beta_at + (pc.beta_mode == 1u ? bt * pc.Hkv + h : bt)]) * (u - retrieved);
        }
        for (uint d = 0u; d < pc.dk; d++)
            state[s0 + d * pc.dv] = floatBitsToUint(f(state[s0 + d * pc.dv]) + f(qkv[k0 + d]) * u);
        for (uint g = 0u; g < group; g++) {
            uint hq = h * group + g, q0 = (bt * pc.Hq + hq) * pc.dk;
            float acc = 0.0;
            for (uint d = 0u; d < pc.dk; d++) acc += f(qkv[q0 + d]) * f(state[s0 + d * pc.dv]);
            y[(bt * pc.Hq + hq) * pc.dv + m] = floatBitsToUint(round_to_dtype(DT, pc.scale * acc));
        }
    }
    if (DT != DT_F32) // present_state in the state dtype
        for (uint d = 0u; d < pc.dk; d++) state[s0 + d * pc.dv] = floatBitsToUint(round_to_dtype(DT, f(state[s0 + d * pc.dv])));
}
