/* Index-driven data movement: Gather, GatherElements and OneHot (shaders/gather.glsl,
 * shaders/gather_elements.comp, shaders/onehot.comp), folded on the host when the inputs are small
 * constants. */
#include "movement.h"
#include "../plan/plan.h"

#include <string.h>

static vki_status require_index_dtype(op_ctx *c, int i)
{
    vki_dtype t = op_in(c, i)->dtype;
    if (t != VKI_DTYPE_INT32 && t != VKI_DTYPE_INT64)
        return op_error(c, VKI_ERROR_MODEL, "input %d (indices) must be int32 or int64, not %s", i, vki_dtype_name(t));
    return VKI_OK;
}

/* Constant indices are checked at plan time; the shaders clamp the others. */
static vki_status check_const_indices(op_ctx *c, int i, int64_t axis_dim)
{
    plan_value *v = op_in(c, i);
    if (!v->host) return VKI_OK;
    int64_t n = shape_numel(v->dims, v->rank);
    for (int64_t k = 0; k < n; k++) {
        int64_t idx = host_read_i64(v->dtype, v->host, (size_t)k);
        if (idx < -axis_dim || idx >= axis_dim)
            return op_error(c, VKI_ERROR_SHAPE, "index %lld is out of range for an axis of size %lld", (long long)idx, (long long)axis_dim);
    }
    return VKI_OK;
}

static vki_status gpu_sizes_fit(op_ctx *c)
{
    for (int i = 0; i < op_input_count(c); i++) {
        plan_value *v = op_in(c, i);
        if (v && shape_numel(v->dims, v->rank) > INT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    }
    plan_value *y = op_out(c, 0);
    if (shape_numel(y->dims, y->rank) > INT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    return VKI_OK;
}

static vki_status plan_gather(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    VKI_TRY(require_index_dtype(c, 1));
    plan_value *x = op_in(c, 0), *ind = op_in(c, 1);
    int axis;
    if (x->rank < 1) return op_error(c, VKI_ERROR_SHAPE, "the data must have rank >= 1");
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", 0), x->rank, &axis));
    int rank = x->rank - 1 + ind->rank;
    if (rank > VKI_MAX_RANK) return op_error(c, VKI_ERROR_UNSUPPORTED, "the output would have rank %d", rank);
    int64_t dims[VKI_MAX_RANK];
    memcpy(dims, x->dims, (size_t)axis * sizeof *dims);
    memcpy(dims + axis, ind->dims, (size_t)ind->rank * sizeof *dims);
    memcpy(dims + axis + ind->rank, x->dims + axis + 1, (size_t)(x->rank - axis - 1) * sizeof *dims);
    VKI_TRY(op_set_output(c, 0, x->dtype, rank, dims));
    int64_t axis_dim = x->dims[axis], outer = shape_numel(x->dims, axis), inner = shape_numel(x->dims + axis + 1, x->rank - axis - 1);
    int64_t n_idx = shape_numel(ind->dims, ind->rank), count = outer * n_idx * inner;
    VKI_TRY(check_const_indices(c, 1, axis_dim));
    if (count == 0) {
        if (movement_folds(c)) movement_alloc_host_outputs(c);
        return VKI_OK;
    }
    if (movement_folds(c)) {
        size_t elem = vki_dtype_size(x->dtype);
        char *out = op_output_host(c, 0);
        const char *in = x->host;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t j = 0; j < n_idx; j++) {
                int64_t idx = host_read_i64(ind->dtype, ind->host, (size_t)j);
                if (idx < 0) idx += axis_dim;
                memcpy(out + ((o * n_idx + j) * inner) * (int64_t)elem, in + ((o * axis_dim + idx) * inner) * (int64_t)elem,
                       (size_t)inner * elem);
            }
        return VKI_OK;
    }
    VKI_TRY(op_require_gpu_dtype(c, 0));
    /* X a permuted view (the Transpose before it chose that for these Gathers,
     * op_gather_split_readers): one constant index along axis 0 is a permuted view too, its
     * first element moved by the index's stride; else X's elements are copied in order first */
    int data_in = op_in_index(c, 0);
    if (x->permuted) {
        plan_value *y = op_out(c, 0), *root = op_value(c, plan_root(c->plan, data_in));
        int operand;
        bool direct;
        int yv = op_out_index(c, 0);
        bool graph_output = yv < c->plan->graph->n_values && c->plan->graph->values[yv].is_output;
        if (axis == 0 && n_idx == 1 && ind->host && !x->split_inner && root->storage == y->storage && !graph_output &&
            y->dtype == x->dtype && op_fusion_on(c) &&
            op_product_reader(c, yv, &operand, &direct)) {
            int64_t idx = host_read_i64(ind->dtype, ind->host, 0);
            if (idx < 0) idx += axis_dim;
            y->alias_of = data_in; /* a part of X: op_output_alias keeps whole views only */
            y->view_offset = x->view_offset;
            y->permuted = true;
            y->view_elem = x->view_elem + idx * x->view_strides[0];
            for (int k = 0; k < ind->rank; k++) y->view_strides[k] = 0; /* the index's unit dims */
            for (int k = 1; k < x->rank; k++) y->view_strides[ind->rank + k - 1] = x->view_strides[k];
            return VKI_OK;
        }
        VKI_TRY(op_contiguous_copy(c, data_in, &data_in));
    }
    /* one constant index with nothing outside the axis (q, k, v = qkv[0], qkv[1], qkv[2]):
     * the rows are contiguous, so the output is a view of them */
    if (!x->permuted && outer == 1 && n_idx == 1 && ind->host) {
        int64_t idx = host_read_i64(ind->dtype, ind->host, 0);
        if (op_output_offset_view(c, 0, 0, (idx < 0 ? idx + axis_dim : idx) * inner)) return VKI_OK;
    }
    VKI_TRY(gpu_sizes_fit(c));
    struct { uint32_t count, n_idx; int32_t axis_dim; uint32_t inner; int32_t row0, rows; } push = {
        (uint32_t)count, (uint32_t)n_idx, (int32_t)axis_dim, (uint32_t)inner, 0, (int32_t)axis_dim};
    uint32_t spec[1] = {128}, gx, gy;
    int values[3] = {data_in, op_in_index(c, 1), op_out_index(c, 0)};
    /* float data held as halves is gathered as halves; the indices stay int32 words */
    int data[2] = {values[0], values[2]};
    gpu_storage st = op_move_storage(c, data, 2), stores[3] = {st, GPU_W32, st};
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    const char *shader = op_variant(c, "gather", st);
    uint64_t range = op_max_binding_bytes(c), row = (uint64_t)inner * storage_size(st);
    if ((uint64_t)shape_numel(x->dims, x->rank) * storage_size(st) <= range)
        return op_dispatch_stored(c, shader, spec, 1, &push, sizeof push, values, NULL, stores, 3, gx, gy, 1);
    /* a table larger than one binding (an embedding): windows of its rows, each dispatch writing
     * the outputs whose index falls in its rows; Y and the indices are bound whole */
    uint64_t row_bytes[3] = {row, 0, 0};
    int64_t chunk = outer == 1 ? op_batch_chunk(c, axis_dim, row_bytes, 3) : 0;
    if (chunk <= 0)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "the data is larger than the device's maxStorageBufferRange (%llu bytes); "
                        "Gather splits a table only along the gathered axis 0 (axis %d here)", (unsigned long long)range, axis);
    for (int64_t start = 0; start < axis_dim; start += chunk) {
        push.row0 = (int32_t)start;
        push.rows = (int32_t)(axis_dim - start < chunk ? axis_dim - start : chunk);
        op_window win[3] = {{(uint64_t)start * row, (uint64_t)push.rows * row}, {0, 0}, {0, 0}};
        VKI_TRY(op_dispatch_stored(c, shader, spec, 1, &push, sizeof push, values, win, stores, 3, gx, gy, 1));
    }
    return VKI_OK;
}

static vki_status plan_gather_elements(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    VKI_TRY(require_index_dtype(c, 1));
    plan_value *x = op_in(c, 0), *ind = op_in(c, 1);
    int axis;
    if (x->rank < 1 || ind->rank != x->rank) return op_error(c, VKI_ERROR_SHAPE, "data and indices must have the same rank >= 1");
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", 0), x->rank, &axis));
    for (int k = 0; k < x->rank; k++)
        if (k != axis && ind->dims[k] > x->dims[k])
            return op_error(c, VKI_ERROR_SHAPE, "indices dimension %d is larger than the data's", k);
    VKI_TRY(op_set_output(c, 0, x->dtype, ind->rank, ind->dims));
    int64_t axis_dim = x->dims[axis], count = shape_numel(ind->dims, ind->rank), strides[VKI_MAX_RANK];
    contiguous_strides(x->dims, x->rank, strides);
    VKI_TRY(check_const_indices(c, 1, axis_dim));
    if (movement_folds(c)) {
        size_t elem = vki_dtype_size(x->dtype);
        char *out = op_output_host(c, 0);
        for (int64_t i = 0; i < count; i++) {
            int64_t rest = i, src = 0;
            for (int k = x->rank - 1; k >= 0; k--) {
                int64_t coord = rest % ind->dims[k];
                rest /= ind->dims[k];
                if (k == axis) {
                    coord = host_read_i64(ind->dtype, ind->host, (size_t)i);
                    if (coord < 0) coord += axis_dim;
                }
                src += coord * strides[k];
            }
            memcpy(out + i * (int64_t)elem, (const char *)x->host + src * (int64_t)elem, elem);
        }
        return VKI_OK;
    }
    if (count == 0) return VKI_OK;
    VKI_TRY(op_require_gpu_dtype(c, 0));
    VKI_TRY(gpu_sizes_fit(c));
    struct {
        uint32_t count;
        int32_t axis, axis_dim;
        uint32_t unused;
        uint32_t dims[8];
        int32_t strides[8];
    } push = {(uint32_t)count, axis, (int32_t)axis_dim, 0, {0}, {0}};
    for (int k = 0; k < x->rank; k++) {
        push.dims[k] = (uint32_t)ind->dims[k];
        push.strides[k] = (int32_t)strides[k];
    }
    uint32_t spec[2] = {128, (uint32_t)x->rank}, gx, gy;
    int values[3] = {op_in_index(c, 0), op_in_index(c, 1), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    return op_dispatch(c, "gather_elements", spec, 2, &push, sizeof push, values, 3, gx, gy, 1);
}

static vki_status plan_one_hot(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 3, 3));
    plan_value *ind = op_in(c, 0), *vals = op_in(c, 2);
    double depth_f;
    int n;
    VKI_TRY(op_const_floats(c, 1, &depth_f, 1, &n));
    if (n != 1 || depth_f < 1) return op_error(c, VKI_ERROR_MODEL, "depth must be one positive number");
    if (shape_numel(vals->dims, vals->rank) != 2) return op_error(c, VKI_ERROR_MODEL, "values must hold [off, on]");
    int64_t depth = (int64_t)depth_f;
    int rank = ind->rank + 1, axis;
    if (rank > VKI_MAX_RANK) return op_error(c, VKI_ERROR_UNSUPPORTED, "the output would have rank %d", rank);
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", -1), rank, &axis));
    int64_t dims[VKI_MAX_RANK];
    memcpy(dims, ind->dims, (size_t)axis * sizeof *dims);
    dims[axis] = depth;
    memcpy(dims + axis + 1, ind->dims + axis, (size_t)(ind->rank - axis) * sizeof *dims);
    VKI_TRY(op_set_output(c, 0, vals->dtype, rank, dims));
    int64_t outer = shape_numel(ind->dims, axis), inner = shape_numel(ind->dims + axis, ind->rank - axis);
    int64_t count = outer * depth * inner;
    if (movement_folds(c)) {
        size_t elem = vki_dtype_size(vals->dtype);
        char *out = op_output_host(c, 0);
        for (int64_t i = 0; i < count; i++) {
            int64_t r = i % inner, d = i / inner % depth, o = i / inner / depth;
            int64_t idx = (int64_t)host_read_f64(ind->dtype, ind->host, (size_t)(o * inner + r));
            if (idx < 0) idx += depth;
            memcpy(out + i * (int64_t)elem, (const char *)vals->host + (idx == d ? elem : 0), elem);
        }
        return VKI_OK;
    }
    VKI_TRY(op_require_gpu_dtype(c, 0));
    VKI_TRY(op_require_gpu_dtype(c, 2));
    VKI_TRY(gpu_sizes_fit(c));
    struct { uint32_t count, depth, inner; } push = {(uint32_t)count, (uint32_t)depth, (uint32_t)inner};
    uint32_t spec[2] = {128, op_dtype_code(ind->dtype)}, gx, gy;
    int values[3] = {op_in_index(c, 0), op_in_index(c, 2), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    return op_dispatch(c, "onehot", spec, 2, &push, sizeof push, values, 3, gx, gy, 1);
}

#define ALL_DTYPES OP_DTYPES_ALL
const op_def op_Gather = {"Gather", "", ALL_DTYPES, "", plan_gather};
const op_def op_GatherElements = {"GatherElements", "", ALL_DTYPES, "", plan_gather_elements};
const op_def op_OneHot = {"OneHot", "", ALL_DTYPES, "depth must be a plan-time constant", plan_one_hot};
