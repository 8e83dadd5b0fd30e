/* RotaryEmbedding (opset 23): shaders/rotary_cache.comp gathers each (batch, position)'s cos and
 * sin pairs from the caches, shaders/rotary.glsl rotates the input with them. */
#include "op.h"

static vki_status plan_rotary(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 3, 4));
    for (int i = 0; i < 3; i++) VKI_TRY(op_require_float(c, i));
    plan_value *x = op_in(c, 0), *cosv = op_in(c, 1), *sinv = op_in(c, 2), *pos = op_in(c, 3);
    if (x->rank != 3 && x->rank != 4) return op_error(c, VKI_ERROR_SHAPE, "the input must be 3-D or 4-D");
    int64_t batch = x->dims[0], heads, seq, head;
    if (x->rank == 4) {
        heads = x->dims[1], seq = x->dims[2], head = x->dims[3];
    } else {
        heads = ir_attr_int(c->node, "num_heads", 0), seq = x->dims[1];
        if (heads <= 0 || x->dims[2] % heads)
            return op_error(c, VKI_ERROR_MODEL, "a 3-D input needs num_heads (%lld) dividing its last dim",
                            (long long)heads);
        head = x->dims[2] / heads;
    }
    int64_t rot = ir_attr_int(c->node, "rotary_embedding_dim", 0);
    if (rot == 0) rot = head;
    if (rot < 0 || rot > head || rot % 2)
        return op_error(c, VKI_ERROR_MODEL, "rotary_embedding_dim %lld must be even and at most the head size %lld",
                        (long long)rot, (long long)head);
    int64_t half = rot / 2, rows;
    if (cosv->rank != sinv->rank || cosv->rank < 1 || cosv->dims[cosv->rank - 1] != half)
        return op_error(c, VKI_ERROR_SHAPE, "cos_cache and sin_cache must end in rotary_embedding_dim / 2 = %lld",
                        (long long)half);
    for (int d = 0; d < cosv->rank; d++)
        if (cosv->dims[d] != sinv->dims[d]) return op_error(c, VKI_ERROR_SHAPE, "cos_cache and sin_cache differ in shape");
    if (pos) {
        if (pos->dtype != VKI_DTYPE_INT64 || pos->rank != 2 || pos->dims[0] != batch || pos->dims[1] != seq)
            return op_error(c, VKI_ERROR_SHAPE, "position_ids must be int64 [batch %lld, sequence %lld]", (long long)batch,
                            (long long)seq);
        if (cosv->rank != 2) return op_error(c, VKI_ERROR_SHAPE, "with position_ids the caches must be 2-D");
        rows = cosv->dims[0];
    } else {
        if (cosv->rank != 3 || cosv->dims[0] != batch || cosv->dims[1] != seq)
            return op_error(c, VKI_ERROR_SHAPE, "without position_ids the caches must be [batch %lld, sequence %lld, %lld]",
                            (long long)batch, (long long)seq, (long long)half);
        rows = batch * seq;
    }
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    int64_t count = shape_numel(x->dims, x->rank), pairs = batch * seq * half;
    if (count == 0) return VKI_OK;
    if (count > INT32_MAX || 2 * pairs > INT32_MAX || rows * half > INT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    if (pairs == 0) return op_error(c, VKI_ERROR_SHAPE, "rotary_embedding_dim is 0 for a non-empty input");
    if (pos && rows == 0) return op_error(c, VKI_ERROR_SHAPE, "empty caches");
    int table;
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, 2 * pairs, &table));
    uint32_t gx, gy;
    {
        uint32_t spec[2] = {64, pos != NULL};
        struct { uint32_t count, half, rows; } push = {(uint32_t)pairs, (uint32_t)half, (uint32_t)rows};
        int values[4] = {op_in_index(c, 1), op_in_index(c, 2), op_in_index(c, pos ? 3 : 1), table};
        op_grid_1d((uint64_t)pairs, 64, &gx, &gy);
        VKI_TRY(op_dispatch(c, "rotary_cache", spec, 2, &push, sizeof push, values, 4, gx, gy, 1));
    }
    uint32_t spec[4] = {64, op_dtype_code(x->dtype), x->rank == 3, ir_attr_int(c->node, "interleaved", 0) != 0};
    struct { uint32_t count, heads, seq, head, rot; } push = {(uint32_t)count, (uint32_t)heads, (uint32_t)seq,
                                                             (uint32_t)head, (uint32_t)rot};
    int values[3] = {op_in_index(c, 0), table, op_out_index(c, 0)};
    int halves[2] = {values[0], values[2]};
    gpu_storage st = op_half_storage(c, halves, 2), stores[3] = {st, GPU_W32, st};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch_stored(c, op_variant(c, "rotary", st), spec, 4, &push, sizeof push, values, NULL, stores, 3, gx, gy, 1);
}

const op_def op_RotaryEmbedding = {"RotaryEmbedding", "", OP_DTYPES_FLOAT,
                                   "position_ids out of the caches' range are clamped into it", plan_rotary};
