/* Integer matrix products: MatMulInteger (int32 out) and QLinearMatMul (requantized to 8 bits)
 * of int8/uint8 matrices, batched when both operands have the same batch dims or one is 2-D.
 * Zero points and scales are scalars, per row of A or per column of B; they are packed into
 * one buffer each (shaders/pack_words.comp) so that no kernel binds more than four. The
 * products run in int32 on one invocation per output (shaders/matmul_integer.comp; these ops
 * serve small quantized models, not the float product kernels' speed), then
 * shaders/requantize.comp. */
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

/* Packs inputs ins[0..2] (-1: none) of `counts` words into a new scratch value. */
static vki_status pack(op_ctx *c, const int *ins, const uint32_t *counts, int *out)
{
    int dummy;
    VKI_TRY(op_temp(c, VKI_DTYPE_INT32, 1, &dummy));
    uint32_t total = counts[0] + counts[1] + counts[2];
    VKI_TRY(op_temp(c, VKI_DTYPE_INT32, total ? total : 1, out));
    if (!total) return VKI_OK;
    int values[4] = {ins[0] >= 0 ? op_in_index(c, ins[0]) : dummy, ins[1] >= 0 ? op_in_index(c, ins[1]) : dummy,
                     ins[2] >= 0 ? op_in_index(c, ins[2]) : dummy, *out};
    uint32_t spec[1] = {64}, gx, gy;
    op_grid_1d(total, 64, &gx, &gy);
    return op_dispatch(c, "pack_words", spec, 1, counts, 3 * sizeof *counts, values, 4, gx, gy, 1);
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
    VKI_TRY(pack(c, zp_ins, zp_counts, &zps));
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
    VKI_TRY(pack(c, scale_ins, scale_counts, &scales));
    struct { uint32_t count, M, N, a_scales, b_scales, has_zero_point; int32_t lo, hi; } rpush = {
        (uint32_t)count, (uint32_t)M, (uint32_t)N, a_scales, b_scales, op_has_input(c, 7),
        out == VKI_DTYPE_INT8 ? -128 : 0, out == VKI_DTYPE_INT8 ? 127 : 255};
    uint32_t rspec[2] = {64, op_dtype_code(op_in(c, 1)->dtype)};
    int rvalues[4] = {product, scales, op_has_input(c, 7) ? op_in_index(c, 7) : product, op_out_index(c, 0)};
    return op_dispatch(c, "requantize", rspec, 2, &rpush, sizeof rpush, rvalues, 4, gx, gy, 1);
}

#define NOTE "int8/uint8; batch dims equal or one operand 2-D; per-tensor, per-row (A) or per-column (B) parameters"
const op_def op_MatMulInteger = {"MatMulInteger", "", "int8 uint8", NOTE, plan_matmul_integer};
const op_def op_QLinearMatMul = {"QLinearMatMul", "", "int8 uint8", NOTE, plan_matmul_integer};
