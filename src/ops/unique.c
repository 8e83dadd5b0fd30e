/* Unique (shaders/unique.comp): unique elements, or unique slices along `axis`, sorted or in
 * order of first occurrence, with indices, inverse_indices and counts. Items are compared
 * pairwise on the GPU (O(n^2) work: meant for up to some tens of thousands of items); the
 * number of unique items is counted there and read back mid-run (op_data_size: one wait),
 * then the outputs are written for it. NaNs compare unequal to everything. */
#include "op.h"

static vki_status plan_unique(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0);
    int64_t total = shape_numel(x->dims, x->rank), n = total, outer = 1, inner = 1;
    int ax = -1;
    if (ir_attr_int(c->node, "axis", INT64_MIN) != INT64_MIN) {
        VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", 0), x->rank, &ax));
        n = x->dims[ax], outer = shape_numel(x->dims, ax), inner = shape_numel(x->dims + ax + 1, x->rank - ax - 1);
    }
    if (total > INT32_MAX / 3) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^29 elements");
    bool sorted = ir_attr_int(c->node, "sorted", 1) != 0;
    int64_t empty = 0;
    if (n == 0 || total == 0) { /* nothing to find: every output is empty (Y keeps X's other dims) */
        int64_t dims[VKI_MAX_RANK];
        int rank = ax >= 0 ? x->rank : 1;
        for (int k = 0; k < rank; k++) dims[k] = ax >= 0 ? x->dims[k] : 0;
        if (ax >= 0) dims[ax] = 0;
        VKI_TRY(op_set_output(c, 0, x->dtype, rank, dims));
        for (int o = 1; o < 4; o++)
            if (op_has_output(c, o)) VKI_TRY(op_set_output(c, o, VKI_DTYPE_INT64, 1, o == 2 ? &n : &empty));
        return VKI_OK;
    }
    int work, size;
    VKI_TRY(op_temp(c, VKI_DTYPE_INT32, 3 * n, &work));
    VKI_TRY(op_temp(c, VKI_DTYPE_INT32, 1, &size));
    struct { uint32_t n, outer, inner, U, want; } push = {(uint32_t)n, (uint32_t)outer, (uint32_t)inner, 0, 0};
    uint32_t spec[4] = {64, op_dtype_code(x->dtype), 0, sorted}, gx, gy;
    int values[4] = {op_in_index(c, 0), work, size, size};
    op_grid_1d((uint64_t)n, 64, &gx, &gy);
    VKI_TRY(op_dispatch(c, "unique", spec, 4, &push, sizeof push, values, 4, gx, gy, 1));
    spec[2] = 1;
    VKI_TRY(op_dispatch(c, "unique", spec, 4, &push, sizeof push, values, 4, gx, gy, 1));
    int64_t unique;
    bool known;
    VKI_TRY(op_data_size(c, size, n, &unique, &known));
    if (!known) return VKI_OK;
    int64_t dims[VKI_MAX_RANK] = {unique};
    int rank = 1;
    if (ax >= 0) {
        rank = x->rank;
        for (int k = 0; k < rank; k++) dims[k] = x->dims[k];
        dims[ax] = unique;
    }
    VKI_TRY(op_set_output(c, 0, x->dtype, rank, dims));
    for (int o = 1; o < 4; o++)
        if (op_has_output(c, o)) VKI_TRY(op_set_output(c, o, VKI_DTYPE_INT64, 1, o == 2 ? &n : &unique));
    push.U = (uint32_t)unique;
    spec[2] = 2;
    int y_values[4] = {op_in_index(c, 0), work, op_out_index(c, 0), size};
    op_grid_1d((uint64_t)total, 64, &gx, &gy);
    VKI_TRY(op_dispatch(c, "unique", spec, 4, &push, sizeof push, y_values, 4, gx, gy, 1));
    push.want = (op_has_output(c, 1) ? 1u : 0u) | (op_has_output(c, 2) ? 2u : 0u) | (op_has_output(c, 3) ? 4u : 0u);
    if (!push.want) return VKI_OK;
    spec[2] = 3;
    int out_values[4] = {op_has_output(c, 1) ? op_out_index(c, 1) : size, work, op_has_output(c, 2) ? op_out_index(c, 2) : size,
                         op_has_output(c, 3) ? op_out_index(c, 3) : size};
    op_grid_1d((uint64_t)n, 64, &gx, &gy);
    return op_dispatch(c, "unique", spec, 4, &push, sizeof push, out_values, 4, gx, gy, 1);
}

const op_def op_Unique = {"Unique", "", OP_DTYPES_ALL,
                          "pairwise comparisons on the GPU (O(n^2)); the unique count is read back mid-run (one wait); "
                          "NaNs are not merged",
                          plan_unique};
