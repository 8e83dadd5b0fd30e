/* The optimizers of ai.onnx.preview.training: Adagrad, Adam and Momentum (standard and
 * nesterov) over any number of tensors (shaders/optimizer.comp), as ONNX's reference. R and T
 * may be computed on the GPU. Per tensor, its operands are packed (shaders/pack_words.comp)
 * and each output is one element-wise dispatch: three bindings. */
#include "op.h"

#include <string.h>

enum { RULE_ADAGRAD = 0, RULE_ADAM, RULE_MOMENTUM, RULE_NESTEROV };

static vki_status plan_optimizer(op_ctx *c, uint32_t rule, int states)
{
    int n_in = op_input_count(c), groups = (n_in - 2) / (2 + states);
    if (n_in < 2 + 2 + states || (n_in - 2) % (2 + states) || op_output_count(c) != groups * (1 + states))
        return op_error(c, VKI_ERROR_MODEL, "%d inputs and %d outputs: expected R, T, then X, G%s per tensor, and as many "
                        "outputs of each", n_in, op_output_count(c), states == 2 ? ", V, H" : states ? ", and its state" : "");
    VKI_TRY(op_require_float(c, 0));
    plan_value *r = op_in(c, 0), *t = op_in(c, 1);
    if (shape_numel(r->dims, r->rank) != 1 || shape_numel(t->dims, t->rank) != 1 || !dtype_is_int(t->dtype))
        return op_error(c, VKI_ERROR_MODEL, "R must be a float scalar and T an integer scalar");
    const char *mode = ir_attr_string(c->node, "mode", "standard");
    if (rule == RULE_MOMENTUM && !strcmp(mode, "nesterov")) rule = RULE_NESTEROV;
    else if (rule == RULE_MOMENTUM && strcmp(mode, "standard"))
        return op_error(c, VKI_ERROR_MODEL, "mode must be standard or nesterov, not '%s'", mode);
    bool adam = rule == RULE_ADAM;
    struct { uint32_t n, rt_at; float norm, norm_post, alpha, beta, epsilon, decay; } push = {
        0, 0, ir_attr_float(c->node, "norm_coefficient", 0.0f), ir_attr_float(c->node, "norm_coefficient_post", 0.0f),
        ir_attr_float(c->node, "alpha", adam ? 0.9f : 0.0f), ir_attr_float(c->node, "beta", adam ? 0.999f : 0.0f),
        ir_attr_float(c->node, "epsilon", adam ? 1e-6f : 0.0f), ir_attr_float(c->node, "decay_factor", 0.0f)};
    if (rule != RULE_ADAGRAD && !adam && (!ir_find_attr(c->node, "alpha") || !ir_find_attr(c->node, "beta") ||
                                          !ir_find_attr(c->node, "norm_coefficient")))
        return op_error(c, VKI_ERROR_MODEL, "Momentum needs the alpha, beta and norm_coefficient attributes");
    for (int k = 0; k < groups; k++) {
        int ix = 2 + k, ig = 2 + groups + k, is = 2 + 2 * groups + k, ih = adam ? 2 + 3 * groups + k : -1;
        plan_value *x = op_in(c, ix);
        int64_t n = shape_numel(x->dims, x->rank);
        int ins[4] = {ix, ig, is, ih};
        for (int j = 0; j < 4; j++) {
            if (ins[j] < 0) continue;
            VKI_TRY(op_require_float(c, ins[j]));
            plan_value *v = op_in(c, ins[j]);
            char a[256], b[256];
            if (v->rank != x->rank || memcmp(v->dims, x->dims, sizeof(int64_t) * (size_t)x->rank) || v->dtype != x->dtype)
                return op_error(c, VKI_ERROR_SHAPE, "input %d is %s%s, X%d %s%s", ins[j], vki_dtype_name(v->dtype),
                                shape_str(v->dims, v->rank, a, sizeof a), k + 1, vki_dtype_name(x->dtype),
                                shape_str(x->dims, x->rank, b, sizeof b));
        }
        for (int o = 0; o <= states; o++)
            if (op_has_output(c, o * groups + k)) VKI_TRY(op_set_output(c, o * groups + k, x->dtype, x->rank, x->dims));
        if (n == 0) continue;
        if (n > UINT32_MAX / 3) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^30 elements");
        int a_packed, b_packed;
        int a_ins[3] = {ix, ig, is}, b_ins[3] = {ih, 0, 1};
        uint32_t a_counts[3] = {(uint32_t)n, (uint32_t)n, (uint32_t)n}, b_counts[3] = {adam ? (uint32_t)n : 0, 1, 1};
        VKI_TRY(op_pack_words(c, a_ins, a_counts, &a_packed));
        VKI_TRY(op_pack_words(c, b_ins, b_counts, &b_packed));
        push.n = (uint32_t)n;
        push.rt_at = b_counts[0];
        uint32_t gx, gy;
        op_grid_1d((uint64_t)n, 64, &gx, &gy);
        for (int o = 0; o <= states; o++) {
            if (!op_has_output(c, o * groups + k)) continue;
            uint32_t spec[4] = {64, op_dtype_code(x->dtype), rule, (uint32_t)o};
            int values[3] = {a_packed, b_packed, op_out_index(c, o * groups + k)};
            VKI_TRY(op_dispatch(c, "optimizer", spec, 4, &push, sizeof push, values, 3, gx, gy, 1));
        }
    }
    return VKI_OK;
}

static vki_status plan_adagrad(op_ctx *c) { return plan_optimizer(c, RULE_ADAGRAD, 1); }
static vki_status plan_adam(op_ctx *c) { return plan_optimizer(c, RULE_ADAM, 2); }
static vki_status plan_momentum(op_ctx *c) { return plan_optimizer(c, RULE_MOMENTUM, 1); }

#define TRAINING "ai.onnx.preview.training"
const op_def op_Adagrad = {"Adagrad", TRAINING, OP_DTYPES_FLOAT, "", plan_adagrad};
const op_def op_Adam = {"Adam", TRAINING, OP_DTYPES_FLOAT, "", plan_adam};
const op_def op_Momentum = {"Momentum", TRAINING, OP_DTYPES_FLOAT, "standard and nesterov modes", plan_momentum};
