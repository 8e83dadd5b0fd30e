#version 450
// TfIdfVectorizer: one invocation per (row, output column) counts, in its row of X, every
// n-gram of the pool that maps to that column (the table lists them per column), at every
// skip distance (unigrams once), then weighs the count by MODE.
//
// table: [0, cols] word offsets of each column's n-grams; an n-gram is its length n, then n
// values. weights (one float per column) start at pc.weights_at when pc.has_weights.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0u; // 0 TF, 1 IDF, 2 TFIDF

layout(std430, binding = 0) readonly buffer X { int x[]; };
layout(std430, binding = 1) readonly buffer Table { int table[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
    uint count, cols, row_len, max_skip, weights_at, has_weights;
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint row = i / pc.cols, col = i % pc.cols, base = row * pc.row_len;
    uint f = 0u;
    for (uint e = uint(table[col]); e < uint(table[col + 1u]); e += 1u + uint(table[e])) {
        uint n = uint(table[e]);
        uint skips = n == 1u ? 1u : pc.max_skip + 1u;
        for (uint s = 1u; s <= skips; s++) {
            uint span = (n - 1u) * s;
            for (uint p = 0u; p + span < pc.row_len; p++) {
                uint k = 0u;
                while (k < n && x[base + p + k * s] == table[e + 1u + k]) k++;
                if (k == n) f++;
            }
        }
    }
    float w = pc.has_weights != 0u ? uintBitsToFloat(uint(table[pc.weights_at + col])) : 1.0;
    y[i] = MODE == 0u ? float(f) : MODE == 1u ? (f > 0u ? w : 0.0) : w * float(f);
}
