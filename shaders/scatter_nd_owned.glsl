// ScatterND without reduction for many index tuples (a masked_scatter's one tuple per element),
// where the gather of scatter_nd.glsl (each output element scanning every tuple) is quadratic.
// Three passes over one output, MODE chosen by the caller:
//   0: Y = data, and owner[outer] = -1 for each outer position (the data's first K dims);
//   1: each tuple claims its outer position: owner = max(owner, tuple number);
//   2: each tuple's slice is stored where that tuple owns its position.
// The last tuple of duplicates wins, as in the reference's sequential loop; a tuple with an
// index out of range after counting negatives from the end is skipped, as scatter_nd skips it.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int K = 1; // length of an index tuple
layout(constant_id = 2) const uint MODE = 0u;

layout(std430, binding = 0) readonly buffer Data { ELEM x[]; };
layout(std430, binding = 1) readonly buffer Indices { int indices[]; };
layout(std430, binding = 2) readonly buffer Updates { ELEM updates[]; };
layout(std430, binding = 3) writeonly buffer Out { ELEM y[]; };
layout(std430, binding = 4) buffer Owner { int owner[]; };
// keep in step with nd_owned_push in src/ops/scatter.c
layout(push_constant) uniform Push {
    uint count;    // MODE 0: max(data elements, outer positions); 1: tuples; 2: tuples * slice
    uint elements; // the data's
    uint outers;   // its outer positions
    uint slice;
    int dims[8];          // the data's first K dimensions
    int outer_strides[8]; // their strides in slices
} pc;

// the outer position tuple m points at, or -1 where an index is out of range
int target_of(uint m)
{
    int target = 0;
    for (int t = 0; t < K; t++) {
        int idx = indices[m * uint(K) + uint(t)];
        if (idx < 0) idx += pc.dims[t];
        if (idx < 0 || idx >= pc.dims[t]) return -1;
        target += idx * pc.outer_strides[t];
    }
    return target;
}

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    if (MODE == 0u) {
        if (i < pc.elements) STORE(y, i, LOAD(x, i));
        if (i < pc.outers) owner[i] = -1;
    } else if (MODE == 1u) {
        int target = target_of(i);
        if (target >= 0) atomicMax(owner[target], int(i));
    } else {
        uint m = i / pc.slice, inner = i % pc.slice;
        int target = target_of(m);
        if (target >= 0 && owner[target] == int(m)) STORE(y, uint(target) * pc.slice + inner, LOAD(updates, i));
    }
}
