/* Col2Im (shaders/col2im.comp): the inverse of im2col. input [N, C * prod(block), L] holds
 * one column per block position; each output pixel of [N, C, image...] sums the column
 * entries that land on it (with strides, dilations and pads), up to 4 spatial dims. */
#include "op.h"

#define COL2IM_MAX_SPATIAL 4

static vki_status plan_col2im(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 3, 3));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0);
    char a[256];
    int64_t image[COL2IM_MAX_SPATIAL], block[COL2IM_MAX_SPATIAL];
    int n, n_block;
    if (shape_numel(op_in(c, 1)->dims, op_in(c, 1)->rank) > COL2IM_MAX_SPATIAL)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than %d spatial dims", COL2IM_MAX_SPATIAL);
    if (shape_numel(op_in(c, 2)->dims, op_in(c, 2)->rank) > COL2IM_MAX_SPATIAL)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than %d spatial dims", COL2IM_MAX_SPATIAL);
    VKI_TRY(op_const_ints(c, 1, image, COL2IM_MAX_SPATIAL, &n));
    VKI_TRY(op_const_ints(c, 2, block, COL2IM_MAX_SPATIAL, &n_block));
    if (n < 1 || n_block != n) return op_error(c, VKI_ERROR_MODEL, "image_shape has %d entries, block_shape %d", n, n_block);
    int64_t dil[COL2IM_MAX_SPATIAL], stride[COL2IM_MAX_SPATIAL], pads[2 * COL2IM_MAX_SPATIAL], cols[COL2IM_MAX_SPATIAL];
    VKI_TRY(op_attr_ints_n(c, "dilations", n, 1, INT64_MIN, INT64_MAX, dil));
    VKI_TRY(op_attr_ints_n(c, "strides", n, 1, INT64_MIN, INT64_MAX, stride));
    VKI_TRY(op_attr_ints_n(c, "pads", 2 * n, 0, INT64_MIN, INT64_MAX, pads));
    int64_t block_size = 1, col_count = 1;
    for (int k = 0; k < n; k++) {
        if (image[k] < 1 || block[k] < 1 || dil[k] < 1 || stride[k] < 1 || pads[k] < 0 || pads[n + k] < 0 ||
            image[k] > INT32_MAX || block[k] > INT32_MAX || dil[k] > INT32_MAX || stride[k] > INT32_MAX ||
            pads[k] > INT32_MAX || pads[n + k] > INT32_MAX)
            return op_error(c, VKI_ERROR_MODEL, "spatial dim %d: image %lld, block %lld, dilation %lld, stride %lld and pads "
                            "%lld, %lld must be positive (pads not negative)", k, (long long)image[k], (long long)block[k],
                            (long long)dil[k], (long long)stride[k], (long long)pads[k], (long long)pads[n + k]);
        int64_t span = image[k] + pads[k] + pads[n + k] - dil[k] * (block[k] - 1) - 1;
        if (span < 0) return op_error(c, VKI_ERROR_SHAPE, "spatial dim %d: the block spans more than the padded image", k);
        cols[k] = span / stride[k] + 1;
        /* both products must stay within the input's dims (which bound them without overflow) */
        if (x->rank != 3 || block[k] > x->dims[1] / block_size || cols[k] > x->dims[2] / col_count)
            return op_error(c, VKI_ERROR_SHAPE, "the input %s must be [N, C * prod(block_shape), blocks]; spatial dim %d "
                            "has a block of %lld and %lld block positions", shape_str(x->dims, x->rank, a, sizeof a), k,
                            (long long)block[k], (long long)cols[k]);
        block_size *= block[k];
        col_count *= cols[k];
    }
    if (x->rank != 3 || x->dims[1] % block_size || x->dims[2] != col_count)
        return op_error(c, VKI_ERROR_SHAPE, "the input %s must be [N, C * %lld, %lld] for these blocks",
                        shape_str(x->dims, x->rank, a, sizeof a), (long long)block_size, (long long)col_count);
    int64_t dims[2 + COL2IM_MAX_SPATIAL] = {x->dims[0], x->dims[1] / block_size};
    for (int k = 0; k < n; k++) dims[2 + k] = image[k];
    VKI_TRY(op_set_output(c, 0, x->dtype, 2 + n, dims));
    int64_t count = shape_numel(dims, 2 + n);
    if (count == 0) return VKI_OK;
    if (count > UINT32_MAX || shape_numel(x->dims, 3) > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    /* padded to 4 spatial dims with leading 1s */
    struct {
        uint32_t count, C, block_size, col_count;
        int32_t image[4], block[4], dil[4], stride[4], pad[4], cols[4];
    } push = {(uint32_t)count, (uint32_t)dims[1], (uint32_t)block_size, (uint32_t)col_count, {1, 1, 1, 1}, {1, 1, 1, 1},
              {1, 1, 1, 1}, {1, 1, 1, 1}, {0}, {1, 1, 1, 1}};
    for (int k = 0; k < n; k++) {
        int j = COL2IM_MAX_SPATIAL - n + k;
        push.image[j] = (int32_t)image[k];
        push.block[j] = (int32_t)block[k];
        push.dil[j] = (int32_t)dil[k];
        push.stride[j] = (int32_t)stride[k];
        push.pad[j] = (int32_t)pads[k];
        push.cols[j] = (int32_t)cols[k];
    }
    uint32_t spec[2] = {64, op_dtype_code(x->dtype)}, gx, gy;
    int values[2] = {op_in_index(c, 0), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch(c, "col2im", spec, 2, &push, sizeof push, values, 2, gx, gy, 1);
}

const op_def op_Col2Im = {"Col2Im", "", OP_DTYPES_NUMERIC, "image_shape and block_shape plan-time constants; up to 4 spatial dims",
                          plan_col2im};
