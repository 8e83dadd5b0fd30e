/* Ops that normalize or scan along one axis: Softmax, LogSoftmax, Hardmax (shaders/softmax.glsl)
 * and CumSum, CumProd (shaders/cumsum.comp). */
#include "op.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum softmax_kind { SOFTMAX, LOG_SOFTMAX, HARDMAX }; /* keep in step with shaders/softmax.glsl */

/* Invocations to launch for `rows` rows: 128 per row (a workgroup each), 128 per
 * rows_per_group rows (a subgroup each; 0: not that mode), or one per row. */
static uint64_t softmax_invocations(uint64_t rows, bool by_workgroup, uint32_t rows_per_group)
{
    if (by_workgroup) return rows * 128;
    if (rows_per_group) return (rows + rows_per_group - 1) / rows_per_group * 128;
    return rows;
}

/* Softmax and LogSoftmax of float32 rows on CPU devices: shaders/softmax_cpu.comp (an
 * invocation per row reading texel buffers; the comment there says why), where X fits one
 * texel buffer and one binding. Contiguous rows of up to SOFTMAX_CPU_CACHED_TEXELS texels are
 * held in registers, fetched once: on lavapipe [2048,1024] rows took 2.7-3.4 ms against
 * 7.1-9.4 in three passes of fetches, [4096,512] 2.6-2.9 against 3.8-5.4, BERT's [12288,128]
 * 2.6-2.8 against 3.6-4.8 (each exp computed once there too). *taken false: not this case (the
 * caller records softmax.glsl). */
enum { SOFTMAX_CPU_LOCAL = 8, SOFTMAX_CPU_CACHED_TEXELS = 256 };

/* the Push block of shaders/softmax.glsl and shaders/softmax_cpu.comp alike */
typedef struct softmax_push {
    uint32_t rows, n, inner;
} softmax_push;

static vki_status plan_softmax_cpu(op_ctx *c, enum softmax_kind kind, int64_t rows, int64_t n, int64_t inner,
                                   bool *taken)
{
    *taken = false;
    plan_value *x = op_in(c, 0);
    int values[3] = {op_in_index(c, 0), op_in_index(c, 0), op_out_index(c, 0)};
    uint64_t count = (uint64_t)(rows * n);
    if (x->dtype != VKI_DTYPE_FLOAT || op_storage(c, values[0]) != GPU_W32 || op_storage(c, values[2]) != GPU_W32 ||
        count == 0 || count * 4 > op_max_binding_bytes(c) || count > c->vk->caps.props.limits.maxTexelBufferElements)
        return VKI_OK;
    bool vec4 = inner == 1 && n % 4 == 0;
    bool cache = vec4 && n / 4 <= SOFTMAX_CPU_CACHED_TEXELS;
    uint32_t spec[4] = {SOFTMAX_CPU_LOCAL, kind, vec4, cache ? (uint32_t)(n / 4) : 0};
    softmax_push push = {(uint32_t)rows, (uint32_t)n, (uint32_t)inner};
    uint32_t gx, gy;
    op_grid_1d((uint64_t)rows, SOFTMAX_CPU_LOCAL, &gx, &gy);
    VKI_TRY(op_dispatch(c, "softmax_cpu", spec, 4, &push, sizeof push, values, 3, gx, gy, 1));
    *taken = true;
    return VKI_OK;
}

/* Before opset 13 the input is coerced to 2-D at `axis` (default 1) and each row is the
 * flattened trailing dims; from 13 a row runs along the single `axis` (default -1). */
static vki_status plan_softmax(op_ctx *c)
{
    enum softmax_kind kind = !strcmp(c->node->op_type, "Softmax") ? SOFTMAX
                           : !strcmp(c->node->op_type, "LogSoftmax") ? LOG_SOFTMAX : HARDMAX;
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    VKI_TRY(op_require_float(c, 0));
    plan_value *x = op_in(c, 0);
    bool coerce_2d = c->opset < 13;
    int axis;
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", coerce_2d ? 1 : -1), x->rank, &axis));
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    int64_t outer = shape_numel(x->dims, axis), n = 1, inner = 1;
    for (int d = axis; d < x->rank; d++) {
        if (d == axis || coerce_2d) n *= x->dims[d];
        else inner *= x->dims[d];
    }
    int64_t rows = outer * inner;
    if (rows * n > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    /* a workgroup per row when rows are long; else an invocation per row. On CPU devices
     * (lavapipe) the workgroup mode's barrier trees cost more than rows of up to 4096 (as for
     * norm_rows_cpu.comp; VKINFER_NORM_KERNELS=gpu|cpu overrides) */
    int force = c->vk->opts.norm_kernels;
    bool cpu = force == OPT_KERNELS_GPU || force == OPT_KERNELS_CPU
                   ? force == OPT_KERNELS_CPU
                   : c->vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && n <= 4096;
    bool by_workgroup = !cpu && (n >= 256 || (n >= 32 && rows < 2048));
    /* contiguous rows of up to 1024 on a GPU with subgroup arithmetic: a subgroup per row,
     * coalesced (measured on the H200, BERT's [8,12,128,128] scores: an invocation per row,
     * reading 128 elements apart from its neighbours, took 53 us). Rows spaced `inner` apart
     * stay an invocation per row, which reads coalesced across neighbouring rows. */
    bool by_subgroup = !cpu && kind != HARDMAX && c->vk->caps.subgroup_arithmetic && inner == 1 && n >= 2 &&
                       n <= 1024 && 128 % c->vk->caps.subgroup_size == 0;
    if (by_subgroup) by_workgroup = false;
    if (cpu && kind != HARDMAX) {
        bool taken;
        VKI_TRY(plan_softmax_cpu(c, kind, rows, n, inner, &taken));
        if (taken) return VKI_OK;
    }
    uint32_t spec[4] = {128, kind, op_dtype_code(x->dtype), by_workgroup};
    softmax_push push = {(uint32_t)rows, (uint32_t)n, (uint32_t)inner};
    int values[2] = {op_in_index(c, 0), op_out_index(c, 0)};
    /* halves in, halves out: the 16-bit variant (statistics stay fp32 in the shader) */
    gpu_storage st = op_half_storage(c, values, 2), stores[2] = {st, st};
    const char *shader = op_variant(c, by_subgroup ? "softmax_sg" : "softmax", st);
    uint32_t rows_per_group = by_subgroup ? 128 / c->vk->caps.subgroup_size : 0;
    uint64_t elem = storage_size(st);
    uint32_t gx, gy;
    /* tensors larger than one binding run as several dispatches over windows of the dims
     * before `axis` (a window holds whole rows) */
    uint64_t outer_bytes[2] = {(uint64_t)(n * inner) * elem, (uint64_t)(n * inner) * elem};
    int64_t chunk = outer > 0 && n * inner > 0 ? op_batch_chunk(c, outer, outer_bytes, 2) : outer;
    if (outer <= 1 && (uint64_t)(n * inner) * elem > op_max_binding_bytes(c))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "the input is larger than the device's maxStorageBufferRange (%llu bytes) "
                        "and axis %d leaves no outer dims to split the work along", (unsigned long long)op_max_binding_bytes(c),
                        axis);
    if (chunk >= outer) {
        op_grid_1d(softmax_invocations((uint64_t)rows, by_workgroup, rows_per_group), 128, &gx, &gy);
        return op_dispatch_stored(c, shader, spec, 4, &push, sizeof push, values, NULL, stores, 2, gx, gy, 1);
    }
    if (chunk <= 0)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "windows of the dims from axis %d on (%llu bytes each) cannot fit the "
                        "device's maxStorageBufferRange (%llu bytes) and start at multiples of %llu bytes; %s splits its "
                        "work only along the dims before the axis", axis, (unsigned long long)outer_bytes[0],
                        (unsigned long long)op_max_binding_bytes(c), (unsigned long long)op_binding_alignment(c),
                        c->node->op_type);
    for (int64_t start = 0; start < outer; start += chunk) {
        int64_t k = outer - start < chunk ? outer - start : chunk;
        push.rows = (uint32_t)(k * inner);
        op_window win[2] = {{(uint64_t)start * outer_bytes[0], (uint64_t)k * outer_bytes[0]},
                            {(uint64_t)start * outer_bytes[1], (uint64_t)k * outer_bytes[1]}};
        op_grid_1d(softmax_invocations(push.rows, by_workgroup, rows_per_group), 128, &gx, &gy);
        VKI_TRY(op_dispatch_stored(c, shader, spec, 4, &push, sizeof push, values, win, stores, 2, gx, gy, 1));
    }
    return VKI_OK;
}

#define CUMSUM_AXIS_FROM_INPUT (-1000) /* keep in step with shaders/cumsum.comp */

static void fold_cumsum(op_ctx *c, int axis, bool exclusive, bool reverse, bool prod)
{
    plan_value *x = op_in(c, 0);
    void *out = op_output_host(c, 0);
    int64_t len = x->rank ? x->dims[axis] : 1, inner = 1, count = shape_numel(x->dims, x->rank);
    for (int d = axis + 1; d < x->rank; d++) inner *= x->dims[d];
    bool is_float = dtype_is_float(x->dtype);
    for (int64_t i = 0; i < count; i++) {
        if ((i / inner) % len) continue;
        double fsum = prod ? 1 : 0;
        uint64_t isum = prod ? 1 : 0; /* wraps like the dtype */
        for (int64_t k = 0; k < len; k++) {
            size_t off = (size_t)(i + (reverse ? len - 1 - k : k) * inner);
            double fv = is_float ? host_read_f64(x->dtype, x->host, off) : 0;
            uint64_t iv = is_float ? 0 : (uint64_t)host_read_i64(x->dtype, x->host, off);
            if (!exclusive) fsum = prod ? fsum * fv : fsum + fv, isum = prod ? isum * iv : isum + iv;
            if (is_float) host_write_f64(x->dtype, out, off, fsum);
            else host_write_i64(x->dtype, out, off, (int64_t)isum);
            if (exclusive) fsum = prod ? fsum * fv : fsum + fv, isum = prod ? isum * iv : isum + iv;
        }
    }
}

/* CumSum and CumProd */
static vki_status plan_cumsum(op_ctx *c)
{
    const char *op = c->node->op_type;
    bool prod = !strcmp(op, "CumProd");
    VKI_TRY(op_require_inputs(c, 2, 2));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0), *a = op_in(c, 1);
    if (x->dtype == VKI_DTYPE_BOOL || x->dtype == VKI_DTYPE_INT8 || x->dtype == VKI_DTYPE_UINT8 ||
        x->dtype == VKI_DTYPE_INT16 || x->dtype == VKI_DTYPE_UINT16)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "%s takes float32, float16, bfloat16, int32 and int64, not %s",
                        op, vki_dtype_name(x->dtype));
    if ((a->dtype != VKI_DTYPE_INT32 && a->dtype != VKI_DTYPE_INT64) || shape_numel(a->dims, a->rank) != 1)
        return op_error(c, VKI_ERROR_MODEL, "the axis input must be one int32 or int64 value");
    bool exclusive = ir_attr_int(c->node, "exclusive", 0) != 0, reverse = ir_attr_int(c->node, "reverse", 0) != 0;
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    int axis = CUMSUM_AXIS_FROM_INPUT;
    if (op_input_is_const(c, 1)) {
        int64_t v;
        int n;
        VKI_TRY(op_const_ints(c, 1, &v, 1, &n));
        VKI_TRY(op_axis(c, v, x->rank, &axis));
    }
    int64_t count = shape_numel(x->dims, x->rank);
    if (op_all_inputs_const(c) && count <= 4096) {
        fold_cumsum(c, axis, exclusive, reverse, prod);
        return VKI_OK;
    }
    if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    struct { uint32_t count, rank, exclusive, reverse; int32_t axis; uint32_t prod, dims[VKI_MAX_RANK]; } push = {
        (uint32_t)count, (uint32_t)x->rank, exclusive, reverse, axis, prod, {0}};
    for (int d = 0; d < x->rank; d++) push.dims[d] = (uint32_t)x->dims[d];
    uint32_t spec[2] = {128, op_dtype_code(x->dtype)};
    int values[3] = {op_in_index(c, 0), op_in_index(c, 1), op_out_index(c, 0)};
    uint32_t gx, gy;
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    return op_dispatch(c, "cumsum", spec, 2, &push, sizeof push, values, 3, gx, gy, 1);
}

#define FLOATS OP_DTYPES_FLOAT
const op_def op_Softmax = {"Softmax", "", FLOATS, "", plan_softmax};
const op_def op_LogSoftmax = {"LogSoftmax", "", FLOATS, "", plan_softmax};
const op_def op_Hardmax = {"Hardmax", "", FLOATS, "", plan_softmax};
const op_def op_CumSum = {"CumSum", "", FLOATS " int32 int64",
                          "a runtime axis input that is out of range leaves the output unwritten", plan_cumsum};
const op_def op_CumProd = {"CumProd", "", FLOATS " int32 int64",
                           "a runtime axis input that is out of range leaves the output unwritten", plan_cumsum};
