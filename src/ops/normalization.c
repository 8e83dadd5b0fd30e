/* Normalization ops: BatchNormalization (a per-channel affine map, shaders/norm_affine.glsl;
 * in training mode from the batch's statistics, shaders/batch_norm_train.comp),
 * InstanceNormalization, LayerNormalization and MeanVarianceNormalization
 * (per-row statistics, shaders/norm_rows.glsl) and LRN (shaders/norm_lrn.comp). Per-channel
 * parameters travel as one array of (scale, shift) pairs, folded on the host when they are
 * constants and by shaders/norm_fold.glsl otherwise, so that no shader needs over 4 buffers. */
#include "normalization.h"
#include "norm_views.h"
#include "../plan/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum fold_mode { FOLD_SCALE, FOLD_SHIFT, FOLD_PACK, FOLD_PACK_SCALE }; /* shaders/norm_fold.glsl */
enum affine_mode { AFFINE_NONE, AFFINE_PER_ROW, AFFINE_PER_ELEMENT, AFFINE_PER_CHANNEL }; /* shaders/norm_rows.glsl */

#define NORM_GROUP 128

static int64_t numel(const plan_value *v) { return shape_numel(v->dims, v->rank); }

/* One workgroup per row; rows past 65535 spill into gl_WorkGroupID.y. */
static void row_grid(int64_t rows, uint32_t *gx, uint32_t *gy)
{
    *gx = rows > 65535 ? 65535 : (uint32_t)rows;
    *gy = *gx ? (uint32_t)((rows + *gx - 1) / *gx) : 0;
}

/* Workgroup size for one row of `len` elements: a power of two, no more than the row needs
 * (a 7x7 plane should not keep 128 invocations waiting at each tree step). */
static uint32_t row_group_size(int64_t len)
{
    uint32_t group = 1;
    while (group < NORM_GROUP && group < len) group *= 2;
    return group;
}

/* CPU Vulkan devices (lavapipe) take shaders/norm_rows_cpu.comp, one invocation per row, for
 * rows of up to NORM_CPU_MAX_LEN elements: there the GPU kernel's barrier trees cost more than
 * the row. VKINFER_NORM_KERNELS=gpu|cpu overrides (tests, A/B timing). */
enum { NORM_CPU_LOCAL = 8, NORM_CPU_MAX_LEN = 4096 };

static bool cpu_rows_kernel(const op_ctx *c, int64_t len)
{
    int force = c->vk->opts.norm_kernels;
    if (force == OPT_KERNELS_GPU) return false;
    if (force == OPT_KERNELS_CPU) return true;
    return c->vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && len <= NORM_CPU_MAX_LEN;
}

/* The grid of `rows` rows: one workgroup per row, or rows in lanes for the CPU kernel. */
static void rows_grid(bool cpu, int64_t rows, uint32_t *gx, uint32_t *gy)
{
    if (cpu) op_grid_1d((uint64_t)rows, NORM_CPU_LOCAL, gx, gy);
    else row_grid(rows, gx, gy);
}

/* The error of a tensor whose smallest unit of work is larger than one binding. */
static vki_status too_big(op_ctx *c, uint64_t unit_bytes, const char *split)
{
    return op_error(c, VKI_ERROR_UNSUPPORTED, "windows of %llu-byte units of X cannot fit the device's "
                    "maxStorageBufferRange (%llu bytes) and start at multiples of %llu bytes; this op splits its work "
                    "only %s", (unsigned long long)unit_bytes, (unsigned long long)op_max_binding_bytes(c),
                    (unsigned long long)op_binding_alignment(c), split);
}

/* A scratch array of `pairs` (scale, shift) float pairs. When `host` is true it gets
 * (zeroed) host data that the caller fills, and is uploaded with the weights. */
static vki_status pair_temp(op_ctx *c, int64_t pairs, bool host, int *index, float **data)
{
    if (!host) return op_temp(c, VKI_DTYPE_FLOAT, 2 * pairs, index);
    *data = op_temp_const(c, VKI_DTYPE_FLOAT, 2 * pairs, index);
    return *data ? VKI_OK : op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
}

static vki_status fold_dispatch(op_ctx *c, enum fold_mode mode, int a, int b, int pairs, int64_t count, int64_t na,
                                int64_t nb, float eps)
{
    uint32_t spec[2] = {NORM_GROUP, mode};
    struct { uint32_t count, na, nb; float eps; } push = {(uint32_t)count, (uint32_t)na, (uint32_t)nb, eps};
    int values[3] = {a, b, pairs};
    gpu_storage st = op_half_storage(c, values, 2), stores[3] = {st, st, GPU_W32}; /* the pairs stay fp32 */
    uint32_t gx, gy;
    op_grid_1d((uint64_t)count, NORM_GROUP, &gx, &gy);
    return op_dispatch_stored(c, op_variant(c, "norm_fold", st), spec, 2, &push, sizeof push, values, NULL, stores, 3,
                              gx, gy, 1);
}

/* The pairs of plan-time constants s and b (NULL: bias 0), as pack_scale_bias lays them out. */
static vki_status pack_host_pairs(op_ctx *c, const plan_value *s, const plan_value *b, int64_t count, int *pairs)
{
    int64_t ns = numel(s), nb = b ? numel(b) : 1;
    float *data;
    VKI_TRY(pair_temp(c, count, true, pairs, &data));
    for (int64_t k = 0; k < count; k++) {
        data[2 * k] = (float)host_read_f64(s->dtype, s->host, (size_t)(k % ns));
        data[2 * k + 1] = b ? (float)host_read_f64(b->dtype, b->host, (size_t)(k % nb)) : 0.0f;
    }
    return VKI_OK;
}

/* (scale, bias) pairs for `count` positions, position k taking scale[k % n_scale] and
 * bias[k % n_bias]; input `bias_in` may be absent (bias 0). */
static vki_status pack_scale_bias(op_ctx *c, int scale_in, int bias_in, int64_t count, int *pairs)
{
    plan_value *s = op_in(c, scale_in), *b = op_in(c, bias_in);
    int64_t ns = numel(s), nb = b ? numel(b) : 1;
    if (ns == 0 || nb == 0) return op_error(c, VKI_ERROR_SHAPE, "empty scale or bias");
    if (s->host && (!b || b->host)) return pack_host_pairs(c, s, b, count, pairs);
    VKI_TRY(pair_temp(c, count, false, pairs, NULL));
    if (b) return fold_dispatch(c, FOLD_PACK, op_in_index(c, scale_in), op_in_index(c, bias_in), *pairs, count, ns, nb, 0);
    return fold_dispatch(c, FOLD_PACK_SCALE, op_in_index(c, scale_in), op_in_index(c, scale_in), *pairs, count, ns, ns, 0);
}

/* Training mode (opset 14+): Y normalized by the batch's own mean and population variance
 * per channel (shaders/batch_norm_train.comp, then norm_affine), and the running statistics
 * outputs momentum * input + (1 - momentum) * batch. *pairs: Y's scale and shift. */
static vki_status batch_statistics(op_ctx *c, int64_t channels, int64_t inner, float eps, int *pairs)
{
    plan_value *x = op_in(c, 0);
    if (x->rank < 2 || channels > 65535) return op_error(c, VKI_ERROR_UNSUPPORTED, "training mode needs [N, C, ...] with C <= 65535");
    if (numel(x) > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    for (int o = 1; o <= 2; o++)
        if (op_has_output(c, o)) VKI_TRY(op_set_output(c, o, op_in(c, 2 + o)->dtype, 1, &channels));
    int params, ins[3] = {1, 2, 3};
    uint32_t counts[3] = {(uint32_t)channels, (uint32_t)channels, (uint32_t)channels};
    VKI_TRY(op_pack_words(c, ins, counts, &params));
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, 4 * channels, pairs));
    struct { uint32_t N, C, inner; float momentum, eps; } push = {(uint32_t)x->dims[0], (uint32_t)channels, (uint32_t)inner,
                                                                  ir_attr_float(c->node, "momentum", 0.9f), eps};
    uint32_t spec[2] = {0, 0};
    int values[4] = {op_in_index(c, 0), params, op_in_index(c, 4), *pairs};
    if (numel(x)) VKI_TRY(op_dispatch(c, "batch_norm_train", spec, 2, &push, sizeof push, values, 4, (uint32_t)channels, 1, 1));
    for (int o = 1; o <= 2 && numel(x); o++) {
        if (!op_has_output(c, o)) continue;
        uint32_t ospec[2] = {(uint32_t)o, op_dtype_code(op_out(c, o)->dtype)};
        int ovalues[4] = {*pairs, params, op_in_index(c, 4), op_out_index(c, o)};
        VKI_TRY(op_dispatch(c, "batch_norm_train", ospec, 2, &push, sizeof push, ovalues, 4, (uint32_t)(channels + 127) / 128, 1, 1));
    }
    return VKI_OK;
}

static vki_status plan_batch_norm(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 5, 5));
    for (int i = 0; i < 5; i++) VKI_TRY(op_require_float(c, i));
    plan_value *x = op_in(c, 0);
    bool training = c->opset >= 14 && ir_attr_int(c->node, "training_mode", 0);
    /* before opset 9 the extra outputs (running and saved statistics) meant training */
    for (int i = 1; i < op_output_count(c) && !training; i++)
        if (op_has_output(c, i))
            return op_error(c, VKI_ERROR_UNSUPPORTED, "outputs past Y (training statistics) need training_mode=1 (opset 14+)");
    if (x->rank < 1) return op_error(c, VKI_ERROR_SHAPE, "X must have rank >= 1");
    int64_t channels = x->rank >= 2 ? x->dims[1] : 1;
    int64_t inner = x->rank >= 2 ? shape_numel(x->dims + 2, x->rank - 2) : 1;
    /* spatial=0 (opsets 7-8): one set of parameters per activation, C x D1 x ... */
    bool per_activation = c->opset < 9 && ir_attr_int(c->node, "spatial", 1) == 0;
    int64_t period = per_activation ? channels * inner : channels;
    for (int i = 1; i < 5; i++)
        if (numel(op_in(c, i)) != period)
            return op_error(c, VKI_ERROR_SHAPE, "input %d has %lld values; %lld (one per %s) expected", i,
                            (long long)numel(op_in(c, i)), (long long)period, per_activation ? "activation" : "channel");
    float eps = ir_attr_float(c->node, "epsilon", 1e-5f);
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));

    int pairs;
    if (training) {
        VKI_TRY(batch_statistics(c, channels, inner, eps, &pairs));
    } else if (op_input_is_const(c, 1) && op_input_is_const(c, 2) && op_input_is_const(c, 3) && op_input_is_const(c, 4)) {
        float *data;
        VKI_TRY(pair_temp(c, period, true, &pairs, &data));
        plan_value *scale = op_in(c, 1), *bias = op_in(c, 2), *mean = op_in(c, 3), *var = op_in(c, 4);
        for (int64_t k = 0; k < period; k++) {
            double s = host_read_f64(scale->dtype, scale->host, (size_t)k) /
                       sqrt(host_read_f64(var->dtype, var->host, (size_t)k) + (double)eps);
            data[2 * k] = (float)s;
            data[2 * k + 1] = (float)(host_read_f64(bias->dtype, bias->host, (size_t)k) -
                                      host_read_f64(mean->dtype, mean->host, (size_t)k) * s);
        }
    } else {
        VKI_TRY(pair_temp(c, period, false, &pairs, NULL));
        VKI_TRY(fold_dispatch(c, FOLD_SCALE, op_in_index(c, 1), op_in_index(c, 4), pairs, period, period, period, eps));
        VKI_TRY(fold_dispatch(c, FOLD_SHIFT, op_in_index(c, 2), op_in_index(c, 3), pairs, period, period, period, eps));
    }
    int64_t count = numel(x);
    if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    uint32_t spec[2] = {NORM_GROUP, op_dtype_code(x->dtype)};
    struct { uint32_t count, inner, channels; } push = {(uint32_t)count, per_activation ? 1 : (uint32_t)inner, (uint32_t)period};
    int values[3] = {op_in_index(c, 0), pairs, op_out_index(c, 0)};
    int xy[2] = {values[0], values[2]};
    gpu_storage st = op_half_storage(c, xy, 2), stores[3] = {st, GPU_W32, st};
    const char *shader = op_variant(c, "norm_affine", st);
    uint64_t elem = storage_size(st);
    uint32_t gx, gy;
    /* tensors larger than one binding run as several dispatches over windows of whole images,
     * so that element 0 of each window is channel 0 */
    int64_t images = x->dims[0];
    uint64_t image_bytes = images ? (uint64_t)(count / images) * elem : 0, item_bytes[3] = {image_bytes, 0, image_bytes};
    int64_t chunk = images ? op_batch_chunk(c, images, item_bytes, 3) : 0;
    if (chunk >= images) {
        op_grid_1d((uint64_t)count, NORM_GROUP, &gx, &gy);
        return op_dispatch_stored(c, shader, spec, 2, &push, sizeof push, values, NULL, stores, 3, gx, gy, 1);
    }
    if (chunk <= 0) return too_big(c, image_bytes, "along N");
    for (int64_t start = 0; start < images; start += chunk) {
        int64_t n = images - start < chunk ? images - start : chunk;
        push.count = (uint32_t)(n * (int64_t)(image_bytes / elem));
        op_window win[3] = {{(uint64_t)start * image_bytes, (uint64_t)n * image_bytes}, {0, 0},
                            {(uint64_t)start * image_bytes, (uint64_t)n * image_bytes}};
        op_grid_1d((uint64_t)push.count, NORM_GROUP, &gx, &gy);
        VKI_TRY(op_dispatch_stored(c, shader, spec, 2, &push, sizeof push, values, win, stores, 3, gx, gy, 1));
    }
    return VKI_OK;
}

/* Where norm_rows.glsl finds a row and its elements (see the shader's push constants). */
typedef struct row_layout {
    int64_t rows, len;
    uint32_t strided; /* 0 contiguous; 1 rows and elements through the strides below (X, Y, R);
                       * 2 X's rows through the keep_* strides, Y and R contiguous */
    uint32_t keep_inner, keep_stride_outer, keep_stride_inner, red_inner, red_stride_outer, red_stride_inner;
    uint32_t channel_len; /* AFFINE_PER_CHANNEL: the elements of one channel of a row */
    int x_value;          /* X, or -1: the node's input 0 */
} row_layout;

static row_layout contiguous_rows(int64_t rows, int64_t len)
{
    return (row_layout){rows, len, 0, 1, 0, 0, 1, 0, 0, 1, -1};
}

/* Strided form 2 of `l` (rows of `len` contiguous elements) for X, a permuted view that
 * norm_rows_view_ok takes: the outer and inner leading dims of size > 1 give the row formula. */
static void permuted_rows(const plan_value *x, row_layout *l)
{
    int dims[2], n = 0;
    for (int d = 0; d < x->rank - 1; d++)
        if (x->dims[d] != 1) dims[n++] = d;
    l->strided = 2;
    l->keep_inner = n == 0 ? 1 : (uint32_t)x->dims[dims[n - 1]];
    l->keep_stride_inner = n == 0 ? 0 : (uint32_t)x->view_strides[dims[n - 1]];
    l->keep_stride_outer = n == 2 ? (uint32_t)x->view_strides[dims[0]] : 0;
}

/* An activation that norm_rows applies where it stores (op_fuse_activation); on = false: none. */
typedef struct rows_act {
    bool on;
    float lo, hi;
} rows_act;

/* The CPU kernel's form for contiguous float32 rows whose length is a multiple of 4
 * (shaders/norm_rows_cpu_vec4.comp: texel reads, uvec4 stores), rows of up to
 * NORM_CPU_CACHED_TEXELS texels held in registers (BERT's [1024,768] Add + LayerNorm on
 * lavapipe: norm_rows_cpu 8.4-9.8 ms, three passes of texel fetches 2.1-4.0, the row held
 * 1.4-1.9). Whether it applies: X, Y (and R) fit one binding and one texel buffer, and the
 * pairs fill whole texels (a texel buffer's range is floored to them). */
enum { NORM_CPU_CACHED_TEXELS = 256 };

static bool cpu_vec4_rows(op_ctx *c, const row_layout *l, enum affine_mode affine, int64_t period, int out, int residual)
{
    uint64_t count = (uint64_t)(l->rows * l->len);
    bool rows_ok = l->strided == 0 || (l->strided == 2 && l->keep_stride_outer % 4 == 0 && l->keep_stride_inner % 4 == 0);
    return op_in(c, 0)->dtype == VKI_DTYPE_FLOAT && rows_ok && l->len % 4 == 0 &&
           (affine == AFFINE_NONE || (affine == AFFINE_PER_ROW && period % 2 == 0) ||
            (affine == AFFINE_PER_ELEMENT && period % 4 == 0) ||
            (affine == AFFINE_PER_CHANNEL && l->channel_len % 4 == 0 && (period * (l->len / l->channel_len)) % 2 == 0)) &&
           op_storage(c, out) == GPU_W32 && (residual < 0 || op_storage(c, residual) == GPU_W32) &&
           count * 4 <= op_max_binding_bytes(c) && count / 4 <= c->vk->caps.props.limits.maxTexelBufferElements;
}

/* Records norm_rows over `layout`; `pairs` is the scale/shift array or -1; `stats` gets the
 * (mean, 1/stddev) pair of each row; `act` (or NULL) is applied to the results. Contiguous rows larger than one binding run as several
 * dispatches over windows of `unit` rows (InstanceNormalization: the channels of one image,
 * so that a window's row 0 takes pair 0). */
static vki_status rows_dispatch_into(op_ctx *c, const row_layout *l, enum affine_mode affine, int pairs, int64_t period,
                                     float eps, bool eps_outside_sqrt, int stats, int64_t unit, int out, int residual,
                                     const rows_act *act)
{
    int xv = l->x_value >= 0 ? l->x_value : op_in_index(c, 0);
    plan_value *x = op_value(c, xv);
    if (numel(x) > INT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    if (l->len == 0) return VKI_OK;
    int xy[2] = {xv, out};
    gpu_storage st = op_half_storage(c, xy, 2);
    /* the CPU-device row kernel reads 32-bit words; halves take norm_rows' 16-bit variants */
    bool cpu = st == GPU_W32 && cpu_rows_kernel(c, l->len);
    uint32_t spec[9] = {cpu ? NORM_CPU_LOCAL : row_group_size(l->len), op_dtype_code(x->dtype), affine, l->strided,
                        eps_outside_sqrt, residual >= 0, act && act->on, 0, 0};
    if (act && act->on) {
        memcpy(&spec[7], &act->lo, sizeof act->lo);
        memcpy(&spec[8], &act->hi, sizeof act->hi);
    }
    struct {
        uint32_t rows, len, period;
        float eps;
        uint32_t keep_inner, keep_stride_outer, keep_stride_inner, red_inner, red_stride_outer, red_stride_inner;
        uint32_t channel_len;
    } push = {(uint32_t)l->rows, (uint32_t)l->len, (uint32_t)(period ? period : 1), eps, l->keep_inner,
              l->keep_stride_outer, l->keep_stride_inner, l->red_inner, l->red_stride_outer, l->red_stride_inner,
              l->channel_len ? l->channel_len : 1};
    int values[4] = {xv, pairs >= 0 ? pairs : xv, out, residual >= 0 ? residual : stats};
    /* X, Y (and R) in their 16-bit storage; the (scale, shift) pairs and the statistics stay fp32 */
    gpu_storage stores[4] = {st, pairs >= 0 ? GPU_W32 : st, st, residual >= 0 ? st : GPU_W32};
    const char *shader = cpu ? "norm_rows_cpu" : op_variant(c, "norm_rows", st);
    uint32_t gx, gy;
    if (cpu && cpu_vec4_rows(c, l, affine, period, out, residual)) {
        uint32_t spec10[10];
        memcpy(spec10, spec, sizeof spec);
        spec10[9] = l->len / 4 <= NORM_CPU_CACHED_TEXELS ? (uint32_t)(l->len / 4) : 0;
        /* the statistics' binding takes Y where there are none (a residual sum), R's X */
        int values5[5] = {values[0], values[1], out, residual >= 0 ? out : stats, residual >= 0 ? residual : values[0]};
        rows_grid(true, l->rows, &gx, &gy);
        return op_dispatch(c, "norm_rows_cpu_vec4", spec10, 10, &push, sizeof push, values5, 5, gx, gy, 1);
    }
    int64_t units = l->rows / unit;
    uint64_t row_bytes = (uint64_t)(unit * l->len) * storage_size(st);
    uint64_t unit_bytes[4] = {row_bytes, pairs >= 0 ? 0 : row_bytes, row_bytes, (uint64_t)unit * 8};
    int64_t chunk = !l->strided && units ? op_batch_chunk(c, units, unit_bytes, 4) : units;
    if (l->strided == 2 && chunk < units) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: a permuted X in windows");
    if (chunk >= units) {
        rows_grid(cpu, l->rows, &gx, &gy);
        return op_dispatch_stored(c, shader, spec, 9, &push, sizeof push, values, NULL, stores, 4, gx, gy, 1);
    }
    if (chunk <= 0) return too_big(c, unit_bytes[0], unit > 1 ? "along N" : "along the rows it normalizes");
    if (residual >= 0) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: a residual sum in windows");
    for (int64_t start = 0; start < units; start += chunk) {
        int64_t n = units - start < chunk ? units - start : chunk;
        push.rows = (uint32_t)(n * unit);
        op_window win[4];
        for (int b = 0; b < 4; b++) win[b] = (op_window){(uint64_t)start * unit_bytes[b], (uint64_t)n * unit_bytes[b]};
        rows_grid(cpu, n * unit, &gx, &gy);
        VKI_TRY(op_dispatch_stored(c, shader, spec, 9, &push, sizeof push, values, win, stores, 4, gx, gy, 1));
    }
    return VKI_OK;
}

static vki_status rows_dispatch(op_ctx *c, const row_layout *l, enum affine_mode affine, int pairs, int64_t period,
                                float eps, bool eps_outside_sqrt, int stats, int64_t unit)
{
    return rows_dispatch_into(c, l, affine, pairs, period, eps, eps_outside_sqrt, stats, unit, op_out_index(c, 0), -1, NULL);
}

/* Group normalization of X (the node's input 0, N x C x ..., contiguous) into value `out`:
 * each (n, group) is one row, normalized and mapped by its channels' (scale, shift) pairs
 * (`pairs`, one per channel) as it is stored, then the activation `act` (or NULL); one
 * norm_rows dispatch (windows of whole images where X exceeds a binding). */
static vki_status group_rows(op_ctx *c, int64_t n, int64_t groups, int64_t channels, int pairs, float eps, int out,
                             const rows_act *act)
{
    int64_t count = numel(op_in(c, 0));
    row_layout l = contiguous_rows(n * groups, count / (n * groups));
    l.channel_len = (uint32_t)(count / (n * channels));
    int stats;
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, 2 * (l.rows ? l.rows : 1), &stats));
    return rows_dispatch_into(c, &l, AFFINE_PER_CHANNEL, pairs, groups, eps, false, stats, groups, out, -1, act);
}

/* GroupNormalization: group_rows, with an activation after it (op_fuse_activation_value) in
 * the same pass. Scale and bias have one value per channel (opset 21) or, at opset 18, one
 * per group (then they must be plan-time constants). The statistics are fp32 whatever
 * stash_type says. */
static vki_status plan_group_norm(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 3, 3));
    for (int i = 0; i < 3; i++) VKI_TRY(op_require_float(c, i));
    plan_value *x = op_in(c, 0);
    if (x->rank < 2) return op_error(c, VKI_ERROR_SHAPE, "X must be N x C x ... (rank >= 2)");
    int64_t groups = ir_attr_int(c->node, "num_groups", 0), channels = x->dims[1];
    if (groups <= 0 || channels % groups)
        return op_error(c, VKI_ERROR_MODEL, "num_groups %lld must be positive and divide the %lld channels", (long long)groups,
                        (long long)channels);
    int64_t ns = numel(op_in(c, 1)), nb = numel(op_in(c, 2));
    bool per_group = ns == groups && nb == groups && groups != channels;
    if (!per_group && (ns != channels || nb != channels))
        return op_error(c, VKI_ERROR_SHAPE, "scale and bias must have one value per channel (%lld) or per group (%lld)",
                        (long long)channels, (long long)groups);
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    int64_t count = numel(x);
    if (count == 0) return VKI_OK;
    if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    int pairs;
    if (per_group) {
        if (!op_input_is_const(c, 1) || !op_input_is_const(c, 2))
            return op_error(c, VKI_ERROR_UNSUPPORTED, "per-group scale and bias (opset 18) must be plan-time constants");
        float *data;
        VKI_TRY(pair_temp(c, channels, true, &pairs, &data));
        plan_value *sv = op_in(c, 1), *bv = op_in(c, 2);
        for (int64_t k = 0; k < channels; k++) {
            data[2 * k] = (float)host_read_f64(sv->dtype, sv->host, (size_t)(k / (channels / groups)));
            data[2 * k + 1] = (float)host_read_f64(bv->dtype, bv->host, (size_t)(k / (channels / groups)));
        }
    } else {
        VKI_TRY(pack_scale_bias(c, 1, 2, channels, &pairs));
    }
    rows_act act = {false, -INFINITY, INFINITY};
    act.on = op_fuse_activation_value(c, op_out_index(c, 0), &act.lo, &act.hi);
    return group_rows(c, x->dims[0], groups, channels, pairs, ir_attr_float(c->node, "epsilon", 1e-5f), op_out_index(c, 0),
                      &act);
}

/* The dims that Reshape node `r` will give its data, known before it is planned: its shape
 * input a constant (0 copies the data's dim, -1 is inferred), or the Shape of a value planned
 * already (PyTorch's GroupNorm reshapes back to Shape(X)). false if neither, or malformed. */
static bool reshape_target(op_ctx *c, const ir_node *r, const int64_t *in_dims, int in_rank, int64_t *dims, int *rank)
{
    int sv = r->n_inputs == 2 ? r->inputs[1] : -1;
    if (sv < 0) return false;
    plan_value *shape_v = op_value(c, sv);
    if (shape_v->host && shape_v->shaped && shape_v->rank == 1 && shape_v->dims[0] >= 1 && shape_v->dims[0] <= VKI_MAX_RANK) {
        *rank = (int)shape_v->dims[0];
        int64_t known = 1, total = shape_numel(in_dims, in_rank);
        int infer = -1;
        for (int d = 0; d < *rank; d++) {
            dims[d] = host_read_i64(shape_v->dtype, shape_v->host, (size_t)d);
            if (dims[d] == 0 && d < in_rank && !ir_attr_int(r, "allowzero", 0)) dims[d] = in_dims[d];
            if (dims[d] == -1 && infer < 0) infer = d;
            else if (dims[d] <= 0) return false;
            else known *= dims[d];
        }
        if (infer >= 0) dims[infer] = known && total % known == 0 ? total / known : -1;
        return infer < 0 || dims[infer] > 0;
    }
    int n = op_value_producer(c, sv);
    const ir_node *shape_node = n >= 0 ? op_graph_node(c, n) : NULL;
    if (!shape_node || *shape_node->domain || strcmp(shape_node->op_type, "Shape") || shape_node->n_inputs != 1 ||
        ir_find_attr(shape_node, "start") || ir_find_attr(shape_node, "end"))
        return false;
    plan_value *src = shape_node->inputs[0] >= 0 ? op_value(c, shape_node->inputs[0]) : NULL;
    if (!src || !src->shaped) return false;
    *rank = src->rank;
    memcpy(dims, src->dims, (size_t)src->rank * sizeof *dims);
    return true;
}

/* Whether constant o, broadcast against dims[0..rank), is one value per channel (axis 1) or one
 * value: every other axis it reaches is 1. */
static bool per_channel(const plan_value *o, const int64_t *dims, int rank)
{
    if (!o->host || !o->shaped || o->rank > rank) return false;
    for (int d = 0; d < o->rank; d++) {
        int axis = rank - o->rank + d;
        if (o->dims[d] != 1 && (axis != 1 || o->dims[d] != dims[1])) return false;
    }
    return true;
}

/* The other operand of binary node `node` reading v, when it is a per-channel constant of
 * dtype dt against dims (per_channel); -1 otherwise. */
static int channel_operand(op_ctx *c, int node, int v, const int64_t *dims, int rank, vki_dtype dt)
{
    const ir_node *nd = op_graph_node(c, node);
    int o = nd->n_inputs == 2 ? (nd->inputs[0] == v ? nd->inputs[1] : nd->inputs[0]) : -1;
    if (o < 0 || o == v || !per_channel(op_value(c, o), dims, rank) || op_value(c, o)->dtype != dt) return -1;
    return o;
}

/* PyTorch's GroupNorm before opset 18: Reshape(X, [N, G, -1]) -> InstanceNormalization over G
 * channels -> Reshape back to X's shape -> Mul by a per-channel weight -> Add of a per-channel
 * bias (-> an activation: Diffusion Policy's Conv1d blocks end in Mish). When this node is
 * that InstanceNormalization, with constant scale and B, and its output is read only by such a
 * Reshape and then such a Mul (and Add) of plan-time constants, it claims them (and the
 * activation) and stores their result: group_rows with both affine maps folded into one pair
 * per channel, one dispatch for four or five. *taken false: not this case. */
static vki_status torch_group_norm(op_ctx *c, bool *taken)
{
    *taken = false;
    plan_value *x = op_in(c, 0), *gs = op_in(c, 1), *gb = op_in(c, 2);
    int y = op_out_index(c, 0);
    if (x->rank != 3 || numel(x) == 0 || !gs->host || !gb->host || !dtype_is_float(x->dtype)) return VKI_OK;
    int r = op_only_reader(c, y, "Reshape");
    if (r < 0) return VKI_OK;
    const ir_node *rn = op_graph_node(c, r);
    int64_t dims[VKI_MAX_RANK];
    int rank;
    if (rn->inputs[0] != y || !reshape_target(c, rn, x->dims, x->rank, dims, &rank) || rank < 2) return VKI_OK;
    int64_t n = x->dims[0], groups = x->dims[1], channels = dims[1];
    if (dims[0] != n || !groups || channels % groups || shape_numel(dims, rank) != numel(x)) return VKI_OK;
    int w = rn->outputs[0];
    int mul = op_only_reader(c, w, "Mul");
    int mo = mul >= 0 ? channel_operand(c, mul, w, dims, rank, x->dtype) : -1;
    if (mo < 0) return VKI_OK;
    int last = op_graph_node(c, mul)->outputs[0];
    int add = op_only_reader(c, last, "Add");
    int ao = add >= 0 ? channel_operand(c, add, last, dims, rank, x->dtype) : -1;
    if (ao < 0) add = -1; /* the Add is optional */
    int pairs;
    float *data;
    VKI_TRY(pair_temp(c, channels, true, &pairs, &data));
    plan_value *mv = op_value(c, mo), *av = ao >= 0 ? op_value(c, ao) : NULL;
    int64_t per_group = channels / groups;
    for (int64_t k = 0; k < channels; k++) {
        double s = host_read_f64(gs->dtype, gs->host, (size_t)(k / per_group));
        double b = host_read_f64(gb->dtype, gb->host, (size_t)(k / per_group));
        double m = host_read_f64(mv->dtype, mv->host, numel(mv) == 1 ? 0 : (size_t)k);
        double a = av ? host_read_f64(av->dtype, av->host, numel(av) == 1 ? 0 : (size_t)k) : 0;
        data[2 * k] = (float)(s * m);
        data[2 * k + 1] = (float)(b * m + a);
    }
    op_fuse_claim(c, mul, w);
    if (add >= 0) {
        op_fuse_claim(c, add, last);
        last = op_fused_output(c, add);
    }
    rows_act act = {false, -INFINITY, INFINITY};
    act.on = op_fuse_activation_value(c, last, &act.lo, &act.hi);
    *taken = true;
    return group_rows(c, n, groups, channels, pairs, ir_attr_float(c->node, "epsilon", 1e-5f), y, &act);
}

static vki_status plan_instance_norm(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 3, 3));
    for (int i = 0; i < 3; i++) VKI_TRY(op_require_float(c, i));
    plan_value *x = op_in(c, 0);
    if (x->rank < 3) return op_error(c, VKI_ERROR_SHAPE, "X must be N x C x spatial dims (rank >= 3)");
    int64_t channels = x->dims[1];
    if (numel(op_in(c, 1)) != channels || numel(op_in(c, 2)) != channels)
        return op_error(c, VKI_ERROR_SHAPE, "scale and B must have one value per channel (%lld)", (long long)channels);
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    bool taken;
    VKI_TRY(torch_group_norm(c, &taken));
    if (taken) return VKI_OK;
    int pairs, stats;
    VKI_TRY(pack_scale_bias(c, 1, 2, channels, &pairs));
    row_layout l = contiguous_rows(x->dims[0] * channels, shape_numel(x->dims + 2, x->rank - 2));
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, 2 * (l.rows ? l.rows : 1), &stats));
    return rows_dispatch(c, &l, AFFINE_PER_ROW, pairs, channels, ir_attr_float(c->node, "epsilon", 1e-5f), false, stats,
                         channels ? channels : 1);
}

/* Scale and B broadcast over the normalized dims: supported when, leading 1s aside, their
 * shape is a suffix of those dims, so that element j of a row takes entry j % numel. */
static vki_status check_suffix(op_ctx *c, int i, const plan_value *x, int axis)
{
    plan_value *v = op_in(c, i);
    if (!v) return VKI_OK;
    int lead = 0;
    while (lead < v->rank && v->dims[lead] == 1) lead++;
    int n = v->rank - lead;
    bool ok = n <= x->rank - axis;
    for (int k = 0; ok && k < n; k++) ok = v->dims[lead + k] == x->dims[x->rank - n + k];
    if (!ok) return op_error(c, VKI_ERROR_UNSUPPORTED, "input %d must have the shape of the normalized dims "
                             "(or a trailing part of it); other broadcasts are not supported", i);
    return VKI_OK;
}

/* A LayerNormalization between a Transpose (X, a permuted view) and its inverse
 * (norm_channels_between): the rows are X's leading axes, in at most two runs of strides, the
 * elements its last axis; Y, the second Transpose's output (claimed), is X's input in order,
 * so that X and Y share the strides (norm_rows' STRIDED 1). *taken false: not this case. */
static vki_status channel_layer_norm(op_ctx *c, int64_t period, int pairs, bool *taken)
{
    *taken = false;
    plan_value *x = op_in(c, 0);
    int producer = op_value_producer(c, op_in_index(c, 0));
    if (!x->permuted || x->view_elem || x->split_inner > 0 || producer < 0 || op_has_output(c, 1) || op_has_output(c, 2))
        return VKI_OK;
    const ir_node *t1 = op_graph_node(c, producer);
    const int64_t *perm;
    if (strcmp(t1->op_type, "Transpose") || ir_attr_ints(t1, "perm", &perm) != x->rank) return VKI_OK;
    int t2 = norm_channels_between(c, op_in_index(c, 0), perm, x->rank);
    if (t2 < 0) return VKI_OK;
    int r = x->rank;
    /* the rows: runs of the leading axes, innermost first */
    int64_t size[2] = {1, 1}, stride[2] = {0, 0};
    int runs = 0;
    for (int k = r - 2; k >= 0; k--) {
        if (x->dims[k] == 1) continue;
        if (runs && x->view_strides[k] == stride[runs - 1] * size[runs - 1]) {
            size[runs - 1] *= x->dims[k];
        } else {
            if (runs == 2) return VKI_OK;
            size[runs] = x->dims[k], stride[runs++] = x->view_strides[k];
        }
    }
    int64_t len = x->dims[r - 1], rows = size[0] * size[1];
    if (numel(x) > UINT32_MAX || stride[0] > UINT32_MAX || stride[1] > UINT32_MAX || x->view_strides[r - 1] > UINT32_MAX)
        return VKI_OK;
    int64_t tdims[VKI_MAX_RANK];
    const int64_t *p2;
    ir_attr_ints(op_graph_node(c, t2), "perm", &p2);
    for (int k = 0; k < r; k++) tdims[k] = x->dims[p2[k]];
    if (plan_storage_for(c->plan, op_graph_node(c, t2)->outputs[0], x->dtype) != op_storage(c, op_in_index(c, 0)))
        return VKI_OK;
    int stats;
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, 2 * (rows ? rows : 1), &stats));
    VKI_TRY(op_claim_computed(c, t2, x->dtype, r, tdims));
    row_layout l = {rows, len, 1, (uint32_t)size[0], (uint32_t)stride[1], (uint32_t)stride[0], (uint32_t)len, 0,
                    (uint32_t)x->view_strides[r - 1], 0, -1};
    *taken = true;
    return rows_dispatch_into(c, &l, AFFINE_PER_ELEMENT, pairs, period, ir_attr_float(c->node, "epsilon", 1e-5f), false,
                              stats, 1, op_graph_node(c, t2)->outputs[0], -1, NULL);
}

static vki_status plan_layer_norm(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 3));
    for (int i = 0; i < 3; i++) VKI_TRY(op_require_float(c, i));
    plan_value *x = op_in(c, 0);
    int axis;
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", -1), x->rank, &axis));
    int64_t stash = ir_attr_int(c->node, "stash_type", 1);
    VKI_TRY(check_suffix(c, 1, x, axis));
    VKI_TRY(check_suffix(c, 2, x, axis));
    row_layout l = contiguous_rows(shape_numel(x->dims, axis), shape_numel(x->dims + axis, x->rank - axis));
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    int64_t stat_dims[VKI_MAX_RANK];
    for (int i = 0; i < x->rank; i++) stat_dims[i] = i < axis ? x->dims[i] : 1;
    /* statistics are computed in float32 whatever stash_type says (never less precise) */
    vki_dtype stat_dtype = stash == 1 ? VKI_DTYPE_FLOAT : x->dtype;
    VKI_TRY(op_set_output(c, 1, stat_dtype, x->rank, stat_dims));
    VKI_TRY(op_set_output(c, 2, stat_dtype, x->rank, stat_dims));

    plan_value *scale = op_in(c, 1), *bias = op_in(c, 2);
    int64_t period = numel(scale);
    if (bias && numel(bias) > period) period = numel(bias);
    int pairs, stats;
    VKI_TRY(pack_scale_bias(c, 1, 2, period, &pairs));
    bool taken;
    VKI_TRY(channel_layer_norm(c, period, pairs, &taken));
    if (taken) return VKI_OK;
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, 2 * (l.rows ? l.rows : 1), &stats));
    /* an activation after it (TD-MPC's and the MLP policies' LayerNorm + Mish), where the
     * statistics are not outputs */
    rows_act act = {false, -INFINITY, INFINITY};
    if (!op_has_output(c, 1) && !op_has_output(c, 2)) act.on = op_fuse_activation(c, 0, &act.lo, &act.hi);
    VKI_TRY(rows_dispatch_into(c, &l, AFFINE_PER_ELEMENT, pairs, period, ir_attr_float(c->node, "epsilon", 1e-5f), false,
                               stats, 1, op_out_index(c, 0), -1, &act));
    if (!op_has_output(c, 1) && !op_has_output(c, 2)) return VKI_OK;
    if (l.len == 0) return op_error(c, VKI_ERROR_SHAPE, "statistics of empty rows");
    /* the shader binds both outputs: an absent one gets a scratch value */
    int outs[2];
    for (int i = 0; i < 2; i++) {
        outs[i] = op_out_index(c, 1 + i);
        if (outs[i] < 0) VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, l.rows, &outs[i]));
    }
    uint32_t spec[2] = {NORM_GROUP, op_dtype_code(stat_dtype)};
    uint32_t push = (uint32_t)l.rows;
    int values[3] = {stats, outs[0], outs[1]};
    gpu_storage st = op_half_storage(c, outs, 2), stores[3] = {GPU_W32, st, st};
    const char *shader = op_variant(c, "norm_stats_split", st);
    uint32_t gx, gy;
    uint64_t row_bytes[3] = {8, storage_size(st), storage_size(st)};
    int64_t chunk = op_batch_chunk(c, l.rows, row_bytes, 3);
    if (chunk >= l.rows) {
        op_grid_1d((uint64_t)l.rows, NORM_GROUP, &gx, &gy);
        return op_dispatch_stored(c, shader, spec, 2, &push, sizeof push, values, NULL, stores, 3, gx, gy, 1);
    }
    for (int64_t start = 0; start < l.rows; start += chunk) {
        int64_t n = l.rows - start < chunk ? l.rows - start : chunk;
        push = (uint32_t)n;
        op_window win[3];
        for (int b = 0; b < 3; b++) win[b] = (op_window){(uint64_t)start * row_bytes[b], (uint64_t)n * row_bytes[b]};
        op_grid_1d((uint64_t)n, NORM_GROUP, &gx, &gy);
        VKI_TRY(op_dispatch_stored(c, shader, spec, 2, &push, sizeof push, values, win, stores, 3, gx, gy, 1));
    }
    return VKI_OK;
}

vki_status norm_layer_pairs(op_ctx *c, int scale_v, int bias_v, int64_t len, vki_dtype dtype, int *pairs)
{
    *pairs = -1;
    plan_value *scale = op_value(c, scale_v), *bias = bias_v >= 0 ? op_value(c, bias_v) : NULL;
    if (!scale->host || scale->dtype != dtype || (bias && (!bias->host || bias->dtype != dtype))) return VKI_OK;
    int64_t ns = numel(scale), nb = bias ? numel(bias) : 1;
    if ((ns != len && ns != 1) || (nb != len && nb != 1) || !len) return VKI_OK;
    return pack_host_pairs(c, scale, bias, len, pairs);
}

vki_status norm_fuse_add(op_ctx *c, bool *taken)
{
    *taken = false;
    int sum = op_out_index(c, 0), scale_v, bias_v;
    float eps;
    int64_t axis;
    int n = op_layer_norm_reader(c, sum, &scale_v, &bias_v, &eps, &axis);
    if (n < 0) return VKI_OK;
    plan_value *y = op_out(c, 0), *a = op_in(c, 0), *b = op_in(c, 1);
    if ((a->permuted && b->permuted) || a->rank != y->rank || b->rank != y->rank ||
        memcmp(a->dims, y->dims, sizeof y->dims) || memcmp(b->dims, y->dims, sizeof y->dims))
        return VKI_OK;
    if (axis < 0) axis += y->rank;
    if (axis < 0 || axis >= y->rank) return VKI_OK; /* the LayerNormalization says what is wrong */
    /* one operand may be a permuted view (PyTorch 1.13's batch-first encoder layer transposes
     * its attention back before the residual; src/ops/movement.c makes it a view only where
     * norm_rows_view_ok holds): it is X, read through its strides, rows along the last axis */
    plan_value *p = a->permuted ? a : b->permuted ? b : NULL;
    if (p && (axis != y->rank - 1 || p->split_inner || p->view_scale ||
              !norm_rows_view_ok(p->rank, p->dims, p->view_strides, p->view_elem)))
        return VKI_OK;
    int64_t len = shape_numel(y->dims + axis, y->rank - (int)axis), count = numel(y);
    if (count > INT32_MAX || (uint64_t)count * 4 > op_max_binding_bytes(c)) return VKI_OK;
    int pairs;
    VKI_TRY(norm_layer_pairs(c, scale_v, bias_v, len, y->dtype, &pairs));
    if (pairs < 0) return VKI_OK;
    op_fuse_claim_input0(c, n);
    row_layout l = contiguous_rows(count / len, len);
    int r = op_in_index(c, 1);
    if (p) { /* the sum commutes: the view is X, the other operand R */
        permuted_rows(p, &l);
        l.x_value = op_in_index(c, p == a ? 0 : 1);
        r = op_in_index(c, p == a ? 1 : 0);
    }
    *taken = true;
    rows_act act = {false, -INFINITY, INFINITY};
    act.on = op_fuse_activation_value(c, op_fused_output(c, n), &act.lo, &act.hi);
    return rows_dispatch_into(c, &l, AFFINE_PER_ELEMENT, pairs, len, eps, false, -1, 1, sum, r, &act);
}

/* MeanVarianceNormalization: the kept and the reduced dims, each merged into at most two
 * runs, give a strided row layout. */
static vki_status plan_mvn(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_float(c, 0));
    plan_value *x = op_in(c, 0);
    bool reduced[VKI_MAX_RANK] = {false};
    const int64_t *axes;
    int n_axes = ir_attr_ints(c->node, "axes", &axes);
    static const int64_t default_axes[] = {0, 2, 3};
    if (n_axes <= 0) {
        axes = default_axes;
        n_axes = 3;
    }
    for (int i = 0; i < n_axes; i++) {
        int a;
        VKI_TRY(op_axis(c, axes[i], x->rank, &a));
        reduced[a] = true;
    }
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    /* runs of adjacent dims that are all kept or all reduced (size-1 dims join any run) */
    int64_t run_size[VKI_MAX_RANK], run_stride[VKI_MAX_RANK];
    bool run_reduced[VKI_MAX_RANK];
    int runs = 0;
    int64_t stride = 1;
    for (int d = x->rank - 1; d >= 0; d--) {
        if (x->dims[d] != 1) {
            if (runs && run_reduced[runs - 1] == reduced[d]) run_size[runs - 1] *= x->dims[d];
            else {
                run_size[runs] = x->dims[d];
                run_stride[runs] = stride;
                run_reduced[runs++] = reduced[d];
            }
        }
        stride *= x->dims[d];
    }
    /* runs are innermost first; each side keeps an (outer, inner) pair */
    int64_t size[2][2] = {{1, 1}, {1, 1}}, strides[2][2] = {{0, 0}, {0, 0}};
    int used[2] = {0, 0};
    for (int r = 0; r < runs; r++) {
        int side = run_reduced[r];
        if (used[side] == 2)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "these axes interleave kept and reduced dims more than twice");
        int slot = 1 - used[side]++; /* inner first */
        size[side][slot] = run_size[r];
        strides[side][slot] = run_stride[r];
    }
    row_layout l = {size[0][0] * size[0][1], size[1][0] * size[1][1], 1, (uint32_t)size[0][1],
                    (uint32_t)strides[0][0], (uint32_t)strides[0][1], (uint32_t)size[1][1],
                    (uint32_t)strides[1][0], (uint32_t)strides[1][1], 0, -1};
    int stats;
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, 2 * l.rows, &stats));
    return rows_dispatch(c, &l, AFFINE_NONE, -1, 1, 1e-9f, true, stats, 1);
}

static vki_status plan_lrn(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_float(c, 0));
    plan_value *x = op_in(c, 0);
    if (x->rank < 3) return op_error(c, VKI_ERROR_SHAPE, "X must be N x C x spatial dims (rank >= 3)");
    const ir_attr *size_attr = ir_find_attr(c->node, "size");
    if (!size_attr || size_attr->type != ATTR_INT || size_attr->i < 1)
        return op_error(c, VKI_ERROR_MODEL, "needs a positive 'size' attribute");
    int64_t size = size_attr->i;
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    int64_t count = numel(x);
    if (count > INT32_MAX || size > INT32_MAX / 2) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    struct {
        uint32_t count, channels, inner;
        int32_t before, after;
        float alpha_over_size, beta, bias;
    } push = {(uint32_t)count, (uint32_t)x->dims[1], (uint32_t)shape_numel(x->dims + 2, x->rank - 2),
              (int32_t)((size - 1) / 2), (int32_t)(size - 1 - (size - 1) / 2),
              ir_attr_float(c->node, "alpha", 1e-4f) / (float)size, ir_attr_float(c->node, "beta", 0.75f),
              ir_attr_float(c->node, "bias", 1.0f)};
    uint32_t spec[2] = {NORM_GROUP, op_dtype_code(x->dtype)};
    int values[2] = {op_in_index(c, 0), op_out_index(c, 0)};
    uint32_t gx, gy;
    /* tensors larger than one binding run as several dispatches over windows of whole images */
    int64_t images = x->dims[0];
    uint64_t image_bytes = images ? (uint64_t)(count / images) * 4 : 0, item_bytes[2] = {image_bytes, image_bytes};
    int64_t chunk = images ? op_batch_chunk(c, images, item_bytes, 2) : 0;
    if (chunk >= images) {
        op_grid_1d((uint64_t)count, NORM_GROUP, &gx, &gy);
        return op_dispatch(c, "norm_lrn", spec, 2, &push, sizeof push, values, 2, gx, gy, 1);
    }
    if (chunk <= 0) return too_big(c, image_bytes, "along N");
    for (int64_t start = 0; start < images; start += chunk) {
        int64_t n = images - start < chunk ? images - start : chunk;
        push.count = (uint32_t)(n * (int64_t)(image_bytes / 4));
        op_window win[2] = {{(uint64_t)start * image_bytes, (uint64_t)n * image_bytes},
                            {(uint64_t)start * image_bytes, (uint64_t)n * image_bytes}};
        op_grid_1d((uint64_t)push.count, NORM_GROUP, &gx, &gy);
        VKI_TRY(op_dispatch_windowed(c, "norm_lrn", spec, 2, &push, sizeof push, values, win, 2, gx, gy, 1));
    }
    return VKI_OK;
}

#define FLOATS OP_DTYPES_FLOAT
const op_def op_BatchNormalization = {"BatchNormalization", "", FLOATS, "training_mode=1 computes the batch statistics", plan_batch_norm};
const op_def op_InstanceNormalization = {"InstanceNormalization", "", FLOATS, "", plan_instance_norm};
const op_def op_GroupNormalization = {"GroupNormalization", "", FLOATS,
                                      "per-group scale and bias (opset 18) must be plan-time constants", plan_group_norm};
const op_def op_LayerNormalization = {"LayerNormalization", "", FLOATS,
                                      "Scale/B must match the trailing normalized dims", plan_layer_norm};
const op_def op_MeanVarianceNormalization = {"MeanVarianceNormalization", "", FLOATS,
                                             "axes may split kept/reduced dims into at most two runs each",
                                             plan_mvn};
const op_def op_LRN = {"LRN", "", FLOATS, "", plan_lrn};
