// Global pooling (GlobalAveragePool, GlobalMaxPool, GlobalLpPool): one workgroup per (n, c)
// plane, each invocation folds a strided part of the plane, then a shared-memory tree; on CPU
// devices (ROWS_IN_LANES) an invocation per plane, without the tree, whose barriers cost more
// there than the plane.

layout(local_size_x_id = 0) in; // a power of two, at most 128
layout(constant_id = 1) const uint OP = 0u; // keep in step with src/ops/pool.c
layout(constant_id = 2) const uint DT = 0u;
layout(constant_id = 3) const uint LP_P = 2u;
layout(constant_id = 4) const bool ROWS_IN_LANES = false;

#define OP_MAX 0u
#define OP_AVG 1u
#define OP_LP 2u

layout(std430, binding = 0) readonly buffer In { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Out { ELEM y[]; };
layout(push_constant) uniform Push { uint rows; uint len; } pc;

shared float partial[128];

float combine(float a, float b)
{
    if (OP == OP_MAX) return (isnan(a) || a > b) ? a : b;
    return a + b;
}

float finish(float r)
{
    if (OP == OP_AVG) r /= float(pc.len);
    if (OP == OP_LP) r = LP_P == 1u ? r : LP_P == 2u ? sqrt(r) : pow(r, 1.0 / float(LP_P));
    return r;
}

void main()
{
    if (ROWS_IN_LANES) {
        uint row = linear_id();
        if (row >= pc.rows) return;
        float acc = OP == OP_MAX ? uintBitsToFloat(0xff800000u) : 0.0;
        for (uint j = 0u; j < pc.len; j++) {
            float v = uintBitsToFloat(LOAD(x, row * pc.len + j));
            if (OP == OP_LP) v = LP_P == 1u ? abs(v) : LP_P == 2u ? v * v : pow(abs(v), float(LP_P));
            acc = combine(acc, v);
        }
        STORE(y, row, floatBitsToUint(round_to_dtype(DT, finish(acc))));
        return;
    }
    uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (row >= pc.rows) return; // whole workgroups leave together
    uint t = gl_LocalInvocationID.x;
    uint group = gl_WorkGroupSize.x;
    float acc = OP == OP_MAX ? uintBitsToFloat(0xff800000u) : 0.0;
    uint base = row * pc.len;
    for (uint j = t; j < pc.len; j += group) {
        float v = uintBitsToFloat(LOAD(x, base + j));
        if (OP == OP_LP) v = LP_P == 1u ? abs(v) : LP_P == 2u ? v * v : pow(abs(v), float(LP_P));
        acc = combine(acc, v);
    }
    partial[t] = acc;
    memoryBarrierShared();
    barrier();
    for (uint s = group / 2u; s > 0u; s >>= 1u) {
        if (t < s) partial[t] = combine(partial[t], partial[t + s]);
        memoryBarrierShared();
        barrier();
    }
    if (t != 0u) return;
    STORE(y, row, floatBitsToUint(round_to_dtype(DT, finish(partial[0]))));
}
