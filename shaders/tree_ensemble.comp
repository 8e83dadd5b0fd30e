#version 450
// ai.onnx.ml TreeEnsemble: one invocation per row of X walks every tree from its root to a
// leaf, aggregates the leaves' weights into the row's targets (AGG), then applies POST.
//
// table: nodes of 6 words (feature, mode | missing_tracks_true << 8, split bits or the
// offset of its set, true child, false child, set size), a child >= 0 being a node and
// -1 - l leaf l; the trees' roots (children too) from roots_at; leaves of 2 words (weight
// bits, target) from leaves_at; the sets' members (float bits) where the nodes say.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint AGG = 1u;  // 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX
layout(constant_id = 2) const uint POST = 0u; // 0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Table { int table[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
layout(push_constant) uniform Push {
    uint rows, features, targets, trees, nodes, roots_at, leaves_at;
} pc;

const float FLT_MAX = 3.40282347e38;

bool goes_true(uint node, float v)
{
    uint mode = uint(table[node + 1u]) & 0xffu;
    if (isnan(v)) return (uint(table[node + 1u]) >> 8) != 0u;
    float split = intBitsToFloat(table[node + 2u]);
    if (mode == 0u) return v <= split;
    if (mode == 1u) return v < split;
    if (mode == 2u) return v >= split;
    if (mode == 3u) return v > split;
    if (mode == 4u) return v == split;
    if (mode == 5u) return v != split;
    uint at = uint(table[node + 2u]), size = uint(table[node + 5u]);
    for (uint k = 0u; k < size; k++)
        if (intBitsToFloat(table[at + k]) == v) return true;
    return false;
}

// ONNX Runtime's approximation (ml_common.h)
float probit(float p)
{
    float v = 2.0 * p - 1.0, sgn = v < 0.0 ? -1.0 : 1.0;
    float l = log((1.0 - v) * (1.0 + v));
    float a = 2.0 / (3.14159 * 0.147) + 0.5 * l, b = 1.0 / 0.147 * l;
    return 1.41421356 * sgn * sqrt(-a + sqrt(a * a - b));
}

void main()
{
    uint row = linear_id();
    if (row >= pc.rows) return;
    uint base = row * pc.targets;
    for (uint t = 0u; t < pc.targets; t++) y[base + t] = AGG == 2u ? FLT_MAX : AGG == 3u ? -FLT_MAX : 0.0;
    for (uint tree = 0u; tree < pc.trees; tree++) {
        int c = table[pc.roots_at + tree];
        for (uint steps = 0u; c >= 0 && steps <= pc.nodes; steps++) { // the plan rejects cycles
            uint node = uint(c) * 6u;
            c = goes_true(node, x[row * pc.features + uint(table[node])]) ? table[node + 3u] : table[node + 4u];
        }
        if (c >= 0) continue;
        uint leaf = pc.leaves_at + uint(-1 - c) * 2u;
        float w = intBitsToFloat(table[leaf]);
        uint at = base + uint(table[leaf + 1u]);
        if (AGG == 0u) y[at] += w / float(pc.trees);
        else if (AGG == 1u) y[at] += w;
        else if (AGG == 2u) y[at] = min(y[at], w);
        else y[at] = max(y[at], w);
    }
    if (POST == 1u || POST == 3u) {
        float m = -FLT_MAX, sum = 0.0;
        for (uint t = 0u; t < pc.targets; t++) m = max(m, y[base + t]);
        for (uint t = 0u; t < pc.targets; t++) {
            float v = y[base + t];
            v = POST == 3u && abs(v) <= 1e-7 ? 0.0 : exp(v - m);
            y[base + t] = v;
            sum += v;
        }
        for (uint t = 0u; t < pc.targets; t++) y[base + t] /= sum;
    } else if (POST == 2u) {
        for (uint t = 0u; t < pc.targets; t++) y[base + t] = 1.0 / (1.0 + exp(-y[base + t]));
    } else if (POST == 4u) {
        for (uint t = 0u; t < pc.targets; t++) y[base + t] = probit(y[base + t]);
    }
}
