// ai.onnx.ml's tree ensembles (TreeEnsemble, TreeEnsembleRegressor, TreeEnsembleClassifier):
// one invocation per row of X walks every tree from its root to a leaf, aggregates the
// leaf's (target, weight) pairs into the row's scores (AGG), adds the base values, then
// applies POST; the classifier (CLASSIFIER defined) also writes the label of the best score.
//
// table: nodes of 6 words (feature, mode | missing_tracks_true << 8, split bits or the
// offset of its set, true child, false child, set size), a child >= 0 being a node and
// -1 - l the leaf at word leaves_at + l (its pair count, then (weight bits, target) pairs);
// each tree's root (a child too) from roots_at; the sets' members (float bits) where the
// nodes say; base values (one per score) from base_at when has_base; the classifier's
// labels (int32) from labels_at.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint AGG = 1u;  // 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX
layout(constant_id = 2) const uint POST = 0u; // 0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT
layout(constant_id = 3) const uint XDT = 0u;  // X's dtype code (integers are read as floats)
// the classifier's binary case (one class id): score 1 is score 0, score 0 becomes 1 - it
// (NONE, PROBIT) or -it, as ONNX's reference and onnxruntime
layout(constant_id = 4) const uint BINARY = 0u;

layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer Table { int table[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
#ifdef CLASSIFIER
layout(std430, binding = 3) writeonly buffer Labels { int labels[]; };
#endif
layout(push_constant) uniform Push {
    uint rows, features, targets, trees, nodes, roots_at, leaves_at, has_base, base_at, labels_at, one_label;
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

// ONNX Runtime's approximation (ml_common.h), as ONNX's reference
float probit(float p)
{
    float v = 2.0 * p - 1.0, sgn = v < 0.0 ? -1.0 : 1.0, z = (1.0 - v) * (1.0 + v);
    if (z == 0.0) return 0.0;
    float l = log(z);
    float a = 2.0 / (3.14159265 * 0.147) + 0.5 * l, b = 1.0 / 0.147 * l;
    return 1.41421356 * sgn * sqrt(-a + sqrt(a * a - b));
}

void main()
{
    uint row = linear_id();
    if (row >= pc.rows) return;
    uint width = BINARY != 0u ? max(pc.targets, 2u) : pc.targets, base = row * width;
#ifdef CLASSIFIER
    // the classifier sums onto its base values (the regressor adds them last), as the reference
    for (uint t = 0u; t < width; t++) y[base + t] = pc.has_base != 0u && t < pc.targets ? intBitsToFloat(table[pc.base_at + t]) : 0.0;
#else
    for (uint t = 0u; t < width; t++) y[base + t] = AGG == 2u ? FLT_MAX : AGG == 3u ? -FLT_MAX : 0.0;
#endif
    for (uint tree = 0u; tree < pc.trees; tree++) {
        int c = table[pc.roots_at + tree];
        for (uint steps = 0u; c >= 0 && steps <= pc.nodes; steps++) { // the plan rejects cycles
            uint node = uint(c) * 6u;
            c = goes_true(node, as_float(XDT, x[row * pc.features + uint(table[node])])) ? table[node + 3u] : table[node + 4u];
        }
        if (c >= 0) continue;
        uint leaf = pc.leaves_at + uint(-1 - c), pairs = uint(table[leaf]);
        for (uint k = 0u; k < pairs; k++) {
            float w = intBitsToFloat(table[leaf + 1u + 2u * k]);
            uint at = base + uint(table[leaf + 2u + 2u * k]);
            if (AGG <= 1u) y[at] += w;
            else if (AGG == 2u) y[at] = min(y[at], w);
            else y[at] = max(y[at], w);
        }
    }
#ifndef CLASSIFIER
    for (uint t = 0u; t < pc.targets; t++) {
        float v = AGG == 0u ? y[base + t] / float(pc.trees) : y[base + t];
        y[base + t] = pc.has_base != 0u ? v + intBitsToFloat(table[pc.base_at + t]) : v;
    }
#endif
    if (BINARY != 0u) {
        float s = y[base];
        y[base + 1u] = s;
        y[base] = POST == 0u || POST == 4u ? 1.0 - s : -s;
    }
    if (POST == 1u || POST == 3u) {
        float m = -FLT_MAX, sum = 0.0;
        for (uint t = 0u; t < width; t++) m = max(m, y[base + t]);
        for (uint t = 0u; t < width; t++) {
            float v = y[base + t];
            v = POST == 3u && abs(v) <= 1e-7 ? 0.0 : exp(v - m);
            y[base + t] = v;
            sum += v;
        }
        for (uint t = 0u; t < width; t++) y[base + t] = sum == 0.0 ? 0.5 : y[base + t] / sum;
    } else if (POST == 2u) {
        for (uint t = 0u; t < width; t++) y[base + t] = 1.0 / (1.0 + exp(-y[base + t]));
    } else if (POST == 4u) {
        for (uint t = 0u; t < width; t++) y[base + t] = probit(y[base + t]);
    }
#ifdef CLASSIFIER
    uint best = 0u;
    for (uint t = 1u; t < width; t++)
        if (y[base + t] > y[base + best]) best = t;
    // a single label (classlabels_int64s = [1]): 1 for score 1, else 0, as ONNX's reference
    labels[row] = pc.one_label != 0u ? (best == 1u ? 1 : 0) : table[pc.labels_at + best];
#endif
}
