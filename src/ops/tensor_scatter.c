/* TensorScatter (shaders/tensor_scatter.comp): a KV-cache update. present = past with
 * update's sequence_length entries written along `axis` from write_indices[batch] on
 * (linear), or from there modulo max_sequence_length (circular). Computed as a gather: each
 * output element reads either the update or the past cache, so no copy comes first. */
#include "op.h"

#include <string.h>

static vki_status plan_tensor_scatter(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 3));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *past = op_in(c, 0), *update = op_in(c, 1);
    char a[256], b[256];
    int ax;
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", -2), past->rank, &ax));
    if (ax == 0) return op_error(c, VKI_ERROR_MODEL, "axis is the batch axis 0");
    bool shapes_ok = update->rank == past->rank && update->dtype == past->dtype;
    for (int k = 0; shapes_ok && k < past->rank; k++)
        shapes_ok = k == ax ? update->dims[k] <= past->dims[k] : update->dims[k] == past->dims[k];
    if (!shapes_ok)
        return op_error(c, VKI_ERROR_SHAPE, "update %s %s must match past_cache %s %s but for a shorter axis %d",
                        vki_dtype_name(update->dtype), shape_str(update->dims, update->rank, a, sizeof a),
                        vki_dtype_name(past->dtype), shape_str(past->dims, past->rank, b, sizeof b), ax);
    bool indices = op_has_input(c, 2);
    if (indices) {
        plan_value *w = op_in(c, 2);
        if (w->rank != 1 || w->dims[0] != past->dims[0] || (w->dtype != VKI_DTYPE_INT64 && w->dtype != VKI_DTYPE_INT32))
            return op_error(c, VKI_ERROR_SHAPE, "write_indices %s %s must be int64 [batch = %lld]", vki_dtype_name(w->dtype),
                            shape_str(w->dims, w->rank, a, sizeof a), (long long)past->dims[0]);
    }
    const char *mode = ir_attr_string(c->node, "mode", "linear");
    bool circular = !strcmp(mode, "circular");
    if (!circular && strcmp(mode, "linear")) return op_error(c, VKI_ERROR_MODEL, "mode must be linear or circular, not '%s'", mode);
    VKI_TRY(op_set_output(c, 0, past->dtype, past->rank, past->dims));
    int64_t count = shape_numel(past->dims, past->rank);
    if (count == 0) return VKI_OK;
    if (count > INT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    int64_t inner = shape_numel(past->dims + ax + 1, past->rank - ax - 1);
    int64_t per_batch = shape_numel(past->dims + 1, ax - 1); /* prefix entries per batch entry */
    struct { uint32_t count, inner, max_len, seq_len, per_batch, has_indices; } push = {
        (uint32_t)count, (uint32_t)inner, (uint32_t)past->dims[ax], (uint32_t)update->dims[ax], (uint32_t)per_batch, indices};
    uint32_t spec[2] = {64, circular}, gx, gy;
    int values[4] = {op_in_index(c, 0), op_in_index(c, 1), indices ? op_in_index(c, 2) : op_in_index(c, 0), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch(c, "tensor_scatter", spec, 2, &push, sizeof push, values, 4, gx, gy, 1);
}

const op_def op_TensorScatter = {"TensorScatter", "", OP_DTYPES_ALL,
                                 "linear mode drops entries written past max_sequence_length", plan_tensor_scatter};
