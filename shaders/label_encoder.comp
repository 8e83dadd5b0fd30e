#version 450
// ai.onnx.ml LabelEncoder over numbers: one invocation per element looks its key up by
// binary search among the sorted keys. table: n keys (int32, or float bits when FLOAT_KEYS),
// their n values (32-bit words), the default, then the value of a NaN key (pc.has_nan).
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint FLOAT_KEYS = 0u;

layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer Table { uint table[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push { uint count, keys, has_nan; } pc;

// key k < x, as the table sorts
bool below(uint k, uint v)
{
    return FLOAT_KEYS != 0u ? uintBitsToFloat(k) < uintBitsToFloat(v) : int(k) < int(v);
}

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint v = x[i], n = pc.keys, out_ = table[2u * n];
    if (FLOAT_KEYS != 0u && isnan(uintBitsToFloat(v))) {
        if (pc.has_nan != 0u) out_ = table[2u * n + 1u];
    } else {
        uint lo = 0u, hi = n; // the first key not below v
        while (lo < hi) {
            uint mid = (lo + hi) / 2u;
            if (below(table[mid], v)) lo = mid + 1u; else hi = mid;
        }
        if (lo < n && !below(v, table[lo])) out_ = table[n + lo];
    }
    y[i] = out_;
}
