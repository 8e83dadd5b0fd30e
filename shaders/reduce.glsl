// Reductions over any set of axes (ReduceSum .. ReduceSumSquare, ArgMax, ArgMin). The host
// merges the input's dims into at most 4 kept and 4 reduced groups with strides, so one
// output element reads x[kept_offset(o) + red_offset(r)] for r < red_count.
// ROWS = 1: one workgroup per output element with a shared-memory tree (large reductions);
// ROWS = 0: one invocation per output element looping over r (small reductions).
// Float reductions accumulate in fp32 in every storage variant.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KIND = 0u;
layout(constant_id = 2) const uint IN_DT = 0u;
layout(constant_id = 3) const uint OUT_DT = 0u;
layout(constant_id = 4) const uint ROWS = 0u;
layout(constant_id = 5) const uint SELECT_LAST = 0u;

layout(std430, binding = 0) readonly buffer In { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Out { ELEM y[]; };
layout(push_constant) uniform Push {
    uint out_count, red_count, n_kept, n_red;
    uvec4 kept_dim, kept_stride, red_dim, red_stride;
} pc;

// kinds: keep in step with src/ops/reduce.c
#define K_SUM 0u
#define K_MEAN 1u
#define K_MAX 2u
#define K_MIN 3u
#define K_PROD 4u
#define K_L1 5u
#define K_L2 6u
#define K_LOGSUM 7u
#define K_LOGSUMEXP 8u
#define K_SUMSQUARE 9u
#define K_ARGMAX 10u
#define K_ARGMIN 11u
#define NO_INDEX 0xffffffffu

// Integer inputs of L2, LogSum and LogSumExp are reduced in float, as their results are.
const bool FLOAT_MATH = IN_DT < 3u || KIND == K_L2 || KIND == K_LOGSUM || KIND == K_LOGSUMEXP;

shared float s_f[128];
shared int s_i[128];
shared uint s_idx[128];

uint kept_offset(uint o)
{
    uint off = 0u;
    for (int g = int(pc.n_kept) - 1; g >= 0; g--) {
        off += (o % pc.kept_dim[g]) * pc.kept_stride[g];
        o /= pc.kept_dim[g];
    }
    return off;
}

uint red_offset(uint r)
{
    uint off = 0u;
    for (int g = int(pc.n_red) - 1; g >= 0; g--) {
        off += (r % pc.red_dim[g]) * pc.red_stride[g];
        r /= pc.red_dim[g];
    }
    return off;
}

// ---- float reductions (fp32 accumulation) ----
float identity_f(uint k)
{
    if (k == K_PROD) return 1.0;
    if (k == K_MAX) return uintBitsToFloat(0xff800000u);
    if (k == K_MIN) return uintBitsToFloat(0x7f800000u);
    return 0.0;
}

float combine_f(uint k, float a, float b)
{
    if (k == K_MAX) return (b > a || isnan(b)) ? b : a;
    if (k == K_MIN) return (b < a || isnan(b)) ? b : a;
    if (k == K_PROD) return a * b;
    return a + b;
}

// pass kind k: LogSumExp runs a K_MAX pass, then sums exp(v - m).
float map_f(uint k, float v, float m)
{
    if (k == K_L1) return abs(v);
    if (k == K_L2 || k == K_SUMSQUARE) return v * v;
    if (k == K_LOGSUMEXP) return exp(v - m);
    return v;
}

float tree_f(uint k, float v)
{
    uint t = gl_LocalInvocationID.x;
    s_f[t] = v;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {
        if (t < s) s_f[t] = combine_f(k, s_f[t], s_f[t + s]);
        barrier();
    }
    float r = s_f[0];
    barrier();
    return r;
}

float reduce_f(uint k, uint base, uint start, uint step, float m)
{
    float acc = identity_f(k);
    for (uint r = start; r < pc.red_count; r += step)
        acc = combine_f(k, acc, map_f(k, as_float(IN_DT, LOAD(x, base + red_offset(r))), m));
    return ROWS != 0u ? tree_f(k, acc) : acc;
}

float finish_f(float acc, float m)
{
    if (KIND == K_MEAN) return acc / float(pc.red_count);
    if (KIND == K_L2) return sqrt(acc);
    if (KIND == K_LOGSUM) return log(acc);
    if (KIND == K_LOGSUMEXP) return isinf(m) ? m : m + log(acc);
    return acc;
}

// ---- integer reductions (int32, wrapping) ----
int identity_i(uint k)
{
    if (k == K_PROD) return 1;
    // Max and Min of an empty set: the dtype's lowest and highest values (false, true for bool)
    if (k == K_MAX) return IN_DT == DT_BOOL || IN_DT == DT_U8 || IN_DT == DT_U16 ? 0 : IN_DT == DT_I8 ? -128
                         : IN_DT == DT_I16 ? -32768 : int(0x80000000u);
    if (k == K_MIN) return IN_DT == DT_BOOL ? 1 : IN_DT == DT_U8 ? 255 : IN_DT == DT_U16 ? 65535 : IN_DT == DT_I8 ? 127
                         : IN_DT == DT_I16 ? 32767 : 0x7fffffff;
    return 0;
}

int combine_i(uint k, int a, int b)
{
    if (k == K_MAX) return max(a, b);
    if (k == K_MIN) return min(a, b);
    if (k == K_PROD) return a * b;
    return a + b;
}

int map_i(uint k, int v)
{
    if (k == K_L1) return abs(v);
    if (k == K_SUMSQUARE) return v * v;
    return v;
}

int tree_i(uint k, int v)
{
    uint t = gl_LocalInvocationID.x;
    s_i[t] = v;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {
        if (t < s) s_i[t] = combine_i(k, s_i[t], s_i[t + s]);
        barrier();
    }
    int r = s_i[0];
    barrier();
    return r;
}

// ---- ArgMax / ArgMin: (value bits, index) pairs; NaN wins like numpy, ties by index ----
bool better(uint a, uint ai, uint b, uint bi)
{
    if (bi == NO_INDEX) return ai != NO_INDEX;
    if (ai == NO_INDEX) return false;
    bool a_wins, b_wins;
    if (dt_is_float(IN_DT)) {
        float fa = uintBitsToFloat(a), fb = uintBitsToFloat(b);
        bool gt = KIND == K_ARGMAX ? fa > fb : fa < fb, lt = KIND == K_ARGMAX ? fb > fa : fb < fa;
        a_wins = gt || (isnan(fa) && !isnan(fb));
        b_wins = lt || (isnan(fb) && !isnan(fa));
    } else {
        int ia = int(a), ib = int(b);
        a_wins = KIND == K_ARGMAX ? ia > ib : ia < ib;
        b_wins = KIND == K_ARGMAX ? ib > ia : ib < ia;
    }
    if (a_wins || b_wins) return a_wins;
    return SELECT_LAST != 0u ? ai > bi : ai < bi;
}

uint arg_reduce(uint base, uint start, uint step)
{
    uint best = 0u, best_i = NO_INDEX;
    for (uint r = start; r < pc.red_count; r += step) {
        uint v = LOAD(x, base + red_offset(r));
        if (better(v, r, best, best_i)) {
            best = v;
            best_i = r;
        }
    }
    if (ROWS == 0u) return best_i;
    uint t = gl_LocalInvocationID.x;
    s_i[t] = int(best);
    s_idx[t] = best_i;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {
        if (t < s && better(uint(s_i[t + s]), s_idx[t + s], uint(s_i[t]), s_idx[t])) {
            s_i[t] = s_i[t + s];
            s_idx[t] = s_idx[t + s];
        }
        barrier();
    }
    return s_idx[0];
}

void main()
{
    uint o = ROWS != 0u ? gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x : linear_id();
    if (o >= pc.out_count) return; // uniform across a workgroup in ROWS mode
    uint start = ROWS != 0u ? gl_LocalInvocationID.x : 0u, step = ROWS != 0u ? gl_WorkGroupSize.x : 1u;
    bool writer = ROWS == 0u || gl_LocalInvocationID.x == 0u;
    uint base = kept_offset(o);
    if (KIND == K_ARGMAX || KIND == K_ARGMIN) {
        uint idx = arg_reduce(base, start, step);
        if (writer) STORE(y, o, idx == NO_INDEX ? 0u : idx);
    } else if (FLOAT_MATH) {
        float m = 0.0;
        if (KIND == K_LOGSUMEXP) m = reduce_f(K_MAX, base, start, step, 0.0);
        float acc = finish_f(reduce_f(KIND, base, start, step, m), m);
        if (writer) STORE(y, o, from_float(OUT_DT, acc));
    } else {
        int acc = identity_i(KIND);
        for (uint r = start; r < pc.red_count; r += step)
            acc = combine_i(KIND, acc, map_i(KIND, int(LOAD(x, base + red_offset(r)))));
        if (ROWS != 0u) acc = tree_i(KIND, acc);
        if (KIND == K_MEAN) acc = pc.red_count != 0u ? acc / int(pc.red_count) : 0;
        if (writer) STORE(y, o, uint(wrap_to_dtype(OUT_DT, acc)));
    }
}
