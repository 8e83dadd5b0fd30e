/* Pooling: MaxPool, AveragePool and LpPool over 1 to 3 spatial dims (shaders/pool.glsl, one
 * invocation per output element) and their Global forms (shaders/pool_global.glsl, one
 * workgroup per (n, c) plane reducing through shared memory). */
#include "op.h"

#include <string.h>

enum pool_kind { POOL_MAX, POOL_AVG, POOL_LP }; /* keep in step with shaders/pool*.glsl */

#define POOL_MAX_SPATIAL 3
#define POOL_GROUP 128
/* CPU devices' global pooling: an invocation per plane of up to this many elements, 8 to a
 * workgroup (one SIMD vector of llvmpipe) */
enum { POOL_CPU_MAX_LEN = 4096, POOL_CPU_LOCAL = 8 };

/* The window geometry of one pooling node, per spatial dim. */
typedef struct pool_geometry {
    int spatial;
    int64_t in[POOL_MAX_SPATIAL], out[POOL_MAX_SPATIAL], kernel[POOL_MAX_SPATIAL];
    int64_t stride[POOL_MAX_SPATIAL], dilation[POOL_MAX_SPATIAL];
    int64_t pad_begin[POOL_MAX_SPATIAL], pad_end[POOL_MAX_SPATIAL];
} pool_geometry;

/* Workgroup size for one row of `len` elements: a power of two, no more than the row needs
 * (a 7x7 plane should not keep 128 invocations waiting at each tree step). */
static uint32_t row_group_size(int64_t len)
{
    uint32_t group = 1;
    while (group < POOL_GROUP && group < len) group *= 2;
    return group;
}

/* Reads an INTS attribute of exactly `n` values, or fills `fallback` when it is absent. */
static vki_status read_ints(op_ctx *c, const char *name, int n, int64_t fallback, int64_t *out)
{
    const int64_t *v;
    int count = ir_attr_ints(c->node, name, &v);
    if (count <= 0) {
        for (int i = 0; i < n; i++) out[i] = fallback;
        return VKI_OK;
    }
    if (count != n) return op_error(c, VKI_ERROR_MODEL, "attribute '%s' has %d values; %d expected", name, count, n);
    memcpy(out, v, (size_t)n * sizeof *out);
    return VKI_OK;
}

/* The error of tensors whose (n, c) planes do not split into windows one binding can take. */
static vki_status too_big(op_ctx *c, const char *a, uint64_t a_bytes, const char *b, uint64_t b_bytes)
{
    return op_error(c, VKI_ERROR_UNSUPPORTED, "windows of whole (n, c) planes of %s (%llu bytes each) and %s (%llu bytes "
                    "each) cannot both fit the device's maxStorageBufferRange (%llu bytes) and start at multiples of %llu "
                    "bytes; pooling splits its work only along N and C", a, (unsigned long long)a_bytes, b,
                    (unsigned long long)b_bytes, (unsigned long long)op_max_binding_bytes(c),
                    (unsigned long long)op_binding_alignment(c));
}

static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

static vki_status pool_geometry_plan(op_ctx *c, const plan_value *x, pool_geometry *g)
{
    memset(g, 0, sizeof *g);
    g->spatial = x->rank - 2;
    if (x->rank < 3) return op_error(c, VKI_ERROR_SHAPE, "the input must be N x C x spatial dims (rank >= 3)");
    if (g->spatial > POOL_MAX_SPATIAL)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "%d spatial dims; at most %d are supported", g->spatial, POOL_MAX_SPATIAL);
    int n = g->spatial;
    const int64_t *k;
    if (ir_attr_ints(c->node, "kernel_shape", &k) != n)
        return op_error(c, VKI_ERROR_MODEL, "needs 'kernel_shape' with %d values (one per spatial dim)", n);
    memcpy(g->kernel, k, (size_t)n * sizeof *k);
    int64_t pads[2 * POOL_MAX_SPATIAL];
    VKI_TRY(read_ints(c, "strides", n, 1, g->stride));
    VKI_TRY(read_ints(c, "dilations", n, 1, g->dilation));
    VKI_TRY(read_ints(c, "pads", 2 * n, 0, pads));
    int64_t ceil_mode = ir_attr_int(c->node, "ceil_mode", 0);
    const char *auto_pad = ir_attr_string(c->node, "auto_pad", "NOTSET");
    for (int i = 0; i < n; i++) {
        if (g->kernel[i] < 1 || g->stride[i] < 1 || g->dilation[i] < 1)
            return op_error(c, VKI_ERROR_MODEL, "kernel_shape, strides and dilations must be positive");
        if (pads[i] < 0 || pads[i + n] < 0) return op_error(c, VKI_ERROR_UNSUPPORTED, "negative pads are not supported");
        int64_t in = x->dims[2 + i], extent = (g->kernel[i] - 1) * g->dilation[i] + 1;
        g->in[i] = in;
        if (!strcmp(auto_pad, "NOTSET")) {
            g->pad_begin[i] = pads[i];
            g->pad_end[i] = pads[i + n];
            int64_t span = in + pads[i] + pads[i + n] - extent;
            if (span < 0) return op_error(c, VKI_ERROR_SHAPE, "the window (extent %lld) is larger than the padded input", (long long)extent);
            g->out[i] = (ceil_mode ? ceil_div(span, g->stride[i]) : span / g->stride[i]) + 1;
            /* the last window must start inside the input or its begin padding (as PyTorch and
             * onnxruntime do) */
            if (ceil_mode && (g->out[i] - 1) * g->stride[i] >= in + pads[i]) g->out[i]--;
        } else if (!strcmp(auto_pad, "VALID")) {
            if (in < extent) return op_error(c, VKI_ERROR_SHAPE, "the window (extent %lld) is larger than the input", (long long)extent);
            g->out[i] = (in - extent) / g->stride[i] + 1;
        } else if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
            g->out[i] = ceil_div(in, g->stride[i]);
            int64_t total = (g->out[i] - 1) * g->stride[i] + extent - in;
            if (total < 0) total = 0;
            g->pad_begin[i] = !strcmp(auto_pad, "SAME_UPPER") ? total / 2 : total - total / 2;
            g->pad_end[i] = total - g->pad_begin[i];
        } else {
            return op_error(c, VKI_ERROR_MODEL, "unknown auto_pad '%s'", auto_pad);
        }
    }
    return VKI_OK;
}

/* LpPool's p: an int since opset 2, a float in opset 1. */
static vki_status lp_order(op_ctx *c, int64_t *p)
{
    const ir_attr *a = ir_find_attr(c->node, "p");
    *p = 2;
    if (a && a->type == ATTR_INT) *p = a->i;
    else if (a && a->type == ATTR_FLOAT) *p = a->f == (float)(int64_t)a->f ? (int64_t)a->f : 0;
    if (*p < 1 || *p > 64) return op_error(c, VKI_ERROR_UNSUPPORTED, "p must be an integer from 1 to 64");
    return VKI_OK;
}

/* The CPU-device pooling kernels run on CPU devices; VKINFER_POOL_KERNELS=gpu|cpu says otherwise
 * (CI on lavapipe runs the pooling tests both ways). */
static bool cpu_pool_kernels(const op_ctx *c) { return op_cpu_kernels(c, c->vk->opts.pool_kernels); }

/* 1-D and 2-D MaxPool and AveragePool of float32 on CPU devices (lavapipe), without MaxPool's
 * indices, windows of up to 64 positions, X in one texel buffer: shaders/pool2d_cpu.comp, PXB
 * outputs of a row per invocation (resnet18's 3x3 MaxPool over 64 x 112 x 112 took 7.3 ms on
 * the generic kernel there). *taken false: not this case. */
enum { POOL_CPU_PXB = 8, POOL_CPU_MAX_WINDOW = 64 };

static vki_status record_pool2d_cpu(op_ctx *c, enum pool_kind kind, const pool_geometry *g, bool count_include_pad,
                                    bool *taken)
{
    *taken = false;
    plan_value *x = op_in(c, 0);
    int values[2] = {op_in_index(c, 0), op_out_index(c, 0)};
    if (!cpu_pool_kernels(c) || kind == POOL_LP || g->spatial < 1 ||
        g->spatial > 2 || x->dtype != VKI_DTYPE_FLOAT || op_storage(c, values[0]) != GPU_W32 ||
        op_storage(c, values[1]) != GPU_W32)
        return VKI_OK;
    bool two = g->spatial == 2;
    int64_t ih = two ? g->in[0] : 1, iw = g->in[g->spatial - 1], oh = two ? g->out[0] : 1, ow = g->out[g->spatial - 1];
    int64_t kh = two ? g->kernel[0] : 1, kw = g->kernel[g->spatial - 1];
    int64_t planes = x->dims[0] * x->dims[1];
    uint64_t columns = (uint64_t)planes * (uint64_t)oh * (uint64_t)((ow + POOL_CPU_PXB - 1) / POOL_CPU_PXB);
    /* the input span of a row's PXB windows, held in registers */
    int64_t span = (POOL_CPU_PXB - 1) * g->stride[g->spatial - 1] + (kw - 1) * g->dilation[g->spatial - 1] + 1;
    if (kh * kw > POOL_CPU_MAX_WINDOW || span > POOL_CPU_MAX_WINDOW || columns > UINT32_MAX || x->view_offset ||
        (uint64_t)shape_numel(x->dims, x->rank) > c->vk->caps.props.limits.maxTexelBufferElements ||
        (uint64_t)shape_numel(x->dims, x->rank) * 4 > op_max_binding_bytes(c))
        return VKI_OK;
    uint32_t spec[10] = {8, kind == POOL_AVG, (uint32_t)kh, (uint32_t)kw, (uint32_t)(two ? g->stride[0] : 1),
                         (uint32_t)g->stride[g->spatial - 1], (uint32_t)(two ? g->dilation[0] : 1),
                         (uint32_t)g->dilation[g->spatial - 1], POOL_CPU_PXB, count_include_pad};
    struct {
        uint32_t columns;
        int32_t ih, iw, oh, ow, ph, pw, limit_h, limit_w;
    } push = {(uint32_t)columns, (int32_t)ih, (int32_t)iw, (int32_t)oh, (int32_t)ow,
              (int32_t)(two ? g->pad_begin[0] : 0), (int32_t)g->pad_begin[g->spatial - 1],
              (int32_t)(ih + (two ? g->pad_end[0] : 0)), (int32_t)(iw + g->pad_end[g->spatial - 1])};
    gpu_storage stores[2] = {GPU_W32, GPU_W32};
    uint32_t gx, gy;
    op_grid_1d(columns, 8, &gx, &gy);
    *taken = true;
    return op_dispatch_stored(c, "pool2d_cpu", spec, 10, &push, sizeof push, values, NULL, stores, 2, gx, gy, 1);
}

static vki_status plan_pool(op_ctx *c)
{
    const char *op = c->node->op_type;
    enum pool_kind kind = !strcmp(op, "MaxPool") ? POOL_MAX : !strcmp(op, "AveragePool") ? POOL_AVG : POOL_LP;
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0);
    bool int_input = x->dtype == VKI_DTYPE_INT8 || x->dtype == VKI_DTYPE_UINT8;
    if (!(kind == POOL_MAX && int_input)) VKI_TRY(op_require_float(c, 0));
    pool_geometry g;
    VKI_TRY(pool_geometry_plan(c, x, &g));

    int64_t count_include_pad = kind == POOL_AVG ? ir_attr_int(c->node, "count_include_pad", 0) : 0;
    int64_t p = 2;
    if (kind == POOL_LP) VKI_TRY(lp_order(c, &p));
    int64_t storage_order = kind == POOL_MAX ? ir_attr_int(c->node, "storage_order", 0) : 0;
    if (storage_order != 0 && storage_order != 1)
        return op_error(c, VKI_ERROR_MODEL, "storage_order must be 0 or 1, not %lld", (long long)storage_order);
    bool with_indices = kind == POOL_MAX && op_has_output(c, 1);
    if (op_output_count(c) > (kind == POOL_MAX ? 2 : 1)) return op_error(c, VKI_ERROR_MODEL, "too many outputs");

    int64_t out_dims[VKI_MAX_RANK];
    out_dims[0] = x->dims[0];
    out_dims[1] = x->dims[1];
    for (int i = 0; i < g.spatial; i++) out_dims[2 + i] = g.out[i];
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, out_dims));
    VKI_TRY(op_set_output(c, 1, VKI_DTYPE_INT64, x->rank, out_dims));

    int64_t count = shape_numel(out_dims, x->rank), in_count = shape_numel(x->dims, x->rank);
    if (in_count > INT32_MAX || count > INT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    struct {
        uint32_t count, in_spatial, out_spatial, index_base;
        uint32_t in_size[3], out_size[3], kernel[3], stride[3], dilation[3];
        int32_t pad_begin[3], pad_limit[3];
    } push = {(uint32_t)count, 1, 1, 0, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}};
    for (int i = 0; i < g.spatial; i++) {
        int d = POOL_MAX_SPATIAL - g.spatial + i; /* missing dims go in front, with size 1 */
        if (g.pad_begin[i] > INT32_MAX / 2 || g.pad_end[i] > INT32_MAX / 2 || g.kernel[i] * g.dilation[i] > INT32_MAX / 2)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "window or pads too large");
        push.in_size[d] = (uint32_t)g.in[i];
        push.out_size[d] = (uint32_t)g.out[i];
        push.kernel[d] = (uint32_t)g.kernel[i];
        push.stride[d] = (uint32_t)g.stride[i];
        push.dilation[d] = (uint32_t)g.dilation[i];
        push.pad_begin[d] = (int32_t)g.pad_begin[i];
        push.pad_limit[d] = (int32_t)(g.in[i] + g.pad_end[i]);
        push.in_spatial *= (uint32_t)g.in[i];
        push.out_spatial *= (uint32_t)g.out[i];
    }
    if (!with_indices && count > 0) {
        bool taken;
        VKI_TRY(record_pool2d_cpu(c, kind, &g, count_include_pad != 0, &taken));
        if (taken) return VKI_OK;
    }
    int indices;
    if (with_indices) indices = op_out_index(c, 1);
    else VKI_TRY(op_temp(c, VKI_DTYPE_INT32, 1, &indices)); /* the shader's Indices binding, unused */
    uint32_t spec[7] = {POOL_GROUP, kind, op_dtype_code(x->dtype), (uint32_t)count_include_pad, (uint32_t)p,
                        with_indices, (uint32_t)storage_order};
    int values[3] = {op_in_index(c, 0), op_out_index(c, 0), indices};
    /* float X and Y held as halves run the 16-bit variant; Indices are words in every variant */
    gpu_storage st = dtype_is_float(x->dtype) ? op_half_storage(c, values, 2) : GPU_W32;
    gpu_storage stores[3] = {st, st, GPU_W32};
    const char *shader = op_variant(c, "pool", st);
    uint32_t gx, gy;
    /* tensors larger than one binding run as several dispatches over windows of (n, c) planes */
    int64_t planes = x->dims[0] * x->dims[1];
    uint64_t plane_bytes[3] = {(uint64_t)push.in_spatial * storage_size(st), (uint64_t)push.out_spatial * storage_size(st),
                               with_indices ? (uint64_t)push.out_spatial * 4 : 0};
    int64_t chunk = planes ? op_batch_chunk(c, planes, plane_bytes, 3) : 0;
    if (chunk >= planes) {
        op_grid_1d((uint64_t)count, POOL_GROUP, &gx, &gy);
        return op_dispatch_stored(c, shader, spec, 7, &push, sizeof push, values, NULL, stores, 3, gx, gy, 1);
    }
    if (chunk <= 0)
        return too_big(c, "X", plane_bytes[0], "Y", plane_bytes[1]);
    for (int64_t start = 0; start < planes; start += chunk) {
        int64_t n = planes - start < chunk ? planes - start : chunk;
        push.count = (uint32_t)(n * push.out_spatial);
        push.index_base = (uint32_t)(start * push.in_spatial); /* indices count from the whole tensor */
        op_window win[3];
        for (int b = 0; b < 3; b++) win[b] = (op_window){(uint64_t)start * plane_bytes[b], (uint64_t)n * plane_bytes[b]};
        op_grid_1d((uint64_t)push.count, POOL_GROUP, &gx, &gy);
        VKI_TRY(op_dispatch_stored(c, shader, spec, 7, &push, sizeof push, values, win, stores, 3, gx, gy, 1));
    }
    return VKI_OK;
}

static vki_status plan_global_pool(op_ctx *c)
{
    const char *op = c->node->op_type;
    enum pool_kind kind = !strcmp(op, "GlobalMaxPool") ? POOL_MAX : !strcmp(op, "GlobalAveragePool") ? POOL_AVG : POOL_LP;
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_float(c, 0));
    plan_value *x = op_in(c, 0);
    if (x->rank < 2) return op_error(c, VKI_ERROR_SHAPE, "the input must be N x C x spatial dims (rank >= 2)");
    int64_t p = 2;
    if (kind == POOL_LP) VKI_TRY(lp_order(c, &p));
    int64_t out_dims[VKI_MAX_RANK];
    for (int i = 0; i < x->rank; i++) out_dims[i] = i < 2 ? x->dims[i] : 1;
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, out_dims));
    int64_t rows = x->dims[0] * x->dims[1], len = shape_numel(x->dims + 2, x->rank - 2);
    if (rows * len > INT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    if (len == 0) return op_error(c, VKI_ERROR_SHAPE, "global pooling over an empty plane");
    /* CPU devices: an invocation per plane (mobilenet_v2's GlobalAveragePool of 1280 planes of
     * 49 took 3.4 ms as workgroups with barrier trees on lavapipe) */
    bool lanes = cpu_pool_kernels(c) && len <= POOL_CPU_MAX_LEN;
    uint32_t spec[5] = {lanes ? POOL_CPU_LOCAL : row_group_size(len), kind, op_dtype_code(x->dtype), (uint32_t)p, lanes};
    struct { uint32_t rows, len; } push = {(uint32_t)rows, (uint32_t)len};
    int values[2] = {op_in_index(c, 0), op_out_index(c, 0)};
    gpu_storage st = op_half_storage(c, values, 2); /* halves in and out: the 16-bit variant */
    gpu_storage stores[2] = {st, st};
    const char *shader = op_variant(c, "pool_global", st);
    /* tensors larger than one binding run as several dispatches over windows of (n, c) planes */
    uint64_t row_bytes[2] = {(uint64_t)len * storage_size(st), storage_size(st)};
    int64_t chunk = rows ? op_batch_chunk(c, rows, row_bytes, 2) : 0;
    if (chunk >= rows) {
        uint32_t gx = rows > 65535 ? 65535 : (uint32_t)rows, gy = gx ? (uint32_t)((rows + gx - 1) / gx) : 0;
        if (lanes) op_grid_1d((uint64_t)rows, POOL_CPU_LOCAL, &gx, &gy);
        return op_dispatch_stored(c, shader, spec, 5, &push, sizeof push, values, NULL, stores, 2, gx, gy, 1);
    }
    if (chunk <= 0)
        return too_big(c, "X", row_bytes[0], "Y", row_bytes[1]);
    for (int64_t start = 0; start < rows; start += chunk) {
        int64_t n = rows - start < chunk ? rows - start : chunk;
        push.rows = (uint32_t)n;
        op_window win[2] = {{(uint64_t)start * row_bytes[0], (uint64_t)n * row_bytes[0]},
                            {(uint64_t)start * row_bytes[1], (uint64_t)n * row_bytes[1]}};
        uint32_t gx = n > 65535 ? 65535 : (uint32_t)n, gy = (uint32_t)((n + gx - 1) / gx);
        if (lanes) op_grid_1d((uint64_t)n, POOL_CPU_LOCAL, &gx, &gy);
        VKI_TRY(op_dispatch_stored(c, shader, spec, 5, &push, sizeof push, values, win, stores, 2, gx, gy, 1));
    }
    return VKI_OK;
}

#define FLOATS OP_DTYPES_FLOAT
const op_def op_MaxPool = {"MaxPool", "", FLOATS " int8 uint8", "", plan_pool};
const op_def op_AveragePool = {"AveragePool", "", FLOATS, "", plan_pool};
const op_def op_LpPool = {"LpPool", "", FLOATS, "", plan_pool};
const op_def op_GlobalAveragePool = {"GlobalAveragePool", "", FLOATS, "", plan_global_pool};
const op_def op_GlobalMaxPool = {"GlobalMaxPool", "", FLOATS, "", plan_global_pool};
const op_def op_GlobalLpPool = {"GlobalLpPool", "", FLOATS, "", plan_global_pool};
