// Gather along one axis: the data viewed as [outer, axis_dim, inner] and the indices
// flattened to n_idx give out[o, j, r] = data[o, indices[j], r]. Negative indices count
// from the end; out-of-range ones are clamped so that nothing is read out of bounds. Data
// elements move unchanged (a half widens and narrows back exactly); indices are int32 words.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Data { ELEM x[]; };
layout(std430, binding = 1) readonly buffer Indices { int indices[]; };
layout(std430, binding = 2) writeonly buffer Out { ELEM y[]; };
// A table larger than one binding (src/ops/gather.c, outer == 1) is gathered in windows of
// rows [row0, row0 + rows): each dispatch writes only the outputs whose index falls in its rows.
layout(push_constant) uniform Push { uint count; uint n_idx; int axis_dim; uint inner; int row0; int rows; } pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint r = i % pc.inner;
    uint t = i / pc.inner;
    uint j = t % pc.n_idx;
    uint o = t / pc.n_idx;
    int idx = indices[j];
    if (idx < 0) idx += pc.axis_dim;
    idx = clamp(idx, 0, pc.axis_dim - 1) - pc.row0;
    if (idx < 0 || idx >= pc.rows) return;
    STORE(y, i, LOAD(x, (o * uint(pc.axis_dim) + uint(idx)) * pc.inner + r));
}
