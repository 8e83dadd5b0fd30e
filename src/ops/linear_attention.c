/* LinearAttention (opset 27; shaders/linear_attention.comp): the recurrent linear, gated,
 * delta and gated_delta rules over [B, T, H * D] query, key and value, with grouped-query
 * heads and an optional past state [B, H_kv, d_k, d_v] (-> present_state). Every update of the
 * state touches one column of it (one value dim) at a time, so one invocation per (batch,
 * KV head, value dim) runs the T steps in order holding that column in present_state (or a
 * scratch copy). Query, key and value are packed into one buffer, past_state, decay and beta
 * into another: four bindings, the Android Baseline 2022 limit. */
#include "op.h"

#include <math.h>
#include <string.h>

enum { LA_NONE = 0, LA_PER_HEAD, LA_PER_KEY_DIM, LA_SHARED }; /* decay and beta layouts */

static vki_status plan_linear_attention(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 3, 6));
    for (int i = 0; i < 6; i++)
        if (op_has_input(c, i)) {
            VKI_TRY(op_require_float(c, i));
            if (op_in(c, i)->dtype != op_in(c, 0)->dtype)
                return op_error(c, VKI_ERROR_UNSUPPORTED, "input %d is %s, query %s: mixed dtypes are not supported", i,
                                vki_dtype_name(op_in(c, i)->dtype), vki_dtype_name(op_in(c, 0)->dtype));
        }
    plan_value *q = op_in(c, 0), *k = op_in(c, 1), *v = op_in(c, 2);
    char a[256], b[256], d[256];
    const char *rule = ir_attr_string(c->node, "update_rule", "gated_delta");
    bool gated = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta"), delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
    if (!gated && !delta && strcmp(rule, "linear"))
        return op_error(c, VKI_ERROR_MODEL, "update_rule '%s' is not one of linear, gated, delta, gated_delta", rule);
    if (gated != op_has_input(c, 4) || delta != op_has_input(c, 5))
        return op_error(c, VKI_ERROR_MODEL, "update_rule '%s' %s decay and %s beta", rule, gated ? "needs" : "forbids",
                        delta ? "needs" : "forbids");
    int64_t hq = ir_attr_int(c->node, "q_num_heads", 0), hkv = ir_attr_int(c->node, "kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0 || hq % hkv)
        return op_error(c, VKI_ERROR_MODEL, "q_num_heads %lld must be a positive multiple of kv_num_heads %lld", (long long)hq,
                        (long long)hkv);
    if (q->rank != 3 || k->rank != 3 || v->rank != 3 || k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0] ||
        k->dims[1] != q->dims[1] || v->dims[1] != q->dims[1] || q->dims[2] % hq || v->dims[2] % hkv ||
        k->dims[2] != hkv * (q->dims[2] / hq))
        return op_error(c, VKI_ERROR_SHAPE, "query %s, key %s, value %s must be [B, T, %lld * d_k], [B, T, %lld * d_k], "
                        "[B, T, %lld * d_v]", shape_str(q->dims, 3, a, sizeof a), shape_str(k->dims, k->rank, b, sizeof b),
                        shape_str(v->dims, v->rank, d, sizeof d), (long long)hq, (long long)hkv, (long long)hkv);
    int64_t batch = q->dims[0], steps = q->dims[1], dk = q->dims[2] / hq, dv = v->dims[2] / hkv;
    int64_t state_dims[4] = {batch, hkv, dk, dv};
    if (op_has_input(c, 3)) {
        plan_value *p = op_in(c, 3);
        if (p->rank != 4 || memcmp(p->dims, state_dims, sizeof state_dims))
            return op_error(c, VKI_ERROR_SHAPE, "past_state %s must be %s", shape_str(p->dims, p->rank, a, sizeof a),
                            shape_str(state_dims, 4, b, sizeof b));
    }
    uint32_t decay_mode = LA_NONE, beta_mode = LA_NONE;
    if (gated) {
        plan_value *g = op_in(c, 4);
        bool ok = g->rank == 3 && g->dims[0] == batch && g->dims[1] == steps;
        decay_mode = ok && g->dims[2] == hkv ? LA_PER_HEAD : ok && g->dims[2] == hkv * dk ? LA_PER_KEY_DIM : LA_NONE;
        if (decay_mode == LA_NONE)
            return op_error(c, VKI_ERROR_SHAPE, "decay %s must be [B, T, %lld] or [B, T, %lld]", shape_str(g->dims, g->rank, a, sizeof a),
                            (long long)hkv, (long long)(hkv * dk));
    }
    if (delta) {
        plan_value *be = op_in(c, 5);
        bool ok = be->rank == 3 && be->dims[0] == batch && be->dims[1] == steps;
        beta_mode = ok && be->dims[2] == hkv ? LA_PER_HEAD : ok && be->dims[2] == 1 ? LA_SHARED : LA_NONE;
        if (beta_mode == LA_NONE)
            return op_error(c, VKI_ERROR_SHAPE, "beta %s must be [B, T, %lld] or [B, T, 1]", shape_str(be->dims, be->rank, a, sizeof a),
                            (long long)hkv);
    }
    int64_t out_dims[3] = {batch, steps, hq * dv};
    VKI_TRY(op_set_output(c, 0, q->dtype, 3, out_dims));
    if (op_has_output(c, 1)) VKI_TRY(op_set_output(c, 1, q->dtype, 4, state_dims));
    int64_t columns = batch * hkv * dv, state_count = shape_numel(state_dims, 4);
    if (columns == 0) return VKI_OK;
    uint64_t qkv_words = (uint64_t)shape_numel(q->dims, 3) + (uint64_t)shape_numel(k->dims, 3) + (uint64_t)shape_numel(v->dims, 3);
    uint64_t param_words = (op_has_input(c, 3) ? (uint64_t)state_count : 0) +
                           (gated ? (uint64_t)shape_numel(op_in(c, 4)->dims, 3) : 0) +
                           (delta ? (uint64_t)shape_numel(op_in(c, 5)->dims, 3) : 0);
    if (qkv_words > UINT32_MAX || param_words > UINT32_MAX || (uint64_t)shape_numel(out_dims, 3) > UINT32_MAX ||
        (uint64_t)state_count > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    int qkv, params, state;
    int qkv_ins[3] = {0, 1, 2}, param_ins[3] = {op_has_input(c, 3) ? 3 : -1, gated ? 4 : -1, delta ? 5 : -1};
    uint32_t qkv_counts[3] = {(uint32_t)shape_numel(q->dims, 3), (uint32_t)shape_numel(k->dims, 3), (uint32_t)shape_numel(v->dims, 3)};
    uint32_t param_counts[3] = {op_has_input(c, 3) ? (uint32_t)state_count : 0,
                                gated ? (uint32_t)shape_numel(op_in(c, 4)->dims, 3) : 0,
                                delta ? (uint32_t)shape_numel(op_in(c, 5)->dims, 3) : 0};
    VKI_TRY(op_pack_words(c, qkv_ins, qkv_counts, &qkv));
    VKI_TRY(op_pack_words(c, param_ins, param_counts, &params));
    if (op_has_output(c, 1)) state = op_out_index(c, 1);
    else VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, state_count, &state));
    float scale = ir_attr_float(c->node, "scale", 0.0f);
    if (scale == 0.0f) scale = (float)(1.0 / sqrt((double)dk));
    struct {
        uint32_t columns, T, Hq, Hkv, dk, dv, k_at, v_at, has_past, decay_mode, beta_mode, decay_at, beta_at;
        float scale;
    } push = {(uint32_t)columns, (uint32_t)steps, (uint32_t)hq, (uint32_t)hkv, (uint32_t)dk, (uint32_t)dv, qkv_counts[0],
              qkv_counts[0] + qkv_counts[1], op_has_input(c, 3), decay_mode, beta_mode, param_counts[0],
              param_counts[0] + param_counts[1], scale};
    uint32_t spec[2] = {64, op_dtype_code(q->dtype)}, gx, gy;
    int values[4] = {qkv, params, op_out_index(c, 0), state};
    op_grid_1d((uint64_t)columns, 64, &gx, &gy);
    return op_dispatch(c, "linear_attention", spec, 2, &push, sizeof push, values, 4, gx, gy, 1);
}

const op_def op_LinearAttention = {"LinearAttention", "", OP_DTYPES_FLOAT,
                                   "the recurrent form (chunk_size is ignored); one dtype for every input",
                                   plan_linear_attention};
