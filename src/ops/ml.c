/* ai.onnx.ml element maps (shaders/ml.comp): Binarizer and ArrayFeatureExtractor. */
#include "op.h"

static vki_status plan_binarizer(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0);
    if (x->dtype == VKI_DTYPE_BOOL) return op_error(c, VKI_ERROR_MODEL, "X must be numeric");
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    int64_t count = shape_numel(x->dims, x->rank);
    if (count == 0) return VKI_OK;
    if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    struct { uint32_t count, cols, picks; float threshold; } push = {(uint32_t)count, 1, 1, ir_attr_float(c->node, "threshold", 0.0f)};
    uint32_t spec[3] = {64, op_dtype_code(x->dtype), 0}, gx, gy;
    int values[3] = {op_in_index(c, 0), op_in_index(c, 0), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch(c, "ml", spec, 3, &push, sizeof push, values, 3, gx, gy, 1);
}

/* X [..., N] and indices (any shape, k entries) give [..., k]; a 1-D X gives [1, k], as
 * onnxruntime and ONNX's reference. */
static vki_status plan_array_feature_extractor(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0), *idx = op_in(c, 1);
    if (idx->dtype != VKI_DTYPE_INT64 && idx->dtype != VKI_DTYPE_INT32)
        return op_error(c, VKI_ERROR_MODEL, "Y (the indices) must be int64, not %s", vki_dtype_name(idx->dtype));
    if (x->rank < 1) return op_error(c, VKI_ERROR_SHAPE, "X must have at least one dim");
    int64_t picks = shape_numel(idx->dims, idx->rank), cols = x->dims[x->rank - 1];
    int64_t dims[VKI_MAX_RANK];
    int rank = x->rank < 2 ? 2 : x->rank;
    for (int k = 0; k < rank - 1; k++) dims[k] = x->rank < 2 ? 1 : x->dims[k];
    dims[rank - 1] = picks;
    VKI_TRY(op_set_output(c, 0, x->dtype, rank, dims));
    int64_t count = shape_numel(dims, rank);
    if (count == 0) return VKI_OK;
    if (count > UINT32_MAX || shape_numel(x->dims, x->rank) > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    struct { uint32_t count, cols, picks; float threshold; } push = {(uint32_t)count, (uint32_t)cols, (uint32_t)picks, 0};
    uint32_t spec[3] = {64, op_dtype_code(x->dtype), 1}, gx, gy;
    int values[3] = {op_in_index(c, 0), op_in_index(c, 1), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch(c, "ml", spec, 3, &push, sizeof push, values, 3, gx, gy, 1);
}

const op_def op_Binarizer = {"Binarizer", "ai.onnx.ml", OP_DTYPES_NUMERIC, "", plan_binarizer};
const op_def op_ArrayFeatureExtractor = {"ArrayFeatureExtractor", "ai.onnx.ml", OP_DTYPES_ALL,
                                         "an index outside the last dim reads 0", plan_array_feature_extractor};
