// ScatterND as a gather: the output viewed as [outer, slice] starts from data; each output
// element applies, in order, every update whose index tuple points at its outer position.
// No atomics, and duplicate indices reduce in the same order as the reference. Negative
// indices count from the end; a tuple with an index still out of range is skipped (ONNX
// calls it an error), so nothing is written outside the output or to another element.
// Floats held as halves reduce in fp32 and round once per update, as the 32-bit kernel
// rounds to the dtype.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int K = 1; // length of an index tuple
layout(constant_id = 2) const uint DT = DT_F32;
layout(constant_id = 3) const uint REDUCTION = 0u; // 0 none, 1 add, 2 mul, 3 max, 4 min

layout(std430, binding = 0) readonly buffer Data { ELEM x[]; };
layout(std430, binding = 1) readonly buffer Indices { int indices[]; };
layout(std430, binding = 2) readonly buffer Updates { ELEM updates[]; };
layout(std430, binding = 3) writeonly buffer Out { ELEM y[]; };
layout(push_constant) uniform Push {
    uint count;
    uint n_tuples;
    uint slice;
    uint unused;
    int dims[8];          // the data's first K dimensions
    int outer_strides[8]; // their strides in slices
} pc;

uint reduce_bits(uint acc, uint u)
{
    if (REDUCTION == 0u) return u;
    if (dt_is_float(DT)) {
        float a = uintBitsToFloat(acc), b = uintBitsToFloat(u);
        float r = REDUCTION == 1u ? a + b : REDUCTION == 2u ? a * b : REDUCTION == 3u ? max(a, b) : min(a, b);
        return floatBitsToUint(round_to_dtype(DT, r));
    }
    int a = int(acc), b = int(u);
    int r = REDUCTION == 1u ? a + b : REDUCTION == 2u ? a * b : REDUCTION == 3u ? max(a, b) : min(a, b);
    return uint(wrap_to_dtype(DT, r));
}

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    int outer = int(i / pc.slice);
    uint inner = i % pc.slice;
    uint v = LOAD(x, i);
    for (uint m = 0u; m < pc.n_tuples; m++) {
        int target = 0;
        bool inside = true;
        for (int t = 0; t < K; t++) {
            int idx = indices[m * uint(K) + uint(t)];
            if (idx < 0) idx += pc.dims[t];
            inside = inside && idx >= 0 && idx < pc.dims[t];
            target += idx * pc.outer_strides[t];
        }
        if (inside && target == outer) v = reduce_bits(v, LOAD(updates, m * pc.slice + inner));
    }
    STORE(y, i, v);
}
