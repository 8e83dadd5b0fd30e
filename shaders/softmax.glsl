// Softmax, LogSoftmax and Hardmax along rows of n elements spaced `inner` apart: row r starts
// at (r / inner) * n * inner + r % inner. Numerically stable: the row's max is subtracted.
// ROWS = 1: one workgroup per row (shared-memory trees); ROWS = 0: one invocation per row.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KIND = 0u; // 0 Softmax, 1 LogSoftmax, 2 Hardmax
layout(constant_id = 2) const uint DT = 0u;
layout(constant_id = 3) const uint ROWS = 0u;

layout(std430, binding = 0) readonly buffer In { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Out { ELEM y[]; };
layout(push_constant) uniform Push { uint rows, n, inner; } pc;

shared float s_f[128];
shared uint s_idx[128];

float tree(float v, bool is_max)
{
    uint t = gl_LocalInvocationID.x;
    s_f[t] = v;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {
        if (t < s) s_f[t] = is_max ? max(s_f[t], s_f[t + s]) : s_f[t] + s_f[t + s];
        barrier();
    }
    float r = s_f[0];
    barrier();
    return r;
}

// First index of the row's maximum; NaN counts as the maximum (numpy's argmax).
bool better(float a, uint ai, float b, uint bi)
{
    if (isnan(a) != isnan(b)) return isnan(a);
    if (a != b && !isnan(a)) return a > b;
    return ai < bi;
}

uint tree_argmax(float v, uint vi)
{
    uint t = gl_LocalInvocationID.x;
    s_f[t] = v;
    s_idx[t] = vi;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {
        if (t < s && better(s_f[t + s], s_idx[t + s], s_f[t], s_idx[t])) {
            s_f[t] = s_f[t + s];
            s_idx[t] = s_idx[t + s];
        }
        barrier();
    }
    return s_idx[0];
}

#ifdef SOFTMAX_SUBGROUP
// Softmax and LogSoftmax with one subgroup per row (softmax_sg, softmax_sg_f16, softmax_sg_bf16):
// the lanes read the row together, coalesced, and reduce with subgroup operations, no shared memory
// or barrier. For the many short rows of attention scores, where an invocation per row reads
// strided.
void main()
{
    uint per_group = gl_WorkGroupSize.x / gl_SubgroupSize;
    uint row = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * per_group + gl_SubgroupID;
    if (row >= pc.rows) return; // uniform across the subgroup
    uint lane = gl_SubgroupInvocationID, step = gl_SubgroupSize;
    uint base = (row / pc.inner) * pc.n * pc.inner + row % pc.inner;
    float m = uintBitsToFloat(0xff800000u);
    for (uint k = lane; k < pc.n; k += step) m = max(m, uintBitsToFloat(LOAD(x, base + k * pc.inner)));
    m = subgroupMax(m);
    float sum = 0.0;
    for (uint k = lane; k < pc.n; k += step) sum += exp(uintBitsToFloat(LOAD(x, base + k * pc.inner)) - m);
    sum = subgroupAdd(sum);
    float log_sum = log(sum), inv_sum = 1.0 / sum;
    for (uint k = lane; k < pc.n; k += step) {
        float v = uintBitsToFloat(LOAD(x, base + k * pc.inner)) - m;
        STORE(y, base + k * pc.inner, floatBitsToUint(round_to_dtype(DT, KIND == 1u ? v - log_sum : exp(v) * inv_sum)));
    }
}
#else
void main()
{
    uint row = ROWS != 0u ? gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x : linear_id();
    if (row >= pc.rows) return; // uniform across a workgroup in ROWS mode
    uint start = ROWS != 0u ? gl_LocalInvocationID.x : 0u, step = ROWS != 0u ? gl_WorkGroupSize.x : 1u;
    uint base = (row / pc.inner) * pc.n * pc.inner + row % pc.inner;
    if (KIND == 2u) {
        float best = 0.0;
        uint best_i = 0xffffffffu;
        for (uint k = start; k < pc.n; k += step) {
            float v = uintBitsToFloat(LOAD(x, base + k * pc.inner));
            if (best_i == 0xffffffffu || better(v, k, best, best_i)) {
                best = v;
                best_i = k;
            }
        }
        if (ROWS != 0u) best_i = tree_argmax(best_i == 0xffffffffu ? uintBitsToFloat(0xff800000u) : best, best_i);
        for (uint k = start; k < pc.n; k += step) STORE(y, base + k * pc.inner, floatBitsToUint(k == best_i ? 1.0 : 0.0));
        return;
    }
    float m = uintBitsToFloat(0xff800000u);
    for (uint k = start; k < pc.n; k += step) m = max(m, uintBitsToFloat(LOAD(x, base + k * pc.inner)));
    if (ROWS != 0u) m = tree(m, true);
    float sum = 0.0;
    for (uint k = start; k < pc.n; k += step) sum += exp(uintBitsToFloat(LOAD(x, base + k * pc.inner)) - m);
    if (ROWS != 0u) sum = tree(sum, false);
    float log_sum = log(sum), inv_sum = 1.0 / sum;
    for (uint k = start; k < pc.n; k += step) {
        float v = uintBitsToFloat(LOAD(x, base + k * pc.inner)) - m;
        STORE(y, base + k * pc.inner, floatBitsToUint(round_to_dtype(DT, KIND == 1u ? v - log_sum : exp(v) * inv_sum)));
    }
}
#endif
