/* Attention (opsets 23-25): scaled dot-product attention with grouped-query heads, a bool or
 * numeric attn_mask, is_causal, a KV cache (past_key/past_value -> present_key/present_value),
 * softcap, nonpad_kv_seqlen, sliding windows and qk_matmul_output. Dispatches:
 *   attention_kv (twice)  keys then values, past and new, packed as kv[b][head][key][D + Dv]
 *                         (and written to present_key / present_value when asked for);
 *   attention_bias        when there is an attn_mask or nonpad_kv_seqlen: the additive bias;
 *   attention             Y, one workgroup per query row;
 *   attention_scores      qk_matmul_output, when asked for.
 * Packing keys and values keeps every kernel at 4 bindings (the Android Baseline's limit). */
#include "op.h"

#include <math.h>
#include <string.h>

#define ATTN_GROUP 64
#define ATTN_CACHE 2048 /* keys whose logits attention.glsl keeps in shared memory (8 KiB) */

typedef struct attn_shape {
    int64_t batch, q_heads, kv_heads, q_len, new_len, past_len, kv_len, head, v_head;
    bool in_3d;
} attn_shape;

static vki_status read_shape(op_ctx *c, attn_shape *s)
{
    plan_value *q = op_in(c, 0), *k = op_in(c, 1), *v = op_in(c, 2);
    if ((q->rank != 3 && q->rank != 4) || k->rank != q->rank || v->rank != q->rank)
        return op_error(c, VKI_ERROR_SHAPE, "Q, K and V must all be 3-D or all 4-D");
    s->in_3d = q->rank == 3;
    s->batch = q->dims[0];
    if (k->dims[0] != s->batch || v->dims[0] != s->batch) return op_error(c, VKI_ERROR_SHAPE, "Q, K and V differ in batch");
    if (s->in_3d) {
        s->q_heads = ir_attr_int(c->node, "q_num_heads", 0), s->kv_heads = ir_attr_int(c->node, "kv_num_heads", 0);
        if (s->q_heads <= 0 || s->kv_heads <= 0)
            return op_error(c, VKI_ERROR_MODEL, "3-D Q, K and V need the q_num_heads and kv_num_heads attributes");
        if (q->dims[2] % s->q_heads || k->dims[2] % s->kv_heads || v->dims[2] % s->kv_heads)
            return op_error(c, VKI_ERROR_SHAPE, "the hidden sizes of Q, K and V must divide by q_num_heads %lld and "
                            "kv_num_heads %lld", (long long)s->q_heads, (long long)s->kv_heads);
        s->q_len = q->dims[1], s->new_len = k->dims[1];
        s->head = q->dims[2] / s->q_heads, s->v_head = v->dims[2] / s->kv_heads;
        if (k->dims[2] / s->kv_heads != s->head) return op_error(c, VKI_ERROR_SHAPE, "Q and K differ in head size");
        if (v->dims[1] != s->new_len) return op_error(c, VKI_ERROR_SHAPE, "K and V differ in sequence length");
    } else {
        s->q_heads = q->dims[1], s->kv_heads = k->dims[1], s->q_len = q->dims[2], s->new_len = k->dims[2];
        s->head = q->dims[3], s->v_head = v->dims[3];
        if (k->dims[3] != s->head) return op_error(c, VKI_ERROR_SHAPE, "Q and K differ in head size");
        if (v->dims[1] != s->kv_heads || v->dims[2] != s->new_len)
            return op_error(c, VKI_ERROR_SHAPE, "K and V differ in heads or sequence length");
    }
    if (s->kv_heads <= 0 || s->q_heads % s->kv_heads)
        return op_error(c, VKI_ERROR_SHAPE, "%lld query heads cannot share %lld key/value heads", (long long)s->q_heads,
                        (long long)s->kv_heads);
    plan_value *pk = op_in(c, 4), *pv = op_in(c, 5);
    if (!pk != !pv) return op_error(c, VKI_ERROR_MODEL, "past_key and past_value must be given together");
    s->past_len = 0;
    if (pk) {
        if (pk->rank != 4 || pv->rank != 4 || pk->dims[0] != s->batch || pk->dims[1] != s->kv_heads ||
            pk->dims[3] != s->head || pv->dims[0] != s->batch || pv->dims[1] != s->kv_heads || pv->dims[2] != pk->dims[2] ||
            pv->dims[3] != s->v_head)
            return op_error(c, VKI_ERROR_SHAPE, "past_key/past_value must be [batch, kv_heads, past, head size] "
                            "(%lld, %lld, past, %lld / %lld)", (long long)s->batch, (long long)s->kv_heads,
                            (long long)s->head, (long long)s->v_head);
        s->past_len = pk->dims[2];
    }
    s->kv_len = s->past_len + s->new_len;
    return VKI_OK;
}

/* The dtype code of softmax_precision (a TensorProto type), or the inputs' own. */
static vki_status softmax_dtype(op_ctx *c, vki_dtype t1, uint32_t *code)
{
    int64_t p = ir_attr_int(c->node, "softmax_precision", 0);
    switch (p) {
    case 0: *code = op_dtype_code(t1); return VKI_OK;
    case 1: case 11: *code = op_dtype_code(VKI_DTYPE_FLOAT); return VKI_OK; /* float, double: fp32 (finer than T1) */
    case 10: *code = op_dtype_code(VKI_DTYPE_FLOAT16); return VKI_OK;
    case 16: *code = op_dtype_code(VKI_DTYPE_BFLOAT16); return VKI_OK;
    default: return op_error(c, VKI_ERROR_MODEL, "softmax_precision %lld is not a float type", (long long)p);
    }
}

/* Keys (column 0) or values (column head) into the packed kv, and present_* when asked. */
static vki_status pack_kv(op_ctx *c, const attn_shape *s, int kv, gpu_storage st, int which)
{
    int past = op_in_index(c, 4 + which), now = op_in_index(c, 1 + which), present = op_out_index(c, 1 + which);
    int64_t dim = which ? s->v_head : s->head, count = s->batch * s->kv_heads * s->kv_len * dim;
    uint32_t spec[3] = {64, s->in_3d, present >= 0};
    struct { uint32_t count, heads, past_len, new_len, dim, width, column; } push = {
        (uint32_t)count, (uint32_t)s->kv_heads, (uint32_t)s->past_len, (uint32_t)s->new_len, (uint32_t)dim,
        (uint32_t)(s->head + s->v_head), which ? (uint32_t)s->head : 0};
    int values[4] = {past >= 0 ? past : now, now, kv, present >= 0 ? present : kv};
    gpu_storage stores[4] = {st, st, st, st};
    uint32_t gx, gy;
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch_stored(c, op_variant(c, "attention_kv", st), spec, 3, &push, sizeof push, values, NULL, stores, 4,
                              gx, gy, 1);
}

/* The additive bias of attn_mask and nonpad_kv_seqlen (with the causal and window frontiers
 * at nonpad_kv_seqlen's per-batch offsets), [dims[0..3]] with strides[0..2] for the kernels. */
static vki_status make_bias(op_ctx *c, const attn_shape *s, bool causal, bool window, int64_t left, int64_t right,
                            int *bias, uint32_t strides[3])
{
    plan_value *m = op_in(c, 3), *np = op_in(c, 6);
    int64_t full[4] = {s->batch, s->q_heads, s->q_len, s->kv_len}, mdims[4] = {1, 1, 1, 1}, mlen = s->kv_len;
    uint32_t mask_kind = 0, mstride[3] = {0, 0, 0};
    if (m) {
        if (m->rank < 1 || m->rank > 4) return op_error(c, VKI_ERROR_SHAPE, "attn_mask must have rank 1 to 4");
        for (int k = 0; k < m->rank; k++) mdims[4 - m->rank + k] = m->dims[k];
        mlen = mdims[3];
        if (mlen > s->kv_len)
            return op_error(c, VKI_ERROR_SHAPE, "attn_mask's last dim %lld is longer than the %lld keys", (long long)mlen,
                            (long long)s->kv_len);
        for (int k = 0; k < 3; k++)
            if (mdims[k] != 1 && mdims[k] != full[k])
                return op_error(c, VKI_ERROR_SHAPE, "attn_mask does not broadcast to [batch %lld, heads %lld, q %lld, keys]",
                                (long long)full[0], (long long)full[1], (long long)full[2]);
        mask_kind = m->dtype == VKI_DTYPE_BOOL ? 1 : dtype_is_float(m->dtype) ? 2 : 3;
        if (mask_kind == 3) VKI_TRY(op_require_gpu_dtype(c, 3));
        mstride[2] = mdims[2] > 1 ? (uint32_t)mlen : 0;
        mstride[1] = mdims[1] > 1 ? (uint32_t)(mdims[2] * mlen) : 0;
        mstride[0] = mdims[0] > 1 ? (uint32_t)(mdims[1] * mdims[2] * mlen) : 0;
    }
    if (np && (np->dtype != VKI_DTYPE_INT64 || np->rank != 1 || np->dims[0] != s->batch))
        return op_error(c, VKI_ERROR_SHAPE, "nonpad_kv_seqlen must be int64 [batch %lld]", (long long)s->batch);
    int64_t dims[4] = {np ? s->batch : mdims[0], mdims[1], np && (causal || window) ? s->q_len : mdims[2], s->kv_len};
    int64_t count = dims[0] * dims[1] * dims[2] * dims[3];
    if (count > INT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "the attention bias has more than 2^31 elements");
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, count ? count : 1, bias));
    strides[2] = dims[2] > 1 ? (uint32_t)dims[3] : 0;
    strides[1] = dims[1] > 1 ? (uint32_t)(dims[2] * dims[3]) : 0;
    strides[0] = dims[0] > 1 ? (uint32_t)(dims[1] * dims[2] * dims[3]) : 0;
    uint32_t spec[5] = {64, mask_kind, np != NULL, np && causal, np && window};
    struct { uint32_t count, heads, q_len, kv_len, mask_len, mask_b, mask_h, mask_q, full_q_len; int32_t left, right; } push = {
        (uint32_t)count, (uint32_t)dims[1], (uint32_t)dims[2], (uint32_t)dims[3], (uint32_t)mlen,
        mstride[0], mstride[1], mstride[2], (uint32_t)s->q_len, (int32_t)left, (int32_t)right};
    int values[3] = {op_in_index(c, m ? 3 : 6), op_in_index(c, np ? 6 : 3), *bias};
    uint32_t gx, gy;
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch(c, "attention_bias", spec, 5, &push, sizeof push, values, 3, gx, gy, 1);
}

static vki_status plan_attention(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 3, 7));
    for (int i = 0; i < 6; i++)
        if (i != 3) VKI_TRY(op_require_float(c, i));
    plan_value *q = op_in(c, 0);
    for (int i = 1; i < 6; i++)
        if (i != 3 && op_in(c, i) && op_in(c, i)->dtype != q->dtype)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "input %d is %s and Q %s; inputs of different float types are "
                            "not supported", i, vki_dtype_name(op_in(c, i)->dtype), vki_dtype_name(q->dtype));
    attn_shape s;
    VKI_TRY(read_shape(c, &s));
    if (op_in(c, 6) && s.past_len)
        return op_error(c, VKI_ERROR_MODEL, "nonpad_kv_seqlen cannot be combined with past_key/past_value");
    bool causal = ir_attr_int(c->node, "is_causal", 0) != 0;
    int64_t left = ir_attr_int(c->node, "left_window_size", -1), right = ir_attr_int(c->node, "right_window_size", -1);
    if (left < -1 || right < -1)
        return op_error(c, VKI_ERROR_MODEL, "window sizes must be -1 or nonnegative, not %lld / %lld", (long long)left,
                        (long long)right);
    bool window = left >= 0 || right >= 0;
    int64_t mode = ir_attr_int(c->node, "qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3)
        return op_error(c, VKI_ERROR_MODEL, "qk_matmul_output_mode must be 0 to 3, not %lld", (long long)mode);
    uint32_t softmax_dt = 0;
    VKI_TRY(softmax_dtype(c, q->dtype, &softmax_dt));
    const ir_attr *scale_attr = ir_find_attr(c->node, "scale");
    double scale = scale_attr ? ir_attr_float(c->node, "scale", 1.0f) : 1.0 / sqrt((double)s.head);
    float softcap = ir_attr_float(c->node, "softcap", 0.0f);

    int64_t ydims[4];
    if (s.in_3d) ydims[0] = s.batch, ydims[1] = s.q_len, ydims[2] = s.q_heads * s.v_head;
    else ydims[0] = s.batch, ydims[1] = s.q_heads, ydims[2] = s.q_len, ydims[3] = s.v_head;
    VKI_TRY(op_set_output(c, 0, q->dtype, s.in_3d ? 3 : 4, ydims));
    int64_t pk[4] = {s.batch, s.kv_heads, s.kv_len, s.head}, pv[4] = {s.batch, s.kv_heads, s.kv_len, s.v_head};
    int64_t qk[4] = {s.batch, s.q_heads, s.q_len, s.kv_len};
    VKI_TRY(op_set_output(c, 1, q->dtype, 4, pk));
    VKI_TRY(op_set_output(c, 2, q->dtype, 4, pv));
    VKI_TRY(op_set_output(c, 3, q->dtype, 4, qk));
    if ((op_has_output(c, 1) || op_has_output(c, 2)) && !(op_has_output(c, 1) && op_has_output(c, 2)))
        return op_error(c, VKI_ERROR_MODEL, "present_key and present_value must be asked for together");

    int64_t rows = s.batch * s.q_heads * s.q_len, width = s.head + s.v_head;
    int64_t kv_count = s.batch * s.kv_heads * s.kv_len * width;
    if (rows * (s.head > s.v_head ? s.head : s.v_head) > INT32_MAX || rows * s.kv_len > INT32_MAX || kv_count > INT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "tensors of more than 2^31 elements");
    if (s.head == 0) return op_error(c, VKI_ERROR_SHAPE, "a head size of 0");

    int io[7] = {op_in_index(c, 0), op_in_index(c, 1), op_in_index(c, 2), op_out_index(c, 0), op_out_index(c, 1),
                 op_out_index(c, 2), op_out_index(c, 3)};
    gpu_storage st = op_half_storage(c, io, 7);
    int kv;
    VKI_TRY(op_temp(c, q->dtype, kv_count ? kv_count : 1, &kv));
    op_value(c, kv)->storage = st;
    VKI_TRY(pack_kv(c, &s, kv, st, 0));
    VKI_TRY(pack_kv(c, &s, kv, st, 1));

    int bias = -1;
    uint32_t bias_strides[3] = {0, 0, 0};
    bool has_bias = op_in(c, 3) || op_in(c, 6);
    if (has_bias) VKI_TRY(make_bias(c, &s, causal, window, left, right, &bias, bias_strides));

    struct {
        uint32_t batch, q_heads, kv_heads, q_len, kv_len, head, v_head;
        int32_t offset;
        float scale_sqrt, softcap;
        int32_t left, right;
        uint32_t bias_b, bias_h, bias_q;
    } push = {(uint32_t)s.batch, (uint32_t)s.q_heads, (uint32_t)s.kv_heads, (uint32_t)s.q_len, (uint32_t)s.kv_len,
              (uint32_t)s.head, (uint32_t)s.v_head, (int32_t)s.past_len, (float)sqrt(scale), softcap,
              (int32_t)left, (int32_t)right, bias_strides[0], bias_strides[1], bias_strides[2]};
    /* with nonpad_kv_seqlen the frontiers are in the bias, at per-batch offsets */
    bool inline_frontiers = !op_in(c, 6);
    uint32_t spec[9] = {ATTN_GROUP, op_dtype_code(q->dtype), softmax_dt, s.in_3d, has_bias, causal && inline_frontiers,
                        window && inline_frontiers, softcap > 0, s.kv_len <= ATTN_CACHE ? ATTN_CACHE : 1};
    int values[4] = {op_in_index(c, 0), kv, has_bias ? bias : op_in_index(c, 0), op_out_index(c, 0)};
    gpu_storage stores[4] = {st, st, has_bias ? GPU_W32 : st, st};
    uint32_t gx = rows > 65535 ? 65535 : (uint32_t)rows, gy = gx ? (uint32_t)((rows + gx - 1) / gx) : 0;
    VKI_TRY(op_dispatch_stored(c, op_variant(c, "attention", st), spec, 9, &push, sizeof push, values, NULL, stores, 4,
                               gx, gy, 1));
    if (!op_has_output(c, 3)) return VKI_OK;
    spec[0] = 64;
    spec[8] = (uint32_t)mode;
    values[3] = op_out_index(c, 3);
    op_grid_1d((uint64_t)rows, 64, &gx, &gy);
    return op_dispatch_stored(c, op_variant(c, "attention_scores", st), spec, 9, &push, sizeof push, values, NULL, stores,
                              4, gx, gy, 1);
}

/* FlexAttention (ai.onnx.preview) without score_mod and prob_mod is Attention over 4-D
 * inputs with its scale and grouped heads, the softmax in float32 unless softmax_precision
 * says otherwise: planned as that. The modifier subgraphs would have to run between the
 * kernels; they are refused. */
static vki_status plan_flex_attention(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 3, 3));
    if (ir_find_attr(c->node, "score_mod") || ir_find_attr(c->node, "prob_mod"))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "score_mod and prob_mod subgraphs are not supported");
    for (int i = 0; i < 3; i++)
        if (op_in(c, i)->rank != 4) return op_error(c, VKI_ERROR_SHAPE, "Q, K and V must be 4-D (input %d is not)", i);
    if (op_output_count(c) != 1) return op_error(c, VKI_ERROR_MODEL, "FlexAttention has one output");
    ir_attr attrs[2] = {{.name = "softmax_precision", .type = ATTR_INT, .i = ir_attr_int(c->node, "softmax_precision", 1)}};
    int n_attrs = 1;
    const ir_attr *scale = ir_find_attr(c->node, "scale");
    if (scale) attrs[n_attrs++] = *scale;
    ir_node node = *c->node;
    node.attrs = attrs;
    node.n_attrs = n_attrs;
    op_ctx attention = *c;
    attention.node = &node;
    return plan_attention(&attention);
}

const op_def op_FlexAttention = {"FlexAttention", "ai.onnx.preview", OP_DTYPES_FLOAT,
                                 "without score_mod / prob_mod subgraphs (planned as Attention)", plan_flex_attention};
const op_def op_Attention = {"Attention", "", OP_DTYPES_FLOAT,
                             "Q, K, V and the past of one float type; qk_matmul_output mode 0 with a softcap is "
                             "softcapped, as ONNX's reference gives",
                             plan_attention};
