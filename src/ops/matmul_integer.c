/* Integer products: MatMulInteger and ConvInteger (int32 out), QLinearMatMul and QLinearConv
 * (requantized to 8 bits). Matrix products of int8/uint8 matrices are batched when both operands have the same batch dims or one is 2-D.
 * Zero points and scales are scalars, per row of A or per column of B; they are packed into
 * one buffer each (shaders/pack_words.comp) so that no kernel binds more than four. The
 * products run in int32 on one invocation per output (shaders/matmul_integer.comp,
 * shaders/conv_integer.comp; these ops serve small quantized models, not the float kernels'
 * speed), then shaders/requantize.comp. */
#include "op.h"

#include <string.h>

static bool int8ish(vki_dtype t) { return t == VKI_DTYPE_INT8 || t == VKI_DTYPE_UINT8; }

/* A zero point or scale of `v` (absent: 0 entries) for operand rows/columns of `count`. */
static vki_status per_count(op_ctx *c, int input, int64_t count, const char *what, uint32_t *n)
{
    *n = 0;
    if (!op_has_input(c, input)) return VKI_OK;
    plan_value *v = op_in(c, input);
    int64_t k = shape_numel(v->dims, v->rank);
    if (v->rank > 1 || (k != 1 && k != count))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "input %d (%s) must hold one value or %lld (one per %s), not %lld", input, what,
                        (long long)count, what, (long long)k);
    *n = (uint32_t)k;
    return VKI_OK;
}

static vki_status plan_matmul_integer(op_ctx *c)
{
    bool qlinear = !strcmp(c->node->op_type, "QLinearMatMul");
    /* the operands' input indices: QLinearMatMul (a, a_scale, a_zp, b, b_scale, b_zp, y_scale,
     * y_zp), MatMulInteger (A, B, a_zp, b_zp) */
    int ia = 0, ib = qlinear ? 3 : 1, iazp = 2, ibzp = qlinear ? 5 : 3;
    VKI_TRY(op_require_inputs(c, qlinear ? 6 : 2, qlinear ? 8 : 4));
    for (int i = 0; i < op_input_count(c); i++)
        if (op_has_input(c, i)) VKI_TRY(op_require_gpu_dtype(c, i));
    plan_value *a = op_in(c, ia), *b = op_in(c, ib);
    char s1[256], s2[256];
    if (!int8ish(a->dtype) || !int8ish(b->dtype))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "A and B must be int8 or uint8, not %s and %s", vki_dtype_name(a->dtype),
                        vki_dtype_name(b->dtype));
    if (a->rank < 2 || b->rank < 2)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "1-D operands are not supported (A %s, B %s)",
                        shape_str(a->dims, a->rank, s1, sizeof s1), shape_str(b->dims, b->rank, s2, sizeof s2));
    int64_t M = a->dims[a->rank - 2], K = a->dims[a->rank - 1], N = b->dims[b->rank - 1];
    if (b->dims[b->rank - 2] != K)
        return op_error(c, VKI_ERROR_SHAPE, "A %s and B %s do not multiply", shape_str(a->dims, a->rank, s1, sizeof s1),
                        shape_str(b->dims, b->rank, s2, sizeof s2));
    /* batch dims: equal, or one operand 2-D */
    const plan_value *batched = a->rank >= b->rank ? a : b;
    if (a->rank > 2 && b->rank > 2) {
        bool same = a->rank == b->rank;
        for (int d = 0; same && d < a->rank - 2; d++) same = a->dims[d] == b->dims[d];
        if (!same)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "batch dims of A %s and B %s must be equal (or one operand 2-D)",
                            shape_str(a->dims, a->rank, s1, sizeof s1), shape_str(b->dims, b->rank, s2, sizeof s2));
    }
    int64_t dims[VKI_MAX_RANK];
    int rank = batched->rank;
    for (int d = 0; d < rank - 2; d++) dims[d] = batched->dims[d];
    dims[rank - 2] = M;
    dims[rank - 1] = N;
    uint32_t a_zps, b_zps;
    VKI_TRY(per_count(c, iazp, M, "row of A", &a_zps));
    VKI_TRY(per_count(c, ibzp, N, "column of B", &b_zps));
    if ((a_zps && op_in(c, iazp)->dtype != a->dtype) || (b_zps && op_in(c, ibzp)->dtype != b->dtype))
        return op_error(c, VKI_ERROR_MODEL, "a zero point's dtype differs from its operand's");
    vki_dtype out = VKI_DTYPE_INT32;
    uint32_t a_scales = 0, b_scales = 0, y_scales = 0;
    if (qlinear) {
        VKI_TRY(op_require_float(c, 1));
        VKI_TRY(op_require_float(c, 4));
        VKI_TRY(op_require_float(c, 6));
        VKI_TRY(per_count(c, 1, M, "row of A", &a_scales));
        VKI_TRY(per_count(c, 4, N, "column of B", &b_scales));
        VKI_TRY(per_count(c, 6, 1, "tensor", &y_scales));
        if (op_in(c, 4)->dtype != op_in(c, 1)->dtype || op_in(c, 6)->dtype != op_in(c, 1)->dtype)
            return op_error(c, VKI_ERROR_MODEL, "the scales must share one dtype");
        out = op_has_input(c, 7) ? op_in(c, 7)->dtype : a->dtype;
        if (!int8ish(out)) return op_error(c, VKI_ERROR_UNSUPPORTED, "y must be int8 or uint8, not %s", vki_dtype_name(out));
        if (op_has_input(c, 7) && shape_numel(op_in(c, 7)->dims, op_in(c, 7)->rank) != 1)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "y_zero_point must hold one value");
    }
    VKI_TRY(op_set_output(c, 0, out, rank, dims));
    int64_t count = shape_numel(dims, rank);
    if (count == 0) return VKI_OK;
    if (count > UINT32_MAX || shape_numel(a->dims, a->rank) > UINT32_MAX || shape_numel(b->dims, b->rank) > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");

    int zps, product;
    int zp_ins[3] = {a_zps ? iazp : -1, b_zps ? ibzp : -1, -1};
    uint32_t zp_counts[3] = {a_zps, b_zps, 0};
    VKI_TRY(op_pack_words(c, zp_ins, zp_counts, &zps));
    if (qlinear) VKI_TRY(op_temp(c, VKI_DTYPE_INT32, count, &product));
    else product = op_out_index(c, 0);
    struct { uint32_t count, M, K, N, a_batch_stride, b_batch_stride, a_zps, b_zps; } push = {
        (uint32_t)count, (uint32_t)M, (uint32_t)K, (uint32_t)N, a->rank > 2 ? (uint32_t)(M * K) : 0,
        b->rank > 2 ? (uint32_t)(K * N) : 0, a_zps, b_zps};
    uint32_t spec[1] = {64}, gx, gy;
    int values[4] = {op_in_index(c, ia), op_in_index(c, ib), zps, product};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    VKI_TRY(op_dispatch(c, "matmul_integer", spec, 1, &push, sizeof push, values, 4, gx, gy, 1));
    if (!qlinear) return VKI_OK;

    int scales;
    int scale_ins[3] = {1, 4, 6};
    uint32_t scale_counts[3] = {a_scales, b_scales, y_scales};
    VKI_TRY(op_pack_words(c, scale_ins, scale_counts, &scales));
    struct { uint32_t count, M, N, a_scales, b_scales, has_zero_point; int32_t lo, hi; } rpush = {
        (uint32_t)count, (uint32_t)M, (uint32_t)N, a_scales, b_scales, op_has_input(c, 7),
        out == VKI_DTYPE_INT8 ? -128 : 0, out == VKI_DTYPE_INT8 ? 127 : 255};
    uint32_t rspec[2] = {64, op_dtype_code(op_in(c, 1)->dtype)};
    int rvalues[4] = {product, scales, op_has_input(c, 7) ? op_in_index(c, 7) : product, op_out_index(c, 0)};
    return op_dispatch(c, "requantize", rspec, 2, &rpush, sizeof rpush, rvalues, 4, gx, gy, 1);
}

/* ---- ConvInteger (x, w, x_zero_point, w_zero_point) and QLinearConv (x, x_scale, x_zp, w,
 * w_scale, w_zp, y_scale, y_zp, B): 1-D to 3-D, groups, strides, dilations, pads, auto_pad;
 * w's zero point and scale per tensor or per output channel ---- */

static vki_status plan_conv_integer(op_ctx *c)
{
    bool qlinear = !strcmp(c->node->op_type, "QLinearConv");
    int ix = 0, iw = qlinear ? 3 : 1, ixzp = 2, iwzp = qlinear ? 5 : 3;
    VKI_TRY(op_require_inputs(c, qlinear ? 8 : 2, qlinear ? 9 : 4));
    for (int i = 0; i < op_input_count(c); i++)
        if (op_has_input(c, i)) VKI_TRY(op_require_gpu_dtype(c, i));
    plan_value *x = op_in(c, ix), *w = op_in(c, iw);
    char s1[256], s2[256];
    if (!int8ish(x->dtype) || !int8ish(w->dtype))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "x and w must be int8 or uint8, not %s and %s", vki_dtype_name(x->dtype),
                        vki_dtype_name(w->dtype));
    int nsp = x->rank - 2;
    int64_t group = ir_attr_int(c->node, "group", 1), oc = w->dims[0];
    if (x->rank < 3 || x->rank > 5 || w->rank != x->rank || group < 1 || x->dims[1] != w->dims[1] * group || oc % group)
        return op_error(c, VKI_ERROR_SHAPE, "x %s and w %s with group %lld: 1-D to 3-D convolutions, w [OC, C / group, k...]",
                        shape_str(x->dims, x->rank, s1, sizeof s1), shape_str(w->dims, w->rank, s2, sizeof s2), (long long)group);
    int64_t stride[3], dil[3], pads[6], kernel[3];
    VKI_TRY(op_attr_ints_n(c, "strides", nsp, 1, 1, INT32_MAX, stride));
    VKI_TRY(op_attr_ints_n(c, "dilations", nsp, 1, 1, INT32_MAX, dil));
    VKI_TRY(op_attr_ints_n(c, "pads", 2 * nsp, 0, 0, INT32_MAX, pads));
    VKI_TRY(op_attr_ints_n(c, "kernel_shape", nsp, 0, 0, INT32_MAX, kernel));
    const char *auto_pad = ir_attr_string(c->node, "auto_pad", "NOTSET");
    bool same = !strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER");
    if (!same && strcmp(auto_pad, "NOTSET") && strcmp(auto_pad, "VALID"))
        return op_error(c, VKI_ERROR_MODEL, "auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad);
    int64_t dims[5] = {x->dims[0], oc}, pad_begin[3];
    for (int d = 0; d < nsp; d++) {
        if (kernel[d] && kernel[d] != w->dims[2 + d]) return op_error(c, VKI_ERROR_SHAPE, "kernel_shape does not match w");
        int64_t in = x->dims[2 + d], span = (w->dims[2 + d] - 1) * dil[d] + 1;
        if (same) {
            dims[2 + d] = (in + stride[d] - 1) / stride[d];
            int64_t total = (dims[2 + d] - 1) * stride[d] + span - in;
            if (total < 0) total = 0;
            pad_begin[d] = !strcmp(auto_pad, "SAME_UPPER") ? total / 2 : total - total / 2;
        } else {
            bool notset = !strcmp(auto_pad, "NOTSET");
            pad_begin[d] = notset ? pads[d] : 0;
            int64_t padded = in + (notset ? pads[d] + pads[nsp + d] : 0) - span;
            if (padded < 0) return op_error(c, VKI_ERROR_SHAPE, "the kernel does not fit spatial dim %d (%lld)", d, (long long)in);
            dims[2 + d] = padded / stride[d] + 1;
        }
    }
    uint32_t x_zps, w_zps, x_scales = 0, w_scales = 0, y_scales = 0;
    VKI_TRY(per_count(c, ixzp, 1, "tensor", &x_zps));
    VKI_TRY(per_count(c, iwzp, oc, "output channel", &w_zps));
    if ((x_zps && op_in(c, ixzp)->dtype != x->dtype) || (w_zps && op_in(c, iwzp)->dtype != w->dtype))
        return op_error(c, VKI_ERROR_MODEL, "a zero point's dtype differs from its operand's");
    vki_dtype out = VKI_DTYPE_INT32;
    bool bias = qlinear && op_has_input(c, 8);
    if (qlinear) {
        VKI_TRY(op_require_float(c, 1));
        VKI_TRY(op_require_float(c, 4));
        VKI_TRY(op_require_float(c, 6));
        VKI_TRY(per_count(c, 1, 1, "tensor", &x_scales));
        VKI_TRY(per_count(c, 4, oc, "output channel", &w_scales));
        VKI_TRY(per_count(c, 6, 1, "tensor", &y_scales));
        if (op_in(c, 4)->dtype != op_in(c, 1)->dtype || op_in(c, 6)->dtype != op_in(c, 1)->dtype)
            return op_error(c, VKI_ERROR_MODEL, "the scales must share one dtype");
        out = op_in(c, 7)->dtype;
        if (!int8ish(out)) return op_error(c, VKI_ERROR_UNSUPPORTED, "y must be int8 or uint8, not %s", vki_dtype_name(out));
        if (shape_numel(op_in(c, 7)->dims, op_in(c, 7)->rank) != 1)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "y_zero_point must hold one value");
        if (bias && (op_in(c, 8)->dtype != VKI_DTYPE_INT32 || shape_numel(op_in(c, 8)->dims, op_in(c, 8)->rank) != oc))
            return op_error(c, VKI_ERROR_MODEL, "B must be int32 [%lld]", (long long)oc);
    }
    VKI_TRY(op_set_output(c, 0, out, x->rank, dims));
    int64_t count = shape_numel(dims, x->rank);
    if (count == 0) return VKI_OK;
    if (count > UINT32_MAX || shape_numel(x->dims, x->rank) > UINT32_MAX || shape_numel(w->dims, w->rank) > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    int zps, product;
    int zp_ins[3] = {x_zps ? ixzp : -1, w_zps ? iwzp : -1, bias ? 8 : -1};
    uint32_t zp_counts[3] = {x_zps, w_zps, bias ? (uint32_t)oc : 0};
    VKI_TRY(op_pack_words(c, zp_ins, zp_counts, &zps));
    if (qlinear) VKI_TRY(op_temp(c, VKI_DTYPE_INT32, count, &product));
    else product = op_out_index(c, 0);
    /* spatial dims padded to 3 with leading 1s */
    struct {
        uint32_t count, C, OC, ic_per_group, oc_per_group, x_zps, w_zps, has_bias;
        int32_t in[3], out[3], kernel[3], stride[3], dil[3], pad[3];
    } push = {(uint32_t)count, (uint32_t)x->dims[1], (uint32_t)oc, (uint32_t)w->dims[1], (uint32_t)(oc / group), x_zps, w_zps,
              bias, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}};
    for (int d = 0; d < nsp; d++) {
        int j = 3 - nsp + d;
        if (x->dims[2 + d] > INT32_MAX || dims[2 + d] > INT32_MAX || pad_begin[d] > INT32_MAX)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "spatial dim %d is too large", d);
        push.in[j] = (int32_t)x->dims[2 + d];
        push.out[j] = (int32_t)dims[2 + d];
        push.kernel[j] = (int32_t)w->dims[2 + d];
        push.stride[j] = (int32_t)stride[d];
        push.dil[j] = (int32_t)dil[d];
        push.pad[j] = (int32_t)pad_begin[d];
    }
    uint32_t spec[1] = {64}, gx, gy;
    int values[4] = {op_in_index(c, ix), op_in_index(c, iw), zps, product};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    VKI_TRY(op_dispatch(c, "conv_integer", spec, 1, &push, sizeof push, values, 4, gx, gy, 1));
    if (!qlinear) return VKI_OK;
    /* requantize.comp scales rows m by the packed "A" scales and columns n by the "B" ones:
     * rows are output channels (w's scales), columns pixels (x's one scale) */
    int scales;
    int scale_ins[3] = {4, 1, 6};
    uint32_t scale_counts[3] = {w_scales, x_scales, y_scales};
    VKI_TRY(op_pack_words(c, scale_ins, scale_counts, &scales));
    int64_t pixels = count / (dims[0] * oc);
    struct { uint32_t count, M, N, a_scales, b_scales, has_zero_point; int32_t lo, hi; } rpush = {
        (uint32_t)count, (uint32_t)oc, (uint32_t)pixels, w_scales, x_scales, 1,
        out == VKI_DTYPE_INT8 ? -128 : 0, out == VKI_DTYPE_INT8 ? 127 : 255};
    uint32_t rspec[2] = {64, op_dtype_code(op_in(c, 1)->dtype)};
    int rvalues[4] = {product, scales, op_in_index(c, 7), op_out_index(c, 0)};
    return op_dispatch(c, "requantize", rspec, 2, &rpush, sizeof rpush, rvalues, 4, gx, gy, 1);
}

const op_def op_ConvInteger = {"ConvInteger", "", "int8 uint8", "1-D to 3-D; a direct kernel; per-tensor or per-channel w_zero_point",
                               plan_conv_integer};
const op_def op_QLinearConv = {"QLinearConv", "", "int8 uint8",
                               "1-D to 3-D; a direct kernel; per-tensor or per-channel w parameters", plan_conv_integer};

#define NOTE "int8/uint8; batch dims equal or one operand 2-D; per-tensor, per-row (A) or per-column (B) parameters"
const op_def op_MatMulInteger = {"MatMulInteger", "", "int8 uint8", NOTE, plan_matmul_integer};
const op_def op_QLinearMatMul = {"QLinearMatMul", "", "int8 uint8", NOTE, plan_matmul_integer};
