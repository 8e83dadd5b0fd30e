/* AffineGrid (shaders/affine_grid.comp): theta [N, 2, 3] with size [N, C, H, W] gives the
 * sampling grid [N, H, W, 2]; theta [N, 3, 4] with size [N, C, D, H, W] gives [N, D, H, W, 3]
 * (torch's F.affine_grid, the input GridSample takes). */
#include "op.h"

static vki_status plan_affine_grid(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    VKI_TRY(op_require_float(c, 0));
    plan_value *theta = op_in(c, 0);
    char a[256];
    int64_t size[5];
    int n_size;
    if (shape_numel(op_in(c, 1)->dims, op_in(c, 1)->rank) > 5)
        return op_error(c, VKI_ERROR_SHAPE, "size must have 4 (2-D) or 5 (3-D) entries");
    VKI_TRY(op_const_ints(c, 1, size, 5, &n_size));
    if (n_size != 4 && n_size != 5) return op_error(c, VKI_ERROR_SHAPE, "size must have 4 (2-D) or 5 (3-D) entries, not %d", n_size);
    int spatial = n_size - 2;
    if (theta->rank != 3 || theta->dims[0] != size[0] || theta->dims[1] != spatial || theta->dims[2] != spatial + 1)
        return op_error(c, VKI_ERROR_SHAPE, "theta %s must be [N, %d, %d] with N = size[0] = %lld",
                        shape_str(theta->dims, theta->rank, a, sizeof a), spatial, spatial + 1, (long long)size[0]);
    int64_t dims[5] = {size[0]};
    for (int d = 0; d < spatial; d++) {
        if (size[2 + d] < 0) return op_error(c, VKI_ERROR_MODEL, "size[%d] is %lld", 2 + d, (long long)size[2 + d]);
        dims[1 + d] = size[2 + d];
    }
    dims[1 + spatial] = spatial;
    VKI_TRY(op_set_output(c, 0, theta->dtype, spatial + 2, dims));
    int64_t points = shape_numel(dims, spatial + 1);
    if (points == 0) return VKI_OK;
    if (points * spatial > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    /* lengths as D, H, W (D = 1 for 2-D) */
    struct { uint32_t count, spatial, len[3]; } push = {(uint32_t)points, (uint32_t)spatial, {1, 1, 1}};
    for (int d = 0; d < spatial; d++) push.len[3 - spatial + d] = (uint32_t)dims[1 + d];
    uint32_t spec[3] = {64, op_dtype_code(theta->dtype), ir_attr_int(c->node, "align_corners", 0) != 0}, gx, gy;
    int values[2] = {op_in_index(c, 0), op_out_index(c, 0)};
    op_grid_1d((uint64_t)points, 64, &gx, &gy);
    return op_dispatch(c, "affine_grid", spec, 3, &push, sizeof push, values, 2, gx, gy, 1);
}

const op_def op_AffineGrid = {"AffineGrid", "", OP_DTYPES_FLOAT, "size must be a plan-time constant", plan_affine_grid};
