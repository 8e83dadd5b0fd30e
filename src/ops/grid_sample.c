/* GridSample (shaders/grid_sample.comp): 4-D and 5-D inputs; linear/bilinear, nearest and
 * cubic/bicubic (4-D only, as the spec); padding zeros, border and reflection. Matches ONNX's
 * reference, which rounds nearest half to even. */
#include "op.h"

#include <string.h>

static vki_status plan_grid_sample(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    VKI_TRY(op_require_float(c, 0));
    VKI_TRY(op_require_float(c, 1));
    plan_value *x = op_in(c, 0), *grid = op_in(c, 1);
    char a[256], b[256];
    int spatial = x->rank - 2;
    if (spatial != 2 && spatial != 3)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "X must be 4-D or 5-D, not %s", shape_str(x->dims, x->rank, a, sizeof a));
    if (grid->rank != x->rank || grid->dims[0] != x->dims[0] || grid->dims[grid->rank - 1] != spatial)
        return op_error(c, VKI_ERROR_SHAPE, "the grid %s must be [N, spatial..., %d] for X %s",
                        shape_str(grid->dims, grid->rank, a, sizeof a), spatial, shape_str(x->dims, x->rank, b, sizeof b));
    const char *mode = ir_attr_string(c->node, "mode", c->opset >= 20 ? "linear" : "bilinear");
    const char *padding = ir_attr_string(c->node, "padding_mode", "zeros");
    uint32_t m = !strcmp(mode, "linear") || !strcmp(mode, "bilinear") ? 0 : !strcmp(mode, "nearest") ? 1
               : !strcmp(mode, "cubic") || !strcmp(mode, "bicubic") ? 2 : 99;
    uint32_t p = !strcmp(padding, "zeros") ? 0 : !strcmp(padding, "border") ? 1 : !strcmp(padding, "reflection") ? 2 : 99;
    if (m == 99) return op_error(c, VKI_ERROR_MODEL, "unknown mode '%s'", mode);
    if (p == 99) return op_error(c, VKI_ERROR_MODEL, "unknown padding_mode '%s'", padding);
    if (m == 2 && spatial != 2) return op_error(c, VKI_ERROR_UNSUPPORTED, "cubic mode takes 4-D inputs only (as the spec)");
    int64_t dims[5] = {x->dims[0], x->dims[1]};
    for (int d = 0; d < spatial; d++) dims[2 + d] = grid->dims[1 + d];
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, dims));
    int64_t count = shape_numel(dims, x->rank);
    if (count == 0) return VKI_OK;
    if (shape_numel(x->dims, x->rank) == 0)
        return op_error(c, VKI_ERROR_SHAPE, "X %s is empty", shape_str(x->dims, x->rank, a, sizeof a));
    if (count > UINT32_MAX || shape_numel(x->dims, x->rank) > UINT32_MAX || shape_numel(grid->dims, grid->rank) > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    struct { uint32_t count, C, spatial, in_dims[3], out_dims[3]; } push = {(uint32_t)count, (uint32_t)x->dims[1],
                                                                              (uint32_t)spatial, {1, 1, 1}, {1, 1, 1}};
    for (int d = 0; d < spatial; d++) {
        push.in_dims[3 - spatial + d] = (uint32_t)x->dims[2 + d];
        push.out_dims[3 - spatial + d] = (uint32_t)dims[2 + d];
    }
    uint32_t spec[5] = {64, op_dtype_code(x->dtype), m, p, ir_attr_int(c->node, "align_corners", 0) != 0}, gx, gy;
    int values[3] = {op_in_index(c, 0), op_in_index(c, 1), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch(c, "grid_sample", spec, 5, &push, sizeof push, values, 3, gx, gy, 1);
}

const op_def op_GridSample = {"GridSample", "", OP_DTYPES_FLOAT, "4-D and 5-D inputs; cubic on 4-D", plan_grid_sample};
