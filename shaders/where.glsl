// Where with numpy broadcasting: out = cond ? x : y. X and Y share a dtype and storage, so
// their elements are copied unchanged (a half widens and narrows back exactly). In the 32-bit variant the condition is one word per
// element; in the 16-bit ones it is bool bytes read four to a word (no 8-bit storage needed).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint RANK = 0u;
#include "broadcast.glsl"

layout(std430, binding = 0) readonly buffer Cond { uint cond[]; };
layout(std430, binding = 1) readonly buffer X { ELEM x[]; };
layout(std430, binding = 2) readonly buffer Y { ELEM y[]; };
layout(std430, binding = 3) writeonly buffer Out { ELEM result[]; };

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uvec3 offset = broadcast_offsets(i);
#if defined(STORAGE_F16) || defined(STORAGE_BF16)
    bool c = ((cond[offset.x >> 2] >> ((offset.x & 3u) * 8u)) & 0xffu) != 0u;
#else
    bool c = cond[offset.x] != 0u;
#endif
    STORE(result, i, c ? LOAD(x, offset.y) : LOAD(y, offset.z));
}
