// GatherND with batch_dims: the output viewed as [batches, tuples, slice] takes
// out[b, t, s] = data[b, tuple(b, t), s], where the index tuple of K entries addresses a slice
// among the batch's batch_elems. Negative indices count from the end; out-of-range ones are
// clamped into their dimension, so nothing is read out of bounds. Indices are int32 words.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int K = 1; // length of an index tuple

layout(std430, binding = 0) readonly buffer Data { ELEM x[]; };
layout(std430, binding = 1) readonly buffer Indices { int indices[]; };
layout(std430, binding = 2) writeonly buffer Out { ELEM y[]; };
layout(push_constant) uniform Push {
    uint count;
    uint tuples;
    uint slice;
    uint batch_elems; // slices per batch
    int dims[8];      // the K indexed dimensions
    int strides[8];   // their strides in slices
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint s = i % pc.slice;
    uint m = i / pc.slice; // batch * tuples + tuple
    uint at = m / pc.tuples * pc.batch_elems;
    for (int t = 0; t < K; t++) {
        int idx = indices[m * uint(K) + uint(t)];
        if (idx < 0) idx += pc.dims[t];
        at += uint(clamp(idx, 0, pc.dims[t] - 1) * pc.strides[t]);
    }
    STORE(y, i, LOAD(x, at * pc.slice + s));
}
