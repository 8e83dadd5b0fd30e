/* ReverseSequence (shaders/reverse_sequence.glsl): each batch entry's first sequence_lens[b]
 * steps along the time axis are reversed, the rest copied. Constant lengths outside
 * [0, time steps] are errors at plan time; the kernel clamps the others into that range. */
#include "movement.h"

static vki_status plan_reverse_sequence(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    plan_value *x = op_in(c, 0), *lens = op_in(c, 1);
    if (lens->dtype != VKI_DTYPE_INT32 && lens->dtype != VKI_DTYPE_INT64)
        return op_error(c, VKI_ERROR_MODEL, "sequence_lens must be int32 or int64, not %s", vki_dtype_name(lens->dtype));
    if (x->rank < 2) return op_error(c, VKI_ERROR_SHAPE, "the input must have rank >= 2");
    int batch_axis, time_axis;
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "batch_axis", 1), x->rank, &batch_axis));
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "time_axis", 0), x->rank, &time_axis));
    if (batch_axis == time_axis || batch_axis > 1 || time_axis > 1)
        return op_error(c, VKI_ERROR_MODEL, "batch_axis and time_axis must be 0 and 1 in some order");
    int64_t batch = x->dims[batch_axis], steps = x->dims[time_axis];
    if (lens->rank != 1 || lens->dims[0] != batch)
        return op_error(c, VKI_ERROR_SHAPE, "sequence_lens must have shape [%lld]", (long long)batch);
    if (lens->host)
        for (int64_t b = 0; b < batch; b++) {
            int64_t n = host_read_i64(lens->dtype, lens->host, (size_t)b);
            if (n < 0 || n > steps)
                return op_error(c, VKI_ERROR_SHAPE, "sequence length %lld is outside [0, %lld]", (long long)n, (long long)steps);
        }
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    int64_t count = shape_numel(x->dims, x->rank), strides[VKI_MAX_RANK];
    if (count == 0) return VKI_OK;
    VKI_TRY(op_require_gpu_dtype(c, 0));
    if (count > INT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    contiguous_strides(x->dims, x->rank, strides);
    struct { uint32_t count, batch_stride, batch, time_stride, steps; } push = {
        (uint32_t)count, (uint32_t)strides[batch_axis], (uint32_t)batch, (uint32_t)strides[time_axis], (uint32_t)steps};
    uint32_t spec[1] = {128}, gx, gy;
    int values[3] = {op_in_index(c, 0), op_in_index(c, 1), op_out_index(c, 0)};
    int data[2] = {values[0], values[2]};
    gpu_storage st = op_move_storage(c, data, 2), stores[3] = {st, GPU_W32, st};
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    return op_dispatch_stored(c, op_variant(c, "reverse_sequence", st), spec, 1, &push, sizeof push, values, NULL, stores, 3,
                              gx, gy, 1);
}

const op_def op_ReverseSequence = {"ReverseSequence", "", OP_DTYPES_ALL, "", plan_reverse_sequence};
