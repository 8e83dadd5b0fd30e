/* RMSNormalization (opset 23, shaders/rms_norm.glsl): y = x / sqrt(mean(x^2) + epsilon) * Scale
 * over the trailing dims from `axis`, sums in fp32 whatever stash_type says (never less precise).
 * Without a Scale (a node of one input, which the written-out norm's fusion plans where no weight
 * follows: src/plan/fuse.c), Scale is 1 and Y has X's type.
 * Scale is read as fp32 words at (element index) % period: a Scale whose shape, leading ones
 * dropped, is X's trailing dims binds as it is; a constant Scale that broadcasts inside those
 * dims is expanded on the host first. */
#include "op.h"

#include <stdlib.h>
#include <string.h>

#define RMS_GROUP 128

/* The Scale as a value read at (element index) % *period: the input itself, or a host
 * expansion of a constant one over X's trailing dims. */
static vki_status scale_operand(op_ctx *c, const plan_value *x, int *value, int64_t *period)
{
    plan_value *s = op_in(c, 1);
    int lead = 0;
    while (lead < s->rank && s->dims[lead] == 1) lead++;
    bool suffix = true;
    for (int k = 0; k < s->rank; k++) {
        int xd = x->rank - s->rank + k;
        if (xd < 0 || (s->dims[k] != 1 && s->dims[k] != x->dims[xd]))
            return op_error(c, VKI_ERROR_SHAPE, "Scale does not broadcast to X");
        if (k >= lead && s->dims[k] != x->dims[xd]) suffix = false;
    }
    *value = op_in_index(c, 1);
    *period = shape_numel(s->dims, s->rank);
    if (suffix) return VKI_OK;
    if (!s->host)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "a Scale that broadcasts inside X's trailing dims must be a constant");
    int first = x->rank - s->rank; /* X's dim that Scale's dim 0 meets */
    int64_t count = shape_numel(x->dims + first, s->rank);
    float *data = op_temp_const(c, VKI_DTYPE_FLOAT, count, value);
    if (!data) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int64_t i = 0; i < count; i++) {
        int64_t rest = i, at = 0, stride = 1;
        for (int k = s->rank - 1; k >= 0; k--) {
            int64_t coord = rest % x->dims[first + k];
            rest /= x->dims[first + k];
            if (s->dims[k] != 1) at += coord * stride;
            stride *= s->dims[k];
        }
        data[i] = (float)host_read_f64(s->dtype, s->host, (size_t)at);
    }
    *period = count;
    return VKI_OK;
}

static vki_status plan_rms_norm(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 2));
    VKI_TRY(op_require_float(c, 0));
    bool unit = !op_has_input(c, 1);
    if (!unit) VKI_TRY(op_require_float(c, 1));
    plan_value *x = op_in(c, 0), *s = unit ? x : op_in(c, 1);
    if (x->rank < 1) return op_error(c, VKI_ERROR_SHAPE, "X must have rank >= 1");
    if (!unit && s->rank > x->rank) return op_error(c, VKI_ERROR_SHAPE, "Scale has a higher rank than X");
    int axis;
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", -1), x->rank, &axis));
    /* Y has Scale's type (V in the schema) */
    VKI_TRY(op_set_output(c, 0, s->dtype, x->rank, x->dims));
    int64_t rows = shape_numel(x->dims, axis), len = shape_numel(x->dims + axis, x->rank - axis);
    if (rows * len == 0) return VKI_OK;
    if (rows * len > INT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    int scale = -1;
    int64_t period = 1;
    if (unit) {
        float *one = op_temp_const(c, VKI_DTYPE_FLOAT, 1, &scale);
        if (!one) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        *one = 1.0f;
    } else {
        VKI_TRY(scale_operand(c, x, &scale, &period));
    }
    /* as Softmax: a workgroup per row for long rows, an invocation per row on CPU devices */
    int force = c->vk->opts.norm_kernels;
    bool cpu = force == OPT_KERNELS_GPU || force == OPT_KERNELS_CPU
                   ? force == OPT_KERNELS_CPU
                   : c->vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && len <= 4096;
    bool by_workgroup = !cpu && (len >= 256 || (len >= 32 && rows < 2048));
    uint32_t spec[3] = {by_workgroup ? RMS_GROUP : 64, op_dtype_code(s->dtype), by_workgroup};
    struct { uint32_t rows, len, period; float eps; } push = {(uint32_t)rows, (uint32_t)len, (uint32_t)period,
                                                              ir_attr_float(c->node, "epsilon", 1e-5f)};
    int values[3] = {op_in_index(c, 0), scale, op_out_index(c, 0)};
    int halves[2] = {values[0], values[2]};
    gpu_storage st = op_half_storage(c, halves, 2), stores[3] = {st, GPU_W32, st};
    const char *shader = op_variant(c, "rms_norm", st);
    uint64_t row_bytes[2] = {(uint64_t)len * storage_size(st), (uint64_t)len * storage_size(st)};
    int64_t chunk = op_batch_chunk(c, rows, row_bytes, 2);
    if (chunk < rows && (chunk <= 0 || period > len))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "X is larger than the device's maxStorageBufferRange (%llu bytes) and "
                        "its rows (%llu bytes) or its Scale (%lld values over more than one row) cannot be split into "
                        "windows", (unsigned long long)op_max_binding_bytes(c), (unsigned long long)row_bytes[0],
                        (long long)period);
    for (int64_t start = 0; start < rows; start += chunk) {
        int64_t n = rows - start < chunk ? rows - start : chunk;
        push.rows = (uint32_t)n;
        op_window win[3] = {{(uint64_t)start * row_bytes[0], (uint64_t)n * row_bytes[0]}, {0, 0},
                            {(uint64_t)start * row_bytes[1], (uint64_t)n * row_bytes[1]}};
        uint32_t gx, gy;
        op_grid_1d((uint64_t)n * (by_workgroup ? RMS_GROUP : 1), by_workgroup ? RMS_GROUP : 64, &gx, &gy);
        VKI_TRY(op_dispatch_stored(c, shader, spec, 3, &push, sizeof push, values, chunk < rows ? win : NULL, stores, 3,
                                   gx, gy, 1));
    }
    return VKI_OK;
}

const op_def op_RMSNormalization = {"RMSNormalization", "", OP_DTYPES_FLOAT,
                                    "a Scale that broadcasts inside the normalized dims must be a constant; without a Scale, Scale is 1",
                                    plan_rms_norm};
