/* NonMaxSuppression (shaders/nms_select.comp, shaders/nms_write.comp): greedy selection per
 * (batch, class) in one workgroup each; the number of rows selected_indices has is summed on
 * the GPU and read back mid-run (op_data_size: one wait), then the rows are written. The
 * thresholds and max_output_boxes_per_class may be plan-time constants or computed on the GPU;
 * a constant max_output_boxes_per_class sizes the scratch (else it holds every box). */
#include "op.h"

#include <math.h>

static vki_status plan_nms(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 5));
    VKI_TRY(op_require_float(c, 0));
    VKI_TRY(op_require_float(c, 1));
    plan_value *boxes = op_in(c, 0), *scores = op_in(c, 1);
    char a[256], b[256];
    if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 || scores->dims[0] != boxes->dims[0] ||
        scores->dims[2] != boxes->dims[1])
        return op_error(c, VKI_ERROR_SHAPE, "boxes %s and scores %s must be [B, N, 4] and [B, C, N]",
                        shape_str(boxes->dims, boxes->rank, a, sizeof a), shape_str(scores->dims, scores->rank, b, sizeof b));
    for (int i = 2; i < 5; i++)
        if (op_has_input(c, i)) {
            plan_value *v = op_in(c, i);
            if (shape_numel(v->dims, v->rank) != 1 || (i == 2 ? !dtype_is_int(v->dtype) : !dtype_is_float(v->dtype)))
                return op_error(c, VKI_ERROR_MODEL, "input %d must hold one %s", i, i == 2 ? "integer" : "float");
        }
    int64_t batch = boxes->dims[0], classes = scores->dims[1], n = boxes->dims[1], bc = batch * classes;
    int64_t center = ir_attr_int(c->node, "center_point_box", 0);
    if (center != 0 && center != 1) return op_error(c, VKI_ERROR_MODEL, "center_point_box must be 0 or 1, not %lld", (long long)center);
    /* plan-time parameters, where known; the others are read on the GPU */
    int64_t max_output = 0;
    double iou = 0, score = -INFINITY;
    bool max_gpu = false, iou_gpu = false, score_gpu = false;
    int count;
    if (op_has_input(c, 2)) {
        if (op_input_is_const(c, 2)) VKI_TRY(op_const_ints(c, 2, &max_output, 1, &count));
        else max_gpu = true;
    }
    if (op_has_input(c, 3)) {
        if (op_input_is_const(c, 3)) VKI_TRY(op_const_floats(c, 3, &iou, 1, &count));
        else iou_gpu = true;
    }
    if (op_has_input(c, 4)) {
        if (op_input_is_const(c, 4)) VKI_TRY(op_const_floats(c, 4, &score, 1, &count));
        else score_gpu = true;
    }
    int64_t slots = max_gpu ? n : max_output < 0 ? 0 : max_output < n ? max_output : n;
    int64_t zero_dims[2] = {0, 3};
    if (!max_gpu && slots == 0) return op_set_output(c, 0, VKI_DTYPE_INT64, 2, zero_dims);
    if (bc == 0 || n == 0) return op_set_output(c, 0, VKI_DTYPE_INT64, 2, zero_dims);
    if (bc > 65535 || bc * (slots + n + 1) > INT32_MAX || shape_numel(scores->dims, 3) > INT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "%lld batch x class pairs of %lld boxes: too many", (long long)bc, (long long)n);
    int params, work, size;
    int ins[3] = {max_gpu ? 2 : -1, iou_gpu ? 3 : -1, score_gpu ? 4 : -1};
    uint32_t counts[3] = {max_gpu, iou_gpu, score_gpu};
    VKI_TRY(op_pack_words(c, ins, counts, &params));
    VKI_TRY(op_temp(c, VKI_DTYPE_INT32, bc * (1 + slots + n), &work));
    VKI_TRY(op_temp(c, VKI_DTYPE_INT32, 1, &size));
    struct {
        uint32_t C, N, slots, max_output, has_max, has_iou, has_score, unused;
        float iou, score;
    } push = {(uint32_t)classes, (uint32_t)n, (uint32_t)slots, (uint32_t)slots, max_gpu, iou_gpu, score_gpu, 0, (float)iou,
              (float)score};
    uint32_t spec[1] = {center == 1};
    int values[4] = {op_in_index(c, 0), op_in_index(c, 1), params, work};
    VKI_TRY(op_dispatch(c, "nms_select", spec, 1, &push, sizeof push, values, 4, (uint32_t)bc, 1, 1));
    struct { uint32_t BC, C, slots; } wpush = {(uint32_t)bc, (uint32_t)classes, (uint32_t)slots};
    uint32_t total_spec[2] = {1, 1};
    int total_values[2] = {work, size};
    VKI_TRY(op_dispatch(c, "nms_write", total_spec, 2, &wpush, sizeof wpush, total_values, 2, 1, 1, 1));
    int64_t rows;
    bool known;
    VKI_TRY(op_data_size(c, size, bc * slots, &rows, &known));
    if (!known) return VKI_OK;
    int64_t dims[2] = {rows, 3};
    VKI_TRY(op_set_output(c, 0, VKI_DTYPE_INT64, 2, dims));
    if (rows == 0) return VKI_OK;
    uint32_t write_spec[2] = {64, 0}, gx, gy;
    int write_values[2] = {work, op_out_index(c, 0)};
    op_grid_1d((uint64_t)(bc * slots), 64, &gx, &gy);
    return op_dispatch(c, "nms_write", write_spec, 2, &wpush, sizeof wpush, write_values, 2, gx, gy, 1);
}

const op_def op_NonMaxSuppression = {"NonMaxSuppression", "", OP_DTYPES_FLOAT,
                                     "the row count is computed on the GPU and read back mid-run (one wait)", plan_nms};
