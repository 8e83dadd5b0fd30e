/* RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike, Bernoulli and Multinomial
 * on the GPU (shaders/random.comp): counter-based numbers from (element, run, seed). A seed
 * attribute gives the same sequence of runs in every session; without one, the seed is taken
 * from the clock when the plan is made. Each plan keeps a run counter per node in its own
 * constants (a 4-byte value the plan's kernels advance after each draw), so every run draws
 * anew. The values are not numpy's: ONNX leaves the generator to the implementation. */
#include "op.h"

#include <math.h>
#include <string.h>

enum { RANDOM_UNIFORM = 0, RANDOM_NORMAL, RANDOM_BERNOULLI, RANDOM_MULTINOMIAL };

static vki_status random_dtype(op_ctx *c, vki_dtype fallback, vki_dtype *t)
{
    *t = (vki_dtype)ir_attr_int(c->node, "dtype", fallback);
    if (!dtype_gpu_supported(*t) || *t == VKI_DTYPE_STRING)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "dtype %s is not supported", vki_dtype_name(*t));
    return VKI_OK;
}

static vki_status draw(op_ctx *c, uint32_t mode, int input, float a, float b, uint32_t classes, uint32_t samples)
{
    plan_value *y = op_out(c, 0);
    int64_t count = shape_numel(y->dims, y->rank);
    if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    const ir_attr *seed_attr = ir_find_attr(c->node, "seed");
    uint64_t seed;
    if (seed_attr) {
        float s = ir_attr_float(c->node, "seed", 0);
        uint32_t bits;
        memcpy(&bits, &s, sizeof bits);
        seed = (uint64_t)bits << 32 | 0x5eedu;
    } else {
        double t = now_ms() * 1000.0;
        seed = (uint64_t)t ^ (uint64_t)(uintptr_t)c->plan ^ ((uint64_t)c->node_index << 40);
    }
    int counter;
    if (!op_temp_state(c, VKI_DTYPE_INT32, 1, &counter)) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    struct { uint32_t count, seed_lo, seed_hi, classes, samples; float a, b; } push = {
        (uint32_t)count, (uint32_t)seed, (uint32_t)(seed >> 32), classes, samples, a, b};
    uint32_t in_dt = input >= 0 ? op_dtype_code(op_in(c, input)->dtype) : 0;
    uint32_t spec[5] = {64, op_dtype_code(y->dtype), in_dt, mode, 0}, gx, gy;
    int values[3] = {counter, input >= 0 ? op_in_index(c, input) : counter, op_out_index(c, 0)};
    if (count) {
        op_grid_1d((uint64_t)count, 64, &gx, &gy);
        VKI_TRY(op_dispatch(c, "random", spec, 5, &push, sizeof push, values, 3, gx, gy, 1));
    }
    spec[4] = 1; /* advance the run counter */
    return op_dispatch(c, "random", spec, 5, &push, sizeof push, values, 3, 1, 1, 1);
}

static vki_status plan_random(op_ctx *c, uint32_t mode, bool like)
{
    VKI_TRY(op_require_inputs(c, like ? 1 : 0, like ? 1 : 0));
    vki_dtype t;
    if (like) {
        plan_value *x = op_in(c, 0);
        VKI_TRY(random_dtype(c, x->dtype, &t));
        VKI_TRY(op_set_output(c, 0, t, x->rank, x->dims));
    } else {
        const int64_t *shape;
        int rank = ir_attr_ints(c->node, "shape", &shape);
        if (rank < 0 || rank > VKI_MAX_RANK) return op_error(c, VKI_ERROR_MODEL, "needs a 'shape' attribute of up to %d dims", VKI_MAX_RANK);
        for (int k = 0; k < rank; k++)
            if (shape[k] < 0) return op_error(c, VKI_ERROR_MODEL, "shape[%d] is %lld", k, (long long)shape[k]);
        VKI_TRY(random_dtype(c, VKI_DTYPE_FLOAT, &t));
        VKI_TRY(op_set_output(c, 0, t, rank, shape));
    }
    if (!dtype_is_float(t)) return op_error(c, VKI_ERROR_UNSUPPORTED, "dtype %s: float dtypes only", vki_dtype_name(t));
    float a = mode == RANDOM_UNIFORM ? ir_attr_float(c->node, "low", 0.0f) : ir_attr_float(c->node, "mean", 0.0f);
    float b = mode == RANDOM_UNIFORM ? ir_attr_float(c->node, "high", 1.0f) : ir_attr_float(c->node, "scale", 1.0f);
    return draw(c, mode, -1, a, b, 0, 1);
}

static vki_status plan_random_uniform(op_ctx *c) { return plan_random(c, RANDOM_UNIFORM, false); }
static vki_status plan_random_normal(op_ctx *c) { return plan_random(c, RANDOM_NORMAL, false); }
static vki_status plan_random_uniform_like(op_ctx *c) { return plan_random(c, RANDOM_UNIFORM, true); }
static vki_status plan_random_normal_like(op_ctx *c) { return plan_random(c, RANDOM_NORMAL, true); }

static vki_status plan_bernoulli(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_float(c, 0));
    plan_value *p = op_in(c, 0);
    vki_dtype t;
    VKI_TRY(random_dtype(c, p->dtype, &t));
    VKI_TRY(op_set_output(c, 0, t, p->rank, p->dims));
    return draw(c, RANDOM_BERNOULLI, 0, 0, 0, 0, 1);
}

static vki_status plan_multinomial(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_float(c, 0));
    plan_value *x = op_in(c, 0);
    char a[256];
    if (x->rank != 2) return op_error(c, VKI_ERROR_SHAPE, "the input %s must be [batch, classes]", shape_str(x->dims, x->rank, a, sizeof a));
    vki_dtype t;
    VKI_TRY(random_dtype(c, VKI_DTYPE_INT32, &t));
    if (t != VKI_DTYPE_INT32 && t != VKI_DTYPE_INT64) return op_error(c, VKI_ERROR_MODEL, "dtype must be int32 or int64");
    int64_t samples = ir_attr_int(c->node, "sample_size", 1);
    if (samples < 1 || samples > INT32_MAX || x->dims[1] > UINT32_MAX)
        return op_error(c, VKI_ERROR_MODEL, "sample_size %lld must be positive", (long long)samples);
    int64_t dims[2] = {x->dims[0], samples};
    VKI_TRY(op_set_output(c, 0, t, 2, dims));
    if (x->dims[1] == 0 && x->dims[0] > 0) return op_error(c, VKI_ERROR_SHAPE, "no classes to draw from");
    return draw(c, RANDOM_MULTINOMIAL, 0, 0, 0, (uint32_t)x->dims[1], (uint32_t)samples);
}

#define RANDOM_NOTE "counter-based numbers on the GPU (not numpy's); a seed repeats the sequence of runs; each run draws anew"
const op_def op_RandomUniform = {"RandomUniform", "", OP_DTYPES_FLOAT, RANDOM_NOTE,
                                 plan_random_uniform, OP_INPUT0_OPTIONAL | OP_NOT_CONSTANT};
const op_def op_RandomNormal = {"RandomNormal", "", OP_DTYPES_FLOAT, RANDOM_NOTE,
                                plan_random_normal, OP_INPUT0_OPTIONAL | OP_NOT_CONSTANT};
const op_def op_RandomUniformLike = {"RandomUniformLike", "", OP_DTYPES_FLOAT, RANDOM_NOTE,
                                     plan_random_uniform_like, OP_NOT_CONSTANT};
const op_def op_RandomNormalLike = {"RandomNormalLike", "", OP_DTYPES_FLOAT, RANDOM_NOTE,
                                    plan_random_normal_like, OP_NOT_CONSTANT};
const op_def op_Bernoulli = {"Bernoulli", "", OP_DTYPES_FLOAT, RANDOM_NOTE, plan_bernoulli, OP_NOT_CONSTANT};
const op_def op_Multinomial = {"Multinomial", "", OP_DTYPES_FLOAT, RANDOM_NOTE, plan_multinomial, OP_NOT_CONSTANT};
