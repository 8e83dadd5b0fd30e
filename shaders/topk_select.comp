#version 450
// TopK for long rows: one workgroup per row picks the K winners one after another; each
// round finds the smallest (key, index) pair after the previous winner by a parallel min.
#include "common.glsl"
#include "topk_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const bool LARGEST = true;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) writeonly buffer Values { uint values[]; };
layout(std430, binding = 2) writeonly buffer Indices { int indices[]; };
layout(push_constant) uniform Push {
    uint rows;
    uint n;
    uint k;
    uint inner;
} pc;

shared uint best_keys[128];
shared uint best_idxs[128];

void main()
{
    uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (row >= pc.rows) return;
    uint lid = gl_LocalInvocationID.x, local = gl_WorkGroupSize.x;
    uint o = row / pc.inner, i = row % pc.inner;
    uint in_base = o * pc.n * pc.inner + i, out_base = o * pc.k * pc.inner + i;
    uint last_key = 0u, last_idx = 0u;
    for (uint r = 0u; r < pc.k; r++) {
        uint bk = 0xffffffffu, bi = 0xffffffffu;
        for (uint e = lid; e < pc.n; e += local) {
            uint key = order_key(DT, LARGEST, x[in_base + e * pc.inner]);
            if (r > 0u && !pair_less(last_key, last_idx, key, e)) continue; // taken already
            if (pair_less(key, e, bk, bi)) {
                bk = key;
                bi = e;
            }
        }
        best_keys[lid] = bk;
        best_idxs[lid] = bi;
        barrier();
        for (uint s = local / 2u; s > 0u; s >>= 1) {
            if (lid < s && pair_less(best_keys[lid + s], best_idxs[lid + s], best_keys[lid], best_idxs[lid])) {
                best_keys[lid] = best_keys[lid + s];
                best_idxs[lid] = best_idxs[lid + s];
            }
            barrier();
        }
        last_key = best_keys[0];
        last_idx = best_idxs[0];
        barrier(); // everyone has read the winner before the next round overwrites it
        if (lid == 0u) {
            values[out_base + r * pc.inner] = x[in_base + last_idx * pc.inner];
            indices[out_base + r * pc.inner] = int(last_idx);
        }
    }
}
