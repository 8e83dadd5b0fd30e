// RMSNormalization over rows of `len` contiguous elements: y = x / sqrt(mean(x^2) + eps) * w,
// with w[(element index) % period] (the Scale, held as fp32 words). Sums are fp32 in every storage variant.
// ROWS = 1: one workgroup per row (a shared-memory tree); ROWS = 0: one invocation per row.
layout(local_size_x_id = 0) in; // a power of two, at most 128
layout(constant_id = 1) const uint DT = DT_F32; // the dtype results round to
layout(constant_id = 2) const uint ROWS = 0u;

layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) readonly buffer Scale { float w[]; };
layout(std430, binding = 2) writeonly buffer Y { ELEM y[]; };
layout(push_constant) uniform Push { uint rows; uint len; uint period; float eps; } pc;

shared float partial[128];

float tree_sum(float v)
{
    uint t = gl_LocalInvocationID.x;
    partial[t] = v;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {
        if (t < s) partial[t] += partial[t + s];
        barrier();
    }
    return partial[0];
}

void main()
{
    uint row = ROWS != 0u ? gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x : linear_id();
    if (row >= pc.rows) return; // uniform across a workgroup in ROWS mode
    uint start = ROWS != 0u ? gl_LocalInvocationID.x : 0u, step = ROWS != 0u ? gl_WorkGroupSize.x : 1u;
    uint base = row * pc.len;
    float acc = 0.0;
    for (uint j = start; j < pc.len; j += step) {
        float v = uintBitsToFloat(LOAD(x, base + j));
        acc += v * v;
    }
    if (ROWS != 0u) acc = tree_sum(acc);
    float inv_rms = 1.0 / sqrt(acc / float(pc.len) + pc.eps);
    for (uint j = start; j < pc.len; j += step) {
        float v = uintBitsToFloat(LOAD(x, base + j)) * inv_rms * w[(base + j) % pc.period];
        STORE(y, base + j, floatBitsToUint(round_to_dtype(DT, v)));
    }
}
