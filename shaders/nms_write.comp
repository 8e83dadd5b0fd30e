#version 450
// NonMaxSuppression's output rows. TOTAL: one invocation sums the kept counts into `size` (the
// row count, read back by the plan). Otherwise one invocation per slot (bc, j) of the work
// buffer (shaders/nms_select.comp) writes row (sum of the counts before bc) + j as
// (b, c, box) while j < count[bc].
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool TOTAL = false;

layout(std430, binding = 0) readonly buffer Work { int work[]; };
layout(std430, binding = 1) writeonly buffer Out { int y[]; };
layout(push_constant) uniform Push { uint BC, C, slots; } pc;

void main()
{
    uint i = linear_id();
    if (TOTAL) {
        if (i != 0u) return;
        int total = 0;
        for (uint k = 0u; k < pc.BC; k++) total += work[k];
        y[0] = total;
        return;
    }
    if (i >= pc.BC * pc.slots) return;
    uint bc = i / pc.slots, j = i % pc.slots;
    if (int(j) >= work[bc]) return;
    int row = int(j);
    for (uint k = 0u; k < bc; k++) row += work[k];
    y[3 * row] = int(bc / pc.C);
    y[3 * row + 1] = int(bc % pc.C);
    y[3 * row + 2] = work[pc.BC + bc * pc.slots + j];
}
