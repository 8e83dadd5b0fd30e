/* NonZero and Compress: outputs whose size depends on the data. shaders/select_indices.comp
 * finds the selected positions and their count on the GPU in one dispatch; the plan reads the
 * count back there (op_data_size: one wait mid-run) and records the rest for it
 * (shaders/nonzero_coords.comp, shaders/compress_gather.comp). Selection is one workgroup, so
 * it suits masks of up to some millions of elements. With a plan-time constant input (the
 * condition of Compress, NonZero's input) nothing is read back: the positions are found on
 * the host at plan time. */
#include "op.h"

#include <string.h>

#define SELECT_MAX ((int64_t)INT32_MAX)

/* Records select_indices over the first n words of value `flags` (dtype t) and asks for the
 * count: *positions holds them; *known false: a probe plan stops here. */
static vki_status select_on_gpu(op_ctx *c, int flags, vki_dtype t, int64_t n, int *positions, int64_t *count, bool *known)
{
    int size;
    VKI_TRY(op_temp(c, VKI_DTYPE_INT32, n ? n : 1, positions));
    VKI_TRY(op_temp(c, VKI_DTYPE_INT32, 1, &size));
    uint32_t spec[1] = {op_dtype_code(t)}, push = (uint32_t)n;
    int values[3] = {flags, *positions, size};
    VKI_TRY(op_dispatch(c, "select_indices", spec, 1, &push, sizeof push, values, 3, 1, 1, 1));
    return op_data_size(c, size, n, count, known);
}

static bool host_nonzero(vki_dtype t, const void *data, size_t i)
{
    return dtype_is_float(t) ? host_read_f64(t, data, i) != 0 : host_read_i64(t, data, i) != 0;
}

static vki_status plan_nonzero(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0);
    int rank = x->rank ? x->rank : 1;
    int64_t n = shape_numel(x->dims, x->rank);
    if (n > SELECT_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    if (x->host) { /* known now: found on the host */
        int64_t count = 0;
        for (int64_t i = 0; i < n; i++) count += host_nonzero(x->dtype, x->host, (size_t)i);
        int64_t dims[2] = {rank, count};
        VKI_TRY(op_set_output(c, 0, VKI_DTYPE_INT64, 2, dims));
        int64_t *out = op_output_host(c, 0), j = 0;
        for (int64_t i = 0; i < n; i++) {
            if (!host_nonzero(x->dtype, x->host, (size_t)i)) continue;
            for (int r = 0; r < rank; r++) {
                int64_t d = x->rank ? x->dims[r] : 1, stride = 1;
                for (int k = r + 1; k < x->rank; k++) stride *= x->dims[k];
                out[r * count + j] = (i / stride) % d;
            }
            j++;
        }
        return VKI_OK;
    }
    int positions;
    int64_t count;
    bool known;
    VKI_TRY(select_on_gpu(c, op_in_index(c, 0), x->dtype, n, &positions, &count, &known));
    if (!known) return VKI_OK;
    int64_t dims[2] = {rank, count};
    VKI_TRY(op_set_output(c, 0, VKI_DTYPE_INT64, 2, dims));
    if (count == 0) return VKI_OK;
    struct { uint32_t total, count, rank, unused, dims[8]; } push = {(uint32_t)(rank * count), (uint32_t)count, (uint32_t)rank, 0, {1}};
    for (int k = 0; k < x->rank; k++) push.dims[k] = (uint32_t)x->dims[k];
    uint32_t spec[1] = {64}, gx, gy;
    int values[2] = {positions, op_out_index(c, 0)};
    op_grid_1d((uint64_t)(rank * count), 64, &gx, &gy);
    return op_dispatch(c, "nonzero_coords", spec, 1, &push, sizeof push, values, 2, gx, gy, 1);
}

static vki_status plan_compress(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    VKI_TRY(op_require_gpu_dtype(c, 1));
    plan_value *x = op_in(c, 0), *cond = op_in(c, 1);
    char a[256];
    if (cond->rank != 1) return op_error(c, VKI_ERROR_SHAPE, "condition %s must be 1-D", shape_str(cond->dims, cond->rank, a, sizeof a));
    int64_t outer = 1, len = shape_numel(x->dims, x->rank), inner = 1;
    int64_t dims[VKI_MAX_RANK] = {0};
    int rank = 1, ax = 0;
    if (ir_attr_int(c->node, "axis", INT64_MIN) != INT64_MIN) {
        VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", 0), x->rank, &ax));
        outer = shape_numel(x->dims, ax), len = x->dims[ax], inner = shape_numel(x->dims + ax + 1, x->rank - ax - 1);
        rank = x->rank;
        memcpy(dims, x->dims, sizeof dims);
    }
    if (cond->dims[0] > len)
        return op_error(c, VKI_ERROR_SHAPE, "condition has %lld entries for %lld along the axis", (long long)cond->dims[0],
                        (long long)len);
    if (shape_numel(x->dims, x->rank) > SELECT_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    int64_t n = cond->dims[0], count = 0;
    int positions;
    if (cond->host) { /* known now: the positions are a constant */
        for (int64_t i = 0; i < n; i++) count += host_nonzero(cond->dtype, cond->host, (size_t)i);
        int32_t *at = op_temp_const(c, VKI_DTYPE_INT32, count ? count : 1, &positions);
        if (!at) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        for (int64_t i = 0, j = 0; i < n; i++)
            if (host_nonzero(cond->dtype, cond->host, (size_t)i)) at[j++] = (int32_t)i;
    } else {
        bool known;
        VKI_TRY(select_on_gpu(c, op_in_index(c, 1), cond->dtype, n, &positions, &count, &known));
        if (!known) return VKI_OK;
    }
    dims[ax] = count;
    VKI_TRY(op_set_output(c, 0, x->dtype, rank, dims));
    int64_t total = outer * count * inner;
    if (total == 0) return VKI_OK;
    struct { uint32_t total, count, len, inner; } push = {(uint32_t)total, (uint32_t)count, (uint32_t)len, (uint32_t)inner};
    uint32_t spec[1] = {64}, gx, gy;
    int values[3] = {op_in_index(c, 0), positions, op_out_index(c, 0)};
    op_grid_1d((uint64_t)total, 64, &gx, &gy);
    return op_dispatch(c, "compress_gather", spec, 1, &push, sizeof push, values, 3, gx, gy, 1);
}

#define SELECT_NOTE "the size is computed on the GPU and read back mid-run (one wait); selection in one workgroup"
const op_def op_NonZero = {"NonZero", "", OP_DTYPES_ALL, SELECT_NOTE, plan_nonzero};
const op_def op_Compress = {"Compress", "", OP_DTYPES_ALL, SELECT_NOTE, plan_compress};
