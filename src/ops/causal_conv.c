/* CausalConvWithState (opset 27): a causal depthwise 1-D convolution over past_state ++ input,
 * with an optional bias and SiLU, and the last k - 1 padded positions as present_state
 * (shaders/causal_conv_with_state.comp, one invocation per output element). */
#include "op.h"

#include <string.h>

static vki_status plan_causal_conv(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 4));
    for (int i = 0; i < 4; i++)
        if (op_has_input(c, i)) VKI_TRY(op_require_float(c, i));
    plan_value *x = op_in(c, 0), *w = op_in(c, 1), *bias = op_has_input(c, 2) ? op_in(c, 2) : NULL;
    plan_value *past = op_has_input(c, 3) ? op_in(c, 3) : NULL;
    char s1[256], s2[256];
    if (x->rank != 3) return op_error(c, VKI_ERROR_SHAPE, "input must be [batch, channels, length], not %s", shape_str(x->dims, x->rank, s1, sizeof s1));
    int64_t B = x->dims[0], C = x->dims[1], L = x->dims[2];
    if (w->rank != 3 || w->dims[0] != C || w->dims[1] != 1 || w->dims[2] < 1)
        return op_error(c, VKI_ERROR_SHAPE, "weight %s must be [%lld, 1, k] for input %s", shape_str(w->dims, w->rank, s1, sizeof s1),
                        (long long)C, shape_str(x->dims, x->rank, s2, sizeof s2));
    int64_t k = w->dims[2];
    if (bias && (bias->rank != 1 || bias->dims[0] != C))
        return op_error(c, VKI_ERROR_SHAPE, "bias %s must be [%lld]", shape_str(bias->dims, bias->rank, s1, sizeof s1), (long long)C);
    if (past && (past->rank != 3 || past->dims[0] != B || past->dims[1] != C || past->dims[2] != k - 1))
        return op_error(c, VKI_ERROR_SHAPE, "past_state %s must be [%lld, %lld, %lld]", shape_str(past->dims, past->rank, s1, sizeof s1),
                        (long long)B, (long long)C, (long long)(k - 1));
    for (int i = 1; i < 4; i++)
        if (op_has_input(c, i) && op_in(c, i)->dtype != x->dtype)
            return op_error(c, VKI_ERROR_MODEL, "input %d is %s; input is %s", i, vki_dtype_name(op_in(c, i)->dtype), vki_dtype_name(x->dtype));
    const char *act = ir_attr_string(c->node, "activation", "none");
    bool silu = !strcmp(act, "silu") || !strcmp(act, "swish");
    if (!silu && strcmp(act, "none")) return op_error(c, VKI_ERROR_MODEL, "activation must be none, silu or swish, not '%s'", act);
    int64_t state_dims[3] = {B, C, k - 1};
    VKI_TRY(op_set_output(c, 0, x->dtype, 3, x->dims));
    if (op_has_output(c, 1)) VKI_TRY(op_set_output(c, 1, x->dtype, 3, state_dims));
    int64_t count = B * C * L, state_count = B * C * (k - 1);
    if (count > UINT32_MAX || state_count > UINT32_MAX || C * k + C > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    int dummy;
    VKI_TRY(op_temp(c, x->dtype, 1, &dummy));
    struct { uint32_t count, C, L, k, has_past, has_bias; } push = {(uint32_t)count, (uint32_t)C, (uint32_t)L, (uint32_t)k,
                                                                     past != NULL, bias != NULL};
    uint32_t gx, gy;
    int past_v = past ? op_in_index(c, 3) : dummy;
    if (count) {
        /* the weights, then the biases, in one buffer: the kernel binds four */
        int params;
        VKI_TRY(op_temp(c, x->dtype, C * k + C, &params));
        uint32_t counts[3] = {(uint32_t)(C * k), bias ? (uint32_t)C : 0, 0};
        int pvalues[4] = {op_in_index(c, 1), bias ? op_in_index(c, 2) : dummy, dummy, params};
        uint32_t pspec[1] = {64};
        op_grid_1d(counts[0] + counts[1], 64, &gx, &gy);
        VKI_TRY(op_dispatch(c, "pack_words", pspec, 1, counts, sizeof counts, pvalues, 4, gx, gy, 1));
        uint32_t spec[4] = {64, op_dtype_code(x->dtype), false, silu};
        int values[4] = {op_in_index(c, 0), past_v, params, op_out_index(c, 0)};
        op_grid_1d((uint64_t)count, 64, &gx, &gy);
        VKI_TRY(op_dispatch(c, "causal_conv_with_state", spec, 4, &push, sizeof push, values, 4, gx, gy, 1));
    }
    if (!op_has_output(c, 1) || state_count == 0) return VKI_OK;
    push.count = (uint32_t)state_count;
    uint32_t spec[4] = {64, op_dtype_code(x->dtype), true, silu};
    int values[4] = {op_in_index(c, 0), past_v, dummy, op_out_index(c, 1)};
    op_grid_1d((uint64_t)state_count, 64, &gx, &gy);
    return op_dispatch(c, "causal_conv_with_state", spec, 4, &push, sizeof push, values, 4, gx, gy, 1);
}

const op_def op_CausalConvWithState = {"CausalConvWithState", "", OP_DTYPES_FLOAT, "", plan_causal_conv};
