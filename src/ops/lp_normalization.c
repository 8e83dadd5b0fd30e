/* LpNormalization (shaders/lp_normalization.glsl): x / ||x||_p along one axis, p = 1 or 2,
 * one invocation per vector (accumulating in fp32). A zero vector stays zero, as ONNX's
 * reference gives (it divides by the norm where it is nonzero). */
#include "op.h"

static vki_status plan_lp_normalization(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_float(c, 0));
    plan_value *x = op_in(c, 0);
    if (x->rank < 1) return op_error(c, VKI_ERROR_SHAPE, "the input must have rank >= 1");
    int axis;
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", -1), x->rank, &axis));
    int64_t p = ir_attr_int(c->node, "p", 2);
    if (p != 1 && p != 2) return op_error(c, VKI_ERROR_MODEL, "p must be 1 or 2, not %lld", (long long)p);
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    int64_t count = shape_numel(x->dims, x->rank);
    if (count == 0) return VKI_OK;
    if (count > INT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    int64_t len = x->dims[axis], inner = shape_numel(x->dims + axis + 1, x->rank - axis - 1);
    struct { uint32_t vectors, len, inner; } push = {(uint32_t)(count / len), (uint32_t)len, (uint32_t)inner};
    uint32_t spec[3] = {64, (uint32_t)p, op_dtype_code(x->dtype)}, gx, gy;
    int values[2] = {op_in_index(c, 0), op_out_index(c, 0)};
    gpu_storage st = op_half_storage(c, values, 2), stores[2] = {st, st};
    op_grid_1d(push.vectors, 64, &gx, &gy);
    return op_dispatch_stored(c, op_variant(c, "lp_normalization", st), spec, 3, &push, sizeof push, values, NULL, stores, 2,
                              gx, gy, 1);
}

const op_def op_LpNormalization = {"LpNormalization", "", OP_DTYPES_FLOAT, "p = 1 or 2", plan_lp_normalization};
