/* Small ops that PyTorch exports use: Shrink (shaders/misc_shrink.comp), CastLike (Cast to
 * the second input's dtype, on the unary shader's identity op) and Det (shaders/misc_det.comp,
 * one invocation per matrix), MaxUnpool (shaders/misc_maxunpool.comp). Small constant inputs are folded on the host. */
#include "binary.h"
#include "op.h"

#include <math.h>
#include <string.h>

#define FOLD_MAX_ELEMENTS 4096
#define DET_MAX_N 16 /* the shader keeps a matrix in 256 registers */

static bool folds(op_ctx *c, int64_t count) { return op_input_is_const(c, 0) && count <= FOLD_MAX_ELEMENTS; }

static vki_status dispatch_1d(op_ctx *c, const char *shader, const uint32_t *spec, uint32_t n_spec, const void *push,
                              uint32_t push_bytes, int64_t count)
{
    if ((uint64_t)shape_numel(op_in(c, 0)->dims, op_in(c, 0)->rank) * 4 > op_max_binding_bytes(c) || count > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "tensors larger than one storage binding are not supported here");
    int values[2] = {op_in_index(c, 0), op_out_index(c, 0)};
    uint32_t gx, gy;
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    return op_dispatch(c, shader, spec, n_spec, push, push_bytes, values, 2, gx, gy, 1);
}

static vki_status plan_shrink(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0);
    if (x->dtype == VKI_DTYPE_BOOL) return op_error(c, VKI_ERROR_UNSUPPORTED, "Shrink does not take bool");
    float bias = ir_attr_float(c->node, "bias", 0.0f), lambd = ir_attr_float(c->node, "lambd", 0.5f);
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    int64_t count = shape_numel(x->dims, x->rank);
    if (folds(c, count)) {
        void *out = op_output_host(c, 0);
        for (int64_t i = 0; i < count; i++) {
            double v = host_read_f64(x->dtype, x->host, (size_t)i);
            double r = v < -lambd ? v + bias : v > lambd ? v - bias : 0;
            if (dtype_is_float(x->dtype)) host_write_f64(x->dtype, out, (size_t)i, r);
            else host_write_i64(x->dtype, out, (size_t)i, (int64_t)r);
        }
        return VKI_OK;
    }
    uint32_t spec[2] = {128, op_dtype_code(x->dtype)};
    struct { uint32_t count; float bias, lambd; } push = {(uint32_t)count, bias, lambd};
    return dispatch_1d(c, "misc_shrink", spec, 2, &push, sizeof push, count);
}

static vki_status plan_castlike(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0);
    vki_dtype to = op_in(c, 1)->dtype;
    if (!dtype_gpu_supported(to))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "CastLike to %s is not supported (the GPU holds the numeric dtypes "
                        "and bool; strings and complex are not)", vki_dtype_name(to));
    bool saturate = ir_attr_int(c->node, "saturate", 1) != 0; /* float8 overflow */
    VKI_TRY(op_set_output(c, 0, to, x->rank, x->dims));
    if (to == x->dtype) return op_output_alias(c, 0, 0);
    int64_t count = shape_numel(x->dims, x->rank);
    if (folds(c, count)) {
        void *out = op_output_host(c, 0);
        for (int64_t i = 0; i < count; i++) {
            if (to == VKI_DTYPE_FLOAT8E8M0) {
                ((uint8_t *)out)[i] = e8m0_round((float)host_read_f64(x->dtype, x->host, (size_t)i), saturate, E8M0_UP);
            } else if (dtype_is_minifloat(to)) {
                ((uint8_t *)out)[i] = minifloat_encode(to, host_read_f64(x->dtype, x->host, (size_t)i), saturate);
            } else if (dtype_is_float(x->dtype) && !dtype_is_float(to)) {
                double v = host_read_f64(x->dtype, x->host, (size_t)i);
                host_write_i64(to, out, (size_t)i, to == VKI_DTYPE_BOOL ? v != 0 : isnan(v) ? 0 : (int64_t)v);
            } else if (dtype_is_float(x->dtype) || dtype_is_float(to)) {
                host_write_f64(to, out, (size_t)i, host_read_f64(x->dtype, x->host, (size_t)i));
            } else {
                int64_t v = host_read_i64(x->dtype, x->host, (size_t)i);
                host_write_i64(to, out, (size_t)i, to == VKI_DTYPE_BOOL ? v != 0 : v);
            }
        }
        return VKI_OK;
    }
    /* shaders/unary.glsl's identity op (code 0) is Cast */
    float params[3] = {saturate ? 0.0f : 1.0f, 0, 0};
    bool done;
    VKI_TRY(unary_float64(c, 0, params, &done));
    if (done) return VKI_OK;
    uint32_t spec[4] = {128, 0, op_dtype_code_exact(x->dtype), op_dtype_code_exact(to)};
    struct { uint32_t count; float a, b, g; } push = {(uint32_t)count, params[0], params[1], params[2]};
    return dispatch_1d(c, "unary", spec, 4, &push, sizeof push, count);
}

static double host_det(double *m, int n)
{
    double det = 1;
    for (int k = 0; k < n; k++) {
        int pivot = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(m[i * n + k]) > fabs(m[pivot * n + k])) pivot = i;
        if (m[pivot * n + k] == 0) return 0;
        if (pivot != k) {
            for (int j = 0; j < n; j++) {
                double t = m[k * n + j];
                m[k * n + j] = m[pivot * n + j];
                m[pivot * n + j] = t;
            }
            det = -det;
        }
        det *= m[k * n + k];
        for (int i = k + 1; i < n; i++) {
            double f = m[i * n + k] / m[k * n + k];
            for (int j = k + 1; j < n; j++) m[i * n + j] -= f * m[k * n + j];
        }
    }
    return det;
}

static vki_status plan_det(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_float(c, 0));
    plan_value *x = op_in(c, 0);
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return op_error(c, VKI_ERROR_SHAPE, "input must be [..., M, M]");
    int64_t n = x->dims[x->rank - 1];
    if (n > DET_MAX_N) return op_error(c, VKI_ERROR_UNSUPPORTED, "matrices of %lldx%lld; at most %dx%d are supported",
                                       (long long)n, (long long)n, DET_MAX_N, DET_MAX_N);
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank - 2, x->dims));
    int64_t count = shape_numel(x->dims, x->rank - 2);
    if (folds(c, count * n * n)) {
        void *out = op_output_host(c, 0);
        double m[DET_MAX_N * DET_MAX_N];
        for (int64_t b = 0; b < count; b++) {
            for (int64_t e = 0; e < n * n; e++) m[e] = host_read_f64(x->dtype, x->host, (size_t)(b * n * n + e));
            host_write_f64(x->dtype, out, (size_t)b, n ? host_det(m, (int)n) : 1);
        }
        return VKI_OK;
    }
    if (n == 0) return op_error(c, VKI_ERROR_UNSUPPORTED, "determinants of 0x0 matrices are only computed for constants");
    uint32_t spec[2] = {64, op_dtype_code(x->dtype)};
    struct { uint32_t count, n; } push = {(uint32_t)count, (uint32_t)n};
    return dispatch_1d(c, "misc_det", spec, 2, &push, sizeof push, count);
}

/* Where index `at` (flattened in the inferred shape) lands in the output; -1 if nowhere. */
static int64_t unpool_target(int64_t at, const int64_t *inferred, const int64_t *dims, int rank)
{
    if (at < 0) return -1;
    int64_t dst = 0, stride = 1;
    for (int k = rank - 1; k >= 0; k--) {
        dst += (at % inferred[k]) * stride;
        at /= inferred[k];
        stride *= dims[k];
    }
    return at == 0 ? dst : -1;
}

static vki_status plan_maxunpool(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 3));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0), *ind = op_in(c, 1);
    if (x->dtype == VKI_DTYPE_BOOL) return op_error(c, VKI_ERROR_UNSUPPORTED, "MaxUnpool does not take bool");
    if (ind->dtype != VKI_DTYPE_INT64) return op_error(c, VKI_ERROR_MODEL, "indices must be int64");
    if (x->rank < 3 || ind->rank != x->rank || memcmp(ind->dims, x->dims, (size_t)x->rank * sizeof *x->dims))
        return op_error(c, VKI_ERROR_SHAPE, "X must be [N, C, D1, ...] and the indices of the same shape");
    int spatial = x->rank - 2;
    const int64_t *kernel, *pads = NULL, *strides = NULL;
    if (ir_attr_ints(c->node, "kernel_shape", &kernel) != spatial)
        return op_error(c, VKI_ERROR_MODEL, "kernel_shape must have %d entries", spatial);
    int n_pads = ir_attr_ints(c->node, "pads", &pads), n_strides = ir_attr_ints(c->node, "strides", &strides);
    if ((n_pads >= 0 && n_pads != 2 * spatial) || (n_strides >= 0 && n_strides != spatial))
        return op_error(c, VKI_ERROR_MODEL, "pads must have %d entries and strides %d", 2 * spatial, spatial);
    int64_t out_dims[VKI_MAX_RANK];
    memcpy(out_dims, x->dims, sizeof out_dims);
    for (int d = 0; d < spatial; d++) {
        int64_t stride = n_strides > 0 ? strides[d] : 1;
        int64_t pad = n_pads > 0 ? pads[d] + pads[spatial + d] : 0;
        out_dims[2 + d] = (x->dims[2 + d] - 1) * stride - pad + kernel[d];
    }
    int64_t inferred[VKI_MAX_RANK];
    memcpy(inferred, out_dims, sizeof inferred);
    if (op_has_input(c, 2)) { /* an explicit output_shape overrides (it may add the padding back) */
        int64_t shape[VKI_MAX_RANK];
        int n;
        VKI_TRY(op_const_ints(c, 2, shape, VKI_MAX_RANK, &n));
        if (n != x->rank) return op_error(c, VKI_ERROR_MODEL, "output_shape has %d entries for rank %d", n, x->rank);
        for (int d = 0; d < n; d++) {
            if (d < 2 ? shape[d] != x->dims[d] : shape[d] < out_dims[d])
                return op_error(c, VKI_ERROR_SHAPE, "output_shape[%d] = %lld does not fit the input", d, (long long)shape[d]);
            out_dims[d] = shape[d];
        }
    }
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, out_dims));
    int64_t count = shape_numel(x->dims, x->rank), out_count = shape_numel(out_dims, x->rank);
    if (op_all_inputs_const(c) && out_count <= FOLD_MAX_ELEMENTS) {
        void *out = op_output_host(c, 0); /* zeroed */
        for (int64_t i = 0; i < count; i++) {
            int64_t at = unpool_target(host_read_i64(ind->dtype, ind->host, (size_t)i), inferred, out_dims, x->rank);
            if (at < 0) continue;
            if (dtype_is_float(x->dtype)) host_write_f64(x->dtype, out, (size_t)at, host_read_f64(x->dtype, x->host, (size_t)i));
            else host_write_i64(x->dtype, out, (size_t)at, host_read_i64(x->dtype, x->host, (size_t)i));
        }
        return VKI_OK;
    }
    if ((uint64_t)out_count * 4 > op_max_binding_bytes(c) || out_count > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "tensors larger than one storage binding are not supported here");
    int values[3] = {op_in_index(c, 0), op_in_index(c, 1), op_out_index(c, 0)};
    struct { uint32_t count, out_count, rank, unused, inferred[8], dims[8]; } push = {
        (uint32_t)out_count, (uint32_t)out_count, (uint32_t)x->rank, 0, {0}, {0}};
    for (int d = 0; d < x->rank; d++) {
        push.inferred[d] = (uint32_t)inferred[d];
        push.dims[d] = (uint32_t)out_dims[d];
    }
    uint32_t spec[2] = {128, 0}, gx, gy;
    op_grid_1d((uint64_t)out_count, 128, &gx, &gy);
    VKI_TRY(op_dispatch(c, "misc_maxunpool", spec, 2, &push, sizeof push, values, 3, gx, gy, 1));
    push.count = (uint32_t)count;
    spec[1] = 1;
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    return op_dispatch(c, "misc_maxunpool", spec, 2, &push, sizeof push, values, 3, gx, gy, 1);
}

#define NUMERIC OP_DTYPES_NUMERIC
const op_def op_Shrink = {"Shrink", "", NUMERIC, "", plan_shrink};
const op_def op_CastLike = {"CastLike", "", NUMERIC " bool " OP_DTYPES_SMALL, "", plan_castlike};
const op_def op_Det = {"Det", "", "float32 float16 bfloat16", "matrices up to 16x16", plan_det};
const op_def op_MaxUnpool = {"MaxUnpool", "", NUMERIC, "output_shape must be a plan-time constant; duplicate "
                            "indices keep an arbitrary one of their values", plan_maxunpool};
