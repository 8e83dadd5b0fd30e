/* Loss functions: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (log-softmax over the
 * class axis, then the same loss), shaders/nll_loss.comp per position (shaders/nll_log_prob.comp
 * writes the log_prob output), shaders/nll_loss_reduce.comp for reduction sum or mean (one
 * workgroup). Accumulates in fp32.
 * A target outside [0, C) that is not ignore_index counts as ignored (loss 0, weight 0). */
#include "op.h"

#include <string.h>

enum { REDUCE_NONE, REDUCE_SUM, REDUCE_MEAN };

static vki_status plan_loss(op_ctx *c)
{
    bool sce = !strcmp(c->node->op_type, "SoftmaxCrossEntropyLoss");
    VKI_TRY(op_require_inputs(c, 2, 3));
    VKI_TRY(op_require_float(c, 0));
    VKI_TRY(op_require_gpu_dtype(c, 1));
    plan_value *x = op_in(c, 0), *target = op_in(c, 1), *weight = op_has_input(c, 2) ? op_in(c, 2) : NULL;
    char a[256], b[256];
    if (x->rank < 2) return op_error(c, VKI_ERROR_SHAPE, "the input must be [N, C, d1, ...], not %s", shape_str(x->dims, x->rank, a, sizeof a));
    if (target->dtype != VKI_DTYPE_INT32 && target->dtype != VKI_DTYPE_INT64)
        return op_error(c, VKI_ERROR_MODEL, "the target must be int32 or int64, not %s", vki_dtype_name(target->dtype));
    bool same = target->rank == x->rank - 1 && target->dims[0] == x->dims[0];
    for (int d = 1; same && d < target->rank; d++) same = target->dims[d] == x->dims[d + 1];
    if (!same)
        return op_error(c, VKI_ERROR_SHAPE, "the target's shape %s is not the input's %s without its class axis",
                        shape_str(target->dims, target->rank, a, sizeof a), shape_str(x->dims, x->rank, b, sizeof b));
    int64_t C = x->dims[1];
    if (weight && (weight->dtype != x->dtype || weight->rank != 1 || weight->dims[0] != C))
        return op_error(c, VKI_ERROR_SHAPE, "the weight must be %s[%lld], not %s%s", vki_dtype_name(x->dtype), (long long)C,
                        vki_dtype_name(weight->dtype), shape_str(weight->dims, weight->rank, a, sizeof a));
    const char *reduction = ir_attr_string(c->node, "reduction", "mean");
    int mode = !strcmp(reduction, "none") ? REDUCE_NONE : !strcmp(reduction, "sum") ? REDUCE_SUM
             : !strcmp(reduction, "mean") ? REDUCE_MEAN : -1;
    if (mode < 0) return op_error(c, VKI_ERROR_MODEL, "reduction must be none, sum or mean, not '%s'", reduction);
    const ir_attr *ii = ir_find_attr(c->node, "ignore_index");
    if (ii && ii->type != ATTR_INT) return op_error(c, VKI_ERROR_MODEL, "ignore_index must be an integer");
    if (ii && (ii->i < INT32_MIN || ii->i > INT32_MAX))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "ignore_index %lld is outside int32 (targets are held as int32)", (long long)ii->i);

    if (mode == REDUCE_NONE) VKI_TRY(op_set_output(c, 0, x->dtype, target->rank, target->dims));
    else VKI_TRY(op_set_output(c, 0, x->dtype, 0, NULL));
    bool write_logp = sce && op_has_output(c, 1);
    if (write_logp) VKI_TRY(op_set_output(c, 1, x->dtype, x->rank, x->dims));

    int64_t positions = shape_numel(target->dims, target->rank), count = shape_numel(x->dims, x->rank);
    if (count > UINT32_MAX || positions > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    int64_t D = positions / (x->dims[0] ? x->dims[0] : 1);
    if (positions == 0 || C == 0) {
        if (mode == REDUCE_NONE && positions == 0) return VKI_OK;
        return op_error(c, VKI_ERROR_UNSUPPORTED, "an empty input (%s) is not supported", shape_str(x->dims, x->rank, a, sizeof a));
    }
    int dummy, loss_v;
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, 1, &dummy));
    uint32_t gx, gy;
    op_grid_1d((uint64_t)positions, 64, &gx, &gy);
    if (write_logp) { /* its own dispatch: the loss kernel already binds four buffers */
        struct { uint32_t positions, C, D; } lpush = {(uint32_t)positions, (uint32_t)C, (uint32_t)D};
        uint32_t lspec[2] = {64, op_dtype_code(x->dtype)};
        int lvalues[2] = {op_in_index(c, 0), op_out_index(c, 1)};
        VKI_TRY(op_dispatch(c, "nll_log_prob", lspec, 2, &lpush, sizeof lpush, lvalues, 2, gx, gy, 1));
    }
    /* reduction none: the losses are the output; else the losses, then the weights, in scratch */
    if (mode == REDUCE_NONE) loss_v = op_out_index(c, 0);
    else VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, 2 * positions, &loss_v));
    struct { uint32_t positions, C, D; int32_t ignore_index; uint32_t has_ignore, has_weight, write_wsum, round_loss; } push = {
        (uint32_t)positions, (uint32_t)C, (uint32_t)D, ii ? (int32_t)ii->i : 0, ii != NULL, weight != NULL,
        mode != REDUCE_NONE, mode == REDUCE_NONE};
    uint32_t spec[3] = {64, op_dtype_code(x->dtype), sce};
    int values[4] = {op_in_index(c, 0), op_in_index(c, 1), weight ? op_in_index(c, 2) : dummy, loss_v};
    VKI_TRY(op_dispatch(c, "nll_loss", spec, 3, &push, sizeof push, values, 4, gx, gy, 1));
    if (mode == REDUCE_NONE) return VKI_OK;
    uint32_t rspec[3] = {128, op_dtype_code(x->dtype), mode == REDUCE_MEAN};
    uint32_t rpush = (uint32_t)positions;
    int rvalues[2] = {loss_v, op_out_index(c, 0)};
    return op_dispatch(c, "nll_loss_reduce", rspec, 3, &rpush, sizeof rpush, rvalues, 2, 1, 1, 1);
}

#define NOTE "a target outside [0, C) counts as ignored (loss 0, weight 0)"
const op_def op_NegativeLogLikelihoodLoss = {"NegativeLogLikelihoodLoss", "", OP_DTYPES_FLOAT, NOTE, plan_loss};
const op_def op_SoftmaxCrossEntropyLoss = {"SoftmaxCrossEntropyLoss", "", OP_DTYPES_FLOAT, NOTE, plan_loss};
