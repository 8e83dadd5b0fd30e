/* ScatterElements (and the older Scatter) and ScatterND with every reduction (none, add, mul, max,
 * min; shaders/scatter_elements.comp, shaders/scatter_nd.glsl). The shaders work as gathers: each
 * output element collects the updates aimed at it in order, so duplicate indices need no atomics
 * and reduce exactly as the reference does. Small constant inputs are folded on the host. Constant
 * indices out of range are errors at plan time; on the GPU an update whose index (ScatterND: any
 * index of its tuple) is out of range is skipped, so nothing is written outside the output. */
#include "movement.h"

#include <string.h>

enum reduction { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN }; /* keep in step with the shaders */

static vki_status read_reduction(op_ctx *c, enum reduction *out)
{
    const char *r = ir_attr_string(c->node, "reduction", "none");
    if (!strcmp(r, "none")) *out = RED_NONE;
    else if (!strcmp(r, "add")) *out = RED_ADD;
    else if (!strcmp(r, "mul")) *out = RED_MUL;
    else if (!strcmp(r, "max")) *out = RED_MAX;
    else if (!strcmp(r, "min")) *out = RED_MIN;
    else return op_error(c, VKI_ERROR_UNSUPPORTED, "reduction '%s' is not supported (none, add, mul, max, min)", r);
    return VKI_OK;
}

/* out[at] = reduce(out[at], upd[from]) on host data of dtype t. */
static void host_reduce(vki_dtype t, enum reduction red, void *out, int64_t at, const void *upd, int64_t from)
{
    if (dtype_is_float(t)) {
        double a = host_read_f64(t, out, (size_t)at), b = host_read_f64(t, upd, (size_t)from);
        double r = red == RED_ADD ? a + b : red == RED_MUL ? a * b : red == RED_MAX ? (a > b ? a : b)
                 : red == RED_MIN ? (a < b ? a : b) : b;
        host_write_f64(t, out, (size_t)at, r);
    } else {
        int64_t a = host_read_i64(t, out, (size_t)at), b = host_read_i64(t, upd, (size_t)from);
        int64_t r = red == RED_ADD ? a + b : red == RED_MUL ? a * b : red == RED_MAX ? (a > b ? a : b)
                  : red == RED_MIN ? (a < b ? a : b) : b;
        host_write_i64(t, out, (size_t)at, r);
    }
}

static vki_status common_checks(op_ctx *c, enum reduction *red)
{
    VKI_TRY(op_require_inputs(c, 3, 3));
    plan_value *x = op_in(c, 0), *ind = op_in(c, 1), *upd = op_in(c, 2);
    if (ind->dtype != VKI_DTYPE_INT32 && ind->dtype != VKI_DTYPE_INT64)
        return op_error(c, VKI_ERROR_MODEL, "indices must be int32 or int64");
    if (upd->dtype != x->dtype) return op_error(c, VKI_ERROR_MODEL, "updates and data differ in dtype");
    VKI_TRY(read_reduction(c, red));
    if (*red != RED_NONE && x->dtype == VKI_DTYPE_BOOL) return op_error(c, VKI_ERROR_UNSUPPORTED, "reductions on bool");
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    for (int i = 0; i < 3; i++)
        if (shape_numel(op_in(c, i)->dims, op_in(c, i)->rank) > INT32_MAX)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    return VKI_OK;
}

static vki_status gpu_scatter(op_ctx *c, const char *shader, uint32_t spec1, enum reduction red, const void *push, uint32_t push_bytes)
{
    plan_value *x = op_in(c, 0);
    int64_t count = shape_numel(x->dims, x->rank);
    if (count == 0) return VKI_OK;
    for (int i = 0; i < 3; i++) VKI_TRY(op_require_gpu_dtype(c, i));
    uint32_t spec[4] = {128, spec1, op_dtype_code(x->dtype), red}, gx, gy;
    int values[4] = {op_in_index(c, 0), op_in_index(c, 1), op_in_index(c, 2), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    if (strcmp(shader, "scatter_nd")) return op_dispatch(c, shader, spec, 4, push, push_bytes, values, 4, gx, gy, 1);
    /* float data and updates held as halves are scattered as halves; indices stay int32 words */
    int data[3] = {values[0], values[2], values[3]};
    gpu_storage st = op_half_storage(c, data, 3), stores[4] = {st, GPU_W32, st, st};
    return op_dispatch_stored(c, op_variant(c, shader, st), spec, 4, push, push_bytes, values, NULL, stores, 4, gx, gy, 1);
}

static vki_status plan_scatter_elements(op_ctx *c)
{
    enum reduction red;
    VKI_TRY(common_checks(c, &red));
    plan_value *x = op_in(c, 0), *ind = op_in(c, 1), *upd = op_in(c, 2);
    int axis, r = x->rank;
    if (r < 1 || ind->rank != r || upd->rank != r) return op_error(c, VKI_ERROR_SHAPE, "data, indices and updates must have one rank >= 1");
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", 0), r, &axis));
    for (int k = 0; k < r; k++) {
        if (upd->dims[k] != ind->dims[k]) return op_error(c, VKI_ERROR_SHAPE, "updates and indices differ in shape");
        if (k != axis && ind->dims[k] > x->dims[k]) return op_error(c, VKI_ERROR_SHAPE, "indices are larger than the data in dimension %d", k);
    }
    int64_t n = x->dims[axis], idx_count = shape_numel(ind->dims, r), idx_strides[VKI_MAX_RANK], data_strides[VKI_MAX_RANK];
    contiguous_strides(ind->dims, r, idx_strides);
    contiguous_strides(x->dims, r, data_strides);
    if (ind->host)
        for (int64_t i = 0; i < idx_count; i++) {
            int64_t v = host_read_i64(ind->dtype, ind->host, (size_t)i);
            if (v < -n || v >= n) return op_error(c, VKI_ERROR_SHAPE, "index %lld is out of range for an axis of size %lld", (long long)v, (long long)n);
        }
    if (movement_folds(c)) {
        void *out = op_output_host(c, 0);
        memcpy(out, x->host, (size_t)shape_numel(x->dims, r) * vki_dtype_size(x->dtype));
        for (int64_t i = 0; i < idx_count; i++) {
            int64_t rest = i, at = 0;
            for (int k = r - 1; k >= 0; k--) {
                int64_t coord = rest % ind->dims[k];
                rest /= ind->dims[k];
                if (k == axis) {
                    coord = host_read_i64(ind->dtype, ind->host, (size_t)i);
                    if (coord < 0) coord += n;
                }
                at += coord * data_strides[k];
            }
            host_reduce(x->dtype, red, out, at, upd->host, i);
        }
        return VKI_OK;
    }
    struct {
        uint32_t count;
        int32_t axis, n_along_axis;
        uint32_t unused;
        int32_t data_dims[8], idx_dims[8], idx_strides[8];
    } push = {(uint32_t)shape_numel(x->dims, r), axis, (int32_t)ind->dims[axis], 0, {0}, {0}, {0}};
    for (int k = 0; k < r; k++) {
        push.data_dims[k] = (int32_t)x->dims[k];
        push.idx_dims[k] = (int32_t)ind->dims[k];
        push.idx_strides[k] = (int32_t)idx_strides[k];
    }
    return gpu_scatter(c, "scatter_elements", (uint32_t)r, red, &push, sizeof push);
}

static vki_status plan_scatter_nd(op_ctx *c)
{
    enum reduction red;
    VKI_TRY(common_checks(c, &red));
    plan_value *x = op_in(c, 0), *ind = op_in(c, 1), *upd = op_in(c, 2);
    if (ind->rank < 1) return op_error(c, VKI_ERROR_SHAPE, "indices must have rank >= 1");
    int k = (int)ind->dims[ind->rank - 1];
    if (k < 1 || k > x->rank) return op_error(c, VKI_ERROR_SHAPE, "index tuples of length %d for data of rank %d", k, x->rank);
    int upd_rank = ind->rank - 1 + x->rank - k;
    bool ok = upd->rank == upd_rank;
    for (int d = 0; ok && d < ind->rank - 1; d++) ok = upd->dims[d] == ind->dims[d];
    for (int d = 0; ok && d < x->rank - k; d++) ok = upd->dims[ind->rank - 1 + d] == x->dims[k + d];
    if (!ok) return op_error(c, VKI_ERROR_SHAPE, "updates must have shape indices.shape[:-1] + data.shape[%d:]", k);
    int64_t tuples = shape_numel(ind->dims, ind->rank - 1), slice = shape_numel(x->dims + k, x->rank - k), outer_strides[VKI_MAX_RANK];
    contiguous_strides(x->dims, k, outer_strides);
    if (ind->host)
        for (int64_t i = 0; i < tuples * k; i++) {
            int64_t v = host_read_i64(ind->dtype, ind->host, (size_t)i), n = x->dims[i % k];
            if (v < -n || v >= n) return op_error(c, VKI_ERROR_SHAPE, "index %lld is out of range for a dimension of size %lld", (long long)v, (long long)n);
        }
    if (movement_folds(c)) {
        void *out = op_output_host(c, 0);
        memcpy(out, x->host, (size_t)shape_numel(x->dims, x->rank) * vki_dtype_size(x->dtype));
        for (int64_t m = 0; m < tuples; m++) {
            int64_t outer = 0;
            for (int t = 0; t < k; t++) {
                int64_t v = host_read_i64(ind->dtype, ind->host, (size_t)(m * k + t));
                outer += (v < 0 ? v + x->dims[t] : v) * outer_strides[t];
            }
            for (int64_t s = 0; s < slice; s++) host_reduce(x->dtype, red, out, outer * slice + s, upd->host, m * slice + s);
        }
        return VKI_OK;
    }
    struct {
        uint32_t count, n_tuples, slice, unused;
        int32_t dims[8], outer_strides[8];
    } push = {(uint32_t)shape_numel(x->dims, x->rank), (uint32_t)tuples, (uint32_t)(slice ? slice : 1), 0, {0}, {0}};
    for (int t = 0; t < k; t++) {
        push.dims[t] = (int32_t)x->dims[t];
        push.outer_strides[t] = (int32_t)outer_strides[t];
    }
    return gpu_scatter(c, "scatter_nd", (uint32_t)k, red, &push, sizeof push);
}

#define ALL_DTYPES OP_DTYPES_ALL
const op_def op_ScatterElements = {"ScatterElements", "", ALL_DTYPES, "", plan_scatter_elements};
const op_def op_Scatter = {"Scatter", "", ALL_DTYPES, "", plan_scatter_elements};
const op_def op_ScatterND = {"ScatterND", "", ALL_DTYPES, "out-of-range index tuples are skipped on the GPU", plan_scatter_nd};
