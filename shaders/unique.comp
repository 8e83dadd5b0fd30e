#version 450
// Unique over n items: slices along the axis (outer x inner elements each, compared in that
// order, lexicographically) or single elements. The work buffer holds rep[n] (the first item
// equal to each), pos[n] (a first item's place in Y) and count[n] (how many equal it).
//   STAGE 0: rep[i], one invocation per item; invocation 0 zeroes `size`.
//   STAGE 1: pos and count of first items: by value (sorted) or by first occurrence;
//            `size` counts the first items (atomically): U, read back by the plan.
//   STAGE 2: Y's slices, once U is known (binding 2 is Y).
//   STAGE 3: indices, inverse_indices and counts (bindings 0, 2, 3; those asked for).
// Pairwise comparisons: O(n^2) work over n invocations.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const uint STAGE = 0u;
layout(constant_id = 3) const bool SORTED = true;

layout(std430, binding = 0) buffer X { uint x[]; }; // STAGE 3: indices
layout(std430, binding = 1) buffer Work { int work[]; };
layout(std430, binding = 2) buffer Size { int size[]; }; // STAGE 2: Y; STAGE 3: inverse_indices
layout(std430, binding = 3) buffer Counts { int counts[]; }; // STAGE 3 only (others: a dummy)
layout(push_constant) uniform Push { uint n, outer, inner, U, want; } pc; // want: 1 indices, 2 inverse, 4 counts

uint at(uint item, uint e) { return ((e / pc.inner) * pc.n + item) * pc.inner + e % pc.inner; }

// -1, 0 or 1 as item a sorts before, with or after item b
int compare(uint a, uint b)
{
    uint slice = pc.outer * pc.inner;
    for (uint e = 0u; e < slice; e++) {
        uint wa = x[at(a, e)], wb = x[at(b, e)];
        if (wa == wb) continue;
        if (dt_is_float(DT)) {
            float fa = uintBitsToFloat(wa), fb = uintBitsToFloat(wb);
            if (fa != fb) return fa < fb ? -1 : 1;
        } else if (int(wa) != int(wb)) {
            return int(wa) < int(wb) ? -1 : 1;
        }
    }
    return 0;
}

void main()
{
    uint i = linear_id();
    if (STAGE == 0u) {
        if (i == 0u) size[0] = 0;
        if (i >= pc.n) return;
        uint rep = i;
        for (uint j = 0u; j < i; j++)
            if (compare(i, j) == 0) {
                rep = j;
                break;
            }
        work[i] = int(rep);
    } else if (STAGE == 1u) {
        if (i >= pc.n || work[i] != int(i)) return;
        int pos = 0, count = 0;
        for (uint j = 0u; j < pc.n; j++) {
            bool first = work[j] == int(j);
            if (first && (SORTED ? compare(j, i) < 0 : j < i)) pos++;
            if (work[j] == int(i)) count++;
        }
        work[pc.n + i] = pos;
        work[2u * pc.n + i] = count;
        atomicAdd(size[0], 1);
    } else if (STAGE == 2u) { // y[(o * U + pos) * inner + k] = x[(o * n + i) * inner + k] for first items i
        uint slice = pc.outer * pc.inner;
        if (i >= pc.n * slice) return;
        uint item = i / slice, e = i % slice;
        if (work[item] != int(item)) return;
        uint pos = uint(work[pc.n + item]);
        size[((e / pc.inner) * pc.U + pos) * pc.inner + e % pc.inner] = int(x[at(item, e)]);
    } else {
        if (i >= pc.n) return;
        uint rep = uint(work[i]), pos = uint(work[pc.n + rep]);
        if ((pc.want & 2u) != 0u) size[i] = int(pos);
        if (rep != i) return;
        if ((pc.want & 1u) != 0u) x[pos] = i;
        if ((pc.want & 4u) != 0u) counts[pos] = work[2u * pc.n + i];
    }
}
