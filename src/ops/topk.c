/* TopK: the K largest (or smallest) elements along an axis and their int64 indices, ties to
 * the lower index. One workgroup per row: a bitonic sort in shared memory for rows of up to
 * 2048 elements (shaders/topk_bitonic.comp), K rounds of a parallel min beyond that
 * (shaders/topk_select.comp). Small constant inputs are folded on the host. */
#include "op.h"

#include <string.h>

#define FOLD_MAX_ELEMENTS 4096
#define BITONIC_MAX_ROW 2048 /* (key, index) pairs of 8 bytes fill 16 KiB of shared memory */

/* true if element a comes before element b in the output */
static bool host_before(double va, int64_t ia, double vb, int64_t ib, bool largest)
{
    if (va != vb) return largest ? va > vb : va < vb;
    return ia < ib;
}

static void fold_on_host(op_ctx *c, const plan_value *x, int axis, int64_t k, bool largest)
{
    int64_t n = x->dims[axis], outer = shape_numel(x->dims, axis);
    int64_t inner = shape_numel(x->dims + axis + 1, x->rank - axis - 1);
    plan_value *vals = op_out(c, 0), *idxs = op_out(c, 1);
    void *out_v = vals ? op_output_host(c, 0) : NULL;
    void *out_i = idxs ? op_output_host(c, 1) : NULL;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t in_base = o * n * inner + i, out_base = o * k * inner + i;
            double last_v = 0;
            int64_t last_i = -1;
            for (int64_t r = 0; r < k; r++) { /* selection: the best after the previous winner */
                double best_v = 0;
                int64_t best_i = -1;
                for (int64_t e = 0; e < n; e++) {
                    double v = host_read_f64(x->dtype, x->host, (size_t)(in_base + e * inner));
                    if (last_i >= 0 && !host_before(last_v, last_i, v, e, largest)) continue;
                    if (best_i < 0 || host_before(v, e, best_v, best_i, largest)) {
                        best_v = v;
                        best_i = e;
                    }
                }
                size_t at = (size_t)(out_base + r * inner), from = (size_t)(in_base + best_i * inner);
                if (out_v) {
                    if (dtype_is_float(x->dtype)) host_write_f64(x->dtype, out_v, at, host_read_f64(x->dtype, x->host, from));
                    else host_write_i64(x->dtype, out_v, at, host_read_i64(x->dtype, x->host, from));
                }
                if (out_i) host_write_i64(VKI_DTYPE_INT64, out_i, at, best_i);
                last_v = best_v;
                last_i = best_i;
            }
        }
}

static vki_status plan_topk(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, c->opset < 10 ? 1 : 2, c->opset < 10 ? 1 : 2));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0);
    if (x->dtype == VKI_DTYPE_BOOL) return op_error(c, VKI_ERROR_UNSUPPORTED, "TopK does not take bool");
    if (x->rank < 1) return op_error(c, VKI_ERROR_SHAPE, "input must have rank 1 or more");
    int axis;
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", -1), x->rank, &axis));
    bool largest = c->opset < 11 || ir_attr_int(c->node, "largest", 1) != 0;
    /* sorted=0 leaves the order to the implementation: we always sort */
    int64_t k;
    if (c->opset < 10) {
        k = ir_attr_int(c->node, "k", -1);
    } else {
        int count;
        VKI_TRY(op_const_ints(c, 1, &k, 1, &count));
        if (count != 1) return op_error(c, VKI_ERROR_MODEL, "K must hold one value");
    }
    int64_t n = x->dims[axis];
    if (k < 0 || k > n)
        return op_error(c, VKI_ERROR_SHAPE, "K = %lld is outside [0, %lld] (the axis length)", (long long)k, (long long)n);
    int64_t out_dims[VKI_MAX_RANK];
    memcpy(out_dims, x->dims, sizeof out_dims);
    out_dims[axis] = k;
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, out_dims));
    VKI_TRY(op_set_output(c, 1, VKI_DTYPE_INT64, x->rank, out_dims));
    int64_t in_count = shape_numel(x->dims, x->rank), out_count = shape_numel(out_dims, x->rank);
    if (op_input_is_const(c, 0) && in_count <= FOLD_MAX_ELEMENTS) {
        fold_on_host(c, x, axis, k, largest);
        return VKI_OK;
    }
    if (out_count == 0) return VKI_OK;
    if ((uint64_t)in_count * 4 > op_max_binding_bytes(c))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "tensors larger than one storage binding (%llu bytes) are not supported "
                        "by TopK", (unsigned long long)op_max_binding_bytes(c));
    int64_t rows = in_count / n;
    /* both outputs are bound; a missing one gets a scratch value */
    int values[3] = {op_in_index(c, 0), op_out_index(c, 0), op_out_index(c, 1)};
    for (int o = 0; o < 2; o++)
        if (values[1 + o] < 0) VKI_TRY(op_temp(c, o ? VKI_DTYPE_INT64 : x->dtype, out_count, &values[1 + o]));
    struct { uint32_t rows, n, k, inner; } push = {
        (uint32_t)rows, (uint32_t)n, (uint32_t)k, (uint32_t)shape_numel(x->dims + axis + 1, x->rank - axis - 1)};
    uint32_t gx, gy;
    op_grid_1d((uint64_t)rows, 1, &gx, &gy);
    uint32_t size = 2;
    while (size < n && size <= BITONIC_MAX_ROW) size *= 2;
    /* the sort holds a key and an index per element in shared memory: 16 KiB at 2048, all an
     * Android Baseline device has; a device with less takes the selection kernel */
    if (n <= BITONIC_MAX_ROW && (uint64_t)size * 8 <= c->vk->caps.props.limits.maxComputeSharedMemorySize) {
        uint32_t spec[4] = {128, op_dtype_code(x->dtype), largest, size};
        return op_dispatch(c, "topk_bitonic", spec, 4, &push, sizeof push, values, 3, gx, gy, 1);
    }
    uint32_t spec[3] = {128, op_dtype_code(x->dtype), largest};
    return op_dispatch(c, "topk_select", spec, 3, &push, sizeof push, values, 3, gx, gy, 1);
}

const op_def op_TopK = {"TopK", "", "float32 float16 bfloat16 int8 int16 int32 int64 uint8 uint16",
                        "K must be a plan-time constant; rows longer than 2048 take K passes", plan_topk};
