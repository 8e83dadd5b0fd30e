// RNN, GRU and LSTM (src/ops/rnn.c). Two kernels:
//  RNN_PROJ: the input projections of every step at once,
//    xp[d][t][n][r] = sum_k X[t][n][k] * W[d][r][k] + Wb[d][r]   (r over the gates' G*H rows)
//  RNN_INIT: fills the state buffer (below) from the optional inputs; RNN_FINAL: Y_h, Y_c.
//  otherwise: one time step s of every direction, batch item and hidden unit (an invocation
//    each). The hidden state ping-pongs between two halves of the state buffer (step s
//    reads half s & 1 and writes the other); the LSTM cell state is updated in place. A batch item's
//    steps past its sequence length keep its state and write zeros to Y.
// Gate order as ONNX: RNN (one gate), GRU z r h, LSTM i o f c; peepholes i o f.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KIND = 0u; // 0 RNN, 1 GRU, 2 LSTM
layout(constant_id = 2) const uint DT = 0u;   // the outputs' dtype (rounding)
layout(constant_id = 3) const uint LBR = 0u;  // GRU linear_before_reset
layout(constant_id = 4) const uint PHASE = 0u; // GRU with LBR 0: 0 writes r * h_prev, 1 the rest
layout(constant_id = 5) const uint INPUT_FORGET = 0u; // LSTM input_forget: f = 1 - i

#define G (KIND == 0u ? 1u : KIND == 1u ? 3u : 4u)

#ifdef RNN_PROJ
layout(std430, binding = 0) readonly buffer Xb { uint x[]; };
layout(std430, binding = 1) readonly buffer Wb { uint w[]; };
layout(std430, binding = 2) readonly buffer Bb { uint bias[]; };
layout(std430, binding = 3) writeonly buffer XPb { float xp[]; };
layout(push_constant) uniform Push { uint S, N, I, H, D, layout1, has_b; } pc;

void main()
{
    uint id = linear_id();
    uint GH = G * pc.H;
    if (id >= pc.D * pc.S * pc.N * GH) return;
    uint r = id % GH, n = (id / GH) % pc.N, t = (id / (GH * pc.N)) % pc.S, d = id / (GH * pc.N * pc.S);
    uint xb = (pc.layout1 != 0u ? n * pc.S + t : t * pc.N + n) * pc.I;
    uint wb = (d * GH + r) * pc.I;
    float acc = 0.0;
    for (uint k = 0u; k < pc.I; k++) acc += uintBitsToFloat(x[xb + k]) * uintBitsToFloat(w[wb + k]);
    if (pc.has_b != 0u) acc += uintBitsToFloat(bias[d * 2u * GH + r]);
    xp[id] = acc;
}
#elif defined(RNN_INIT)
// Fills the state buffer (see ST_* below). PART 0 (a = initial_h, b = initial_c): h and c, or
// zeros; PART 1 (a = B, b = sequence_lens, c = P): the recurrent biases, the sequence lengths
// (S where absent, clamped to [0, S]) and the peepholes.
layout(constant_id = 6) const uint PART = 0u;
layout(std430, binding = 0) readonly buffer Ab { uint a[]; };
layout(std430, binding = 1) readonly buffer Bb { uint b[]; };
layout(std430, binding = 2) readonly buffer Cb { uint c[]; };
layout(std430, binding = 3) writeonly buffer STb { float st[]; };
layout(push_constant) uniform Push { uint S, N, H, D, flags; } pc;

bool has(uint f) { return (pc.flags & f) != 0u; }

void main()
{
    uint id = linear_id();
    uint DNH = pc.D * pc.N * pc.H, GH = G * pc.H;
    if (PART == 0u) {
        if (id >= DNH) return;
        uint j = id % pc.H, n = (id / pc.H) % pc.N, d = id / (pc.H * pc.N);
        uint io = (has(32u) ? n * pc.D + d : d * pc.N + n) * pc.H + j;
        st[id] = has(4u) ? uintBitsToFloat(a[io]) : 0.0;
        st[2u * DNH + id] = has(8u) ? uintBitsToFloat(b[io]) : 0.0;
        return;
    }
    if (id < pc.D * GH) st[4u * DNH + id] = has(1u) ? uintBitsToFloat(a[(id / GH) * 2u * GH + GH + id % GH]) : 0.0;
    if (id < pc.D * 3u * pc.H) st[4u * DNH + pc.D * GH + id] = has(16u) ? uintBitsToFloat(c[id]) : 0.0;
    if (id < pc.N) st[4u * DNH + pc.D * GH + pc.D * 3u * pc.H + id] = float(has(2u) ? clamp(int(b[id]), 0, int(pc.S)) : int(pc.S));
}
#elif defined(RNN_FINAL)
// Y_h and Y_c from the state after the last step (h in half S & 1).
layout(std430, binding = 0) readonly buffer STb { float st[]; };
layout(std430, binding = 1) writeonly buffer YHb { uint yh[]; };
layout(std430, binding = 2) writeonly buffer YCb { uint yc[]; };
layout(push_constant) uniform Push { uint S, N, H, D, flags; } pc;

bool has(uint f) { return (pc.flags & f) != 0u; }

void main()
{
    uint id = linear_id();
    uint DNH = pc.D * pc.N * pc.H;
    if (id >= DNH) return;
    uint j = id % pc.H, n = (id / pc.H) % pc.N, d = id / (pc.H * pc.N);
    uint io = (has(32u) ? n * pc.D + d : d * pc.N + n) * pc.H + j;
    if (has(128u)) yh[io] = floatBitsToUint(round_to_dtype(DT, st[(pc.S & 1u) * DNH + id]));
    if (has(256u)) yc[io] = floatBitsToUint(round_to_dtype(DT, st[2u * DNH + id]));
}
#else
// the state buffer: h (two halves) [2][D][N][H], c [D][N][H], r * h_prev [D][N][H],
// recurrent biases [D][G*H], peepholes [D][3H], sequence lengths [N] (as floats)
layout(std430, binding = 0) readonly buffer XPb { float xp[]; };
layout(std430, binding = 1) readonly buffer Rb { uint rw[]; };
layout(std430, binding = 2) buffer STb { float st[]; };
layout(std430, binding = 3) writeonly buffer Yb { uint y[]; };
// flags: 32 layout 1, 64 Y, 512 the first direction runs in reverse,
// 1024 clip. acts: 4 bits per activation, three per direction (f, g, h; RNN uses f, GRU f
// and g).
layout(push_constant) uniform Push {
    uint s, S, N, H, D, flags, acts;
    float clip;
    float alpha[6], beta[6];
} pc;

#define DNH (pc.D * pc.N * pc.H)
#define ST_C (2u * DNH)
#define ST_RH (3u * DNH)
#define ST_RB (4u * DNH)
#define ST_P (ST_RB + pc.D * G * pc.H)
#define ST_LENS (ST_P + pc.D * 3u * pc.H)

bool has(uint f) { return (pc.flags & f) != 0u; }

float act(uint d, uint which, float v)
{
    uint i = d * 3u + which;
    uint a = (pc.acts >> (4u * i)) & 15u;
    float al = pc.alpha[i], be = pc.beta[i];
    switch (a) {
    case 0u: return max(v, 0.0);
    case 1u: return tanh(clamp(v, -20.0, 20.0));
    case 2u: return 1.0 / (1.0 + exp(-v));
    case 3u: return al * v + be;
    case 4u: return v >= 0.0 ? v : al * v;
    case 5u: return v > al ? v : 0.0;
    case 6u: return al * tanh(clamp(be * v, -20.0, 20.0));
    case 7u: return clamp(al * v + be, 0.0, 1.0);
    case 8u: return v >= 0.0 ? v : al * (exp(v) - 1.0);
    case 9u: return v / (1.0 + abs(v));
    default: return v > 20.0 ? v : log(1.0 + exp(v)); // 10: Softplus
    }
}

float clipped(float v) { return has(1024u) ? clamp(v, -pc.clip, pc.clip) : v; }


float h_prev(uint d, uint n, uint k) { return st[(pc.s & 1u) * DNH + (d * pc.N + n) * pc.H + k]; }

// sum_k h_prev[k] * R[d][g*H + j][k]
float rec(uint d, uint n, uint g, uint j)
{
    uint rb = (d * G * pc.H + g * pc.H + j) * pc.H;
    float acc = 0.0;
    for (uint k = 0u; k < pc.H; k++) acc += h_prev(d, n, k) * uintBitsToFloat(rw[rb + k]);
    return acc;
}

float rbias(uint d, uint g, uint j) { return st[ST_RB + d * G * pc.H + g * pc.H + j]; }

void main()
{
    uint id = linear_id();
    if (id >= pc.D * pc.N * pc.H) return;
    uint j = id % pc.H, n = (id / pc.H) % pc.N, d = id / (pc.H * pc.N);
    int len = int(st[ST_LENS + n]);
    bool live = int(pc.s) < len;
    bool reverse = d == 1u || has(512u);
    uint t = live && reverse ? uint(len) - 1u - pc.s : pc.s;
    uint xb = ((d * pc.S + t) * pc.N + n) * G * pc.H;
    float hp = h_prev(d, n, j);
    if (KIND == 1u && LBR == 0u && PHASE == 0u) { // r * h_prev for the second phase
        float r = act(d, 0u, clipped(xp[xb + pc.H + j] + rec(d, n, 1u, j) + rbias(d, 1u, j)));
        st[ST_RH + id] = r * hp;
        return;
    }
    float hn = hp, cn = 0.0;
    if (KIND == 0u) {
        hn = act(d, 0u, clipped(xp[xb + j] + rec(d, n, 0u, j) + rbias(d, 0u, j)));
    } else if (KIND == 1u) {
        float z = act(d, 0u, clipped(xp[xb + j] + rec(d, n, 0u, j) + rbias(d, 0u, j)));
        float hh;
        if (LBR != 0u) {
            float r = act(d, 0u, clipped(xp[xb + pc.H + j] + rec(d, n, 1u, j) + rbias(d, 1u, j)));
            hh = act(d, 1u, clipped(xp[xb + 2u * pc.H + j] + r * (rec(d, n, 2u, j) + rbias(d, 2u, j))));
        } else {
            uint rb = (d * 3u * pc.H + 2u * pc.H + j) * pc.H, sb = (d * pc.N + n) * pc.H;
            float acc = 0.0;
            for (uint k = 0u; k < pc.H; k++) acc += st[ST_RH + sb + k] * uintBitsToFloat(rw[rb + k]);
            hh = act(d, 1u, clipped(xp[xb + 2u * pc.H + j] + acc + rbias(d, 2u, j)));
        }
        hn = (1.0 - z) * hh + z * hp;
    } else {
        float cp = st[ST_C + id];
        float pi = st[ST_P + d * 3u * pc.H + j], po = st[ST_P + d * 3u * pc.H + pc.H + j];
        float pf = st[ST_P + d * 3u * pc.H + 2u * pc.H + j];
        float gi = act(d, 0u, clipped(xp[xb + j] + rec(d, n, 0u, j) + rbias(d, 0u, j) + pi * cp));
        float gf = INPUT_FORGET != 0u ? 1.0 - gi
                 : act(d, 0u, clipped(xp[xb + 2u * pc.H + j] + rec(d, n, 2u, j) + rbias(d, 2u, j) + pf * cp));
        float gc = act(d, 1u, clipped(xp[xb + 3u * pc.H + j] + rec(d, n, 3u, j) + rbias(d, 3u, j)));
        float c = gf * cp + gi * gc;
        float go = act(d, 0u, clipped(xp[xb + pc.H + j] + rec(d, n, 1u, j) + rbias(d, 1u, j) + po * c));
        cn = live ? c : cp;
        if (live) hn = go * act(d, 2u, c);
        st[ST_C + id] = cn;
    }
    if (!live) hn = hp;
    st[((pc.s + 1u) & 1u) * DNH + id] = hn;
    if (has(64u)) {
        uint yi = (has(32u) ? (n * pc.S + t) * pc.D + d : (t * pc.D + d) * pc.N + n) * pc.H + j;
        y[yi] = floatBitsToUint(round_to_dtype(DT, live ? hn : 0.0));
    }
}
#endif
