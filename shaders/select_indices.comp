#version 450
// The positions i < n where flags[i] is nonzero, in order, and how many (NonZero, Compress):
// one workgroup; invocation t takes a contiguous chunk, counts it, the counts are scanned in
// shared memory, then each invocation writes its chunk's positions from its offset on. The
// count goes to `size`, which the plan reads back (op_data_size). A value counts as nonzero by
// its dtype (a float -0.0 is zero, NaN is not).
#include "common.glsl"

#define GROUP 128 // the Android Baseline 2022 limit
layout(local_size_x = GROUP) in;
layout(constant_id = 0) const uint DT = 0u;

layout(std430, binding = 0) readonly buffer Flags { uint flags[]; };
layout(std430, binding = 1) writeonly buffer Positions { int positions[]; };
layout(std430, binding = 2) writeonly buffer Size { int size[]; };
layout(push_constant) uniform Push { uint n; } pc;

shared uint offsets[GROUP];

bool nonzero(uint w) { return dt_is_float(DT) ? uintBitsToFloat(w) != 0.0 : w != 0u; }

void main()
{
    uint t = gl_LocalInvocationID.x, chunk = (pc.n + GROUP - 1u) / GROUP;
    uint begin = min(t * chunk, pc.n), end = min(begin + chunk, pc.n), count = 0u;
    for (uint i = begin; i < end; i++) count += nonzero(flags[i]) ? 1u : 0u;
    offsets[t] = count;
    barrier();
    for (uint step = 1u; step < GROUP; step *= 2u) { // inclusive scan (Hillis-Steele)
        uint add = t >= step ? offsets[t - step] : 0u;
        barrier();
        offsets[t] += add;
        barrier();
    }
    uint at = offsets[t] - count;
    for (uint i = begin; i < end; i++)
        if (nonzero(flags[i])) positions[at++] = int(i);
    if (t == GROUP - 1u) size[0] = int(offsets[t]);
}
