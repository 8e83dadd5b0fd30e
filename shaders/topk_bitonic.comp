#version 450
// TopK for rows of up to 2048 elements: one workgroup per row sorts (key, index) pairs in
// shared memory with a bitonic network, then writes the first K values and indices.
#include "common.glsl"
#include "topk_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const bool LARGEST = true;
layout(constant_id = 3) const uint SIZE = 2048u; // a power of two >= the row length

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) writeonly buffer Values { uint values[]; };
layout(std430, binding = 2) writeonly buffer Indices { int indices[]; };
layout(push_constant) uniform Push {
    uint rows;
    uint n;     // row length (the axis)
    uint k;
    uint inner; // elements after the axis: the stride of a row
} pc;

shared uint keys[SIZE];
shared uint idxs[SIZE];

void main()
{
    uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (row >= pc.rows) return; // the whole workgroup leaves together
    uint lid = gl_LocalInvocationID.x, local = gl_WorkGroupSize.x;
    uint o = row / pc.inner, i = row % pc.inner;
    uint in_base = o * pc.n * pc.inner + i, out_base = o * pc.k * pc.inner + i;
    for (uint e = lid; e < SIZE; e += local) {
        bool real = e < pc.n;
        keys[e] = real ? order_key(DT, LARGEST, x[in_base + e * pc.inner]) : 0xffffffffu;
        idxs[e] = real ? e : 0xffffffffu;
    }
    for (uint size = 2u; size <= SIZE; size <<= 1) {
        for (uint stride = size >> 1; stride > 0u; stride >>= 1) {
            barrier();
            for (uint t = lid; t < SIZE / 2u; t += local) {
                uint a = 2u * stride * (t / stride) + t % stride, b = a + stride;
                bool ascending = (a & size) == 0u;
                uint ka = keys[a], kb = keys[b], ia = idxs[a], ib = idxs[b];
                if (pair_less(kb, ib, ka, ia) == ascending) {
                    keys[a] = kb;
                    keys[b] = ka;
                    idxs[a] = ib;
                    idxs[b] = ia;
                }
            }
        }
    }
    barrier();
    for (uint t = lid; t < pc.k; t += local) {
        uint src = idxs[t];
        values[out_base + t * pc.inner] = x[in_base + src * pc.inner];
        indices[out_base + t * pc.inner] = int(src);
    }
}
