/* RoiAlign (shaders/roi_align.comp): X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch
 * indices [R]; output [R, C, output_height, output_width]. avg and max modes, half_pixel and
 * output_half_pixel coordinates, as ONNX's reference (max takes the largest weighted corner). */
#include "op.h"

#include <string.h>

static vki_status plan_roi_align(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 3, 3));
    VKI_TRY(op_require_float(c, 0));
    VKI_TRY(op_require_float(c, 1));
    VKI_TRY(op_require_gpu_dtype(c, 2));
    plan_value *x = op_in(c, 0), *rois = op_in(c, 1), *bi = op_in(c, 2);
    char a[256], b[256];
    if (x->rank != 4) return op_error(c, VKI_ERROR_SHAPE, "X must be [N, C, H, W], not %s", shape_str(x->dims, x->rank, a, sizeof a));
    if (rois->rank != 2 || rois->dims[1] != 4 || bi->rank != 1 || bi->dims[0] != rois->dims[0])
        return op_error(c, VKI_ERROR_SHAPE, "rois must be [R, 4] and batch_indices [R], not %s and %s",
                        shape_str(rois->dims, rois->rank, a, sizeof a), shape_str(bi->dims, bi->rank, b, sizeof b));
    if (bi->dtype != VKI_DTYPE_INT64 && bi->dtype != VKI_DTYPE_INT32)
        return op_error(c, VKI_ERROR_MODEL, "batch_indices must be int64, not %s", vki_dtype_name(bi->dtype));
    if (rois->dtype != x->dtype)
        return op_error(c, VKI_ERROR_MODEL, "rois are %s; X is %s", vki_dtype_name(rois->dtype), vki_dtype_name(x->dtype));
    const char *mode = ir_attr_string(c->node, "mode", "avg");
    bool max_mode = !strcmp(mode, "max");
    if (!max_mode && strcmp(mode, "avg")) return op_error(c, VKI_ERROR_MODEL, "mode must be avg or max, not '%s'", mode);
    /* opset 10 had no attribute and behaved as output_half_pixel */
    const char *coords = ir_attr_string(c->node, "coordinate_transformation_mode", c->opset >= 16 ? "half_pixel" : "output_half_pixel");
    bool half_pixel = !strcmp(coords, "half_pixel");
    if (!half_pixel && strcmp(coords, "output_half_pixel"))
        return op_error(c, VKI_ERROR_MODEL, "coordinate_transformation_mode must be half_pixel or output_half_pixel, not '%s'", coords);
    int64_t oh = ir_attr_int(c->node, "output_height", 1), ow = ir_attr_int(c->node, "output_width", 1);
    int64_t ratio = ir_attr_int(c->node, "sampling_ratio", 0);
    if (oh <= 0 || ow <= 0 || ratio < 0 || oh > INT32_MAX || ow > INT32_MAX || ratio > INT32_MAX)
        return op_error(c, VKI_ERROR_MODEL, "output_height %lld, output_width %lld must be positive and sampling_ratio %lld "
                        "not negative", (long long)oh, (long long)ow, (long long)ratio);
    int64_t dims[4] = {rois->dims[0], x->dims[1], oh, ow};
    VKI_TRY(op_set_output(c, 0, x->dtype, 4, dims));
    int64_t count = shape_numel(dims, 4);
    if (count == 0) return VKI_OK;
    if (x->dims[2] == 0 || x->dims[3] == 0) return op_error(c, VKI_ERROR_SHAPE, "X's height and width must not be 0");
    if (count > UINT32_MAX || shape_numel(x->dims, 4) > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    struct { uint32_t count, C, H, W, out_h, out_w, N; int32_t ratio; float scale; } push = {
        (uint32_t)count, (uint32_t)x->dims[1], (uint32_t)x->dims[2], (uint32_t)x->dims[3], (uint32_t)oh, (uint32_t)ow,
        (uint32_t)x->dims[0], (int32_t)ratio, ir_attr_float(c->node, "spatial_scale", 1.0f)};
    uint32_t spec[4] = {64, op_dtype_code(x->dtype), max_mode, half_pixel}, gx, gy;
    int values[4] = {op_in_index(c, 0), op_in_index(c, 1), op_in_index(c, 2), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch(c, "roi_align", spec, 4, &push, sizeof push, values, 4, gx, gy, 1);
}

const op_def op_RoiAlign = {"RoiAlign", "", OP_DTYPES_FLOAT, "an out-of-range batch index gives zeros", plan_roi_align};
