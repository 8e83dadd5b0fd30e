/* Reductions over a set of axes (ReduceSum .. ReduceSumSquare) and ArgMax/ArgMin: one shader
 * (shaders/reduce.glsl) that reads the input through merged kept/reduced dim groups, so any
 * set of axes is one dispatch. Constant inputs with small outputs are folded on the host. */
#include "op.h"

#include <math.h>
#include <string.h>

enum reduce_kind { /* keep in step with shaders/reduce.glsl */
    K_SUM, K_MEAN, K_MAX, K_MIN, K_PROD, K_L1, K_L2, K_LOGSUM, K_LOGSUMEXP, K_SUMSQUARE, K_ARGMAX, K_ARGMIN,
};

static const struct { const char *name; enum reduce_kind kind; } reduce_ops[] = {
    {"ReduceSum", K_SUM}, {"ReduceMean", K_MEAN}, {"ReduceMax", K_MAX}, {"ReduceMin", K_MIN},
    {"ReduceProd", K_PROD}, {"ReduceL1", K_L1}, {"ReduceL2", K_L2}, {"ReduceLogSum", K_LOGSUM},
    {"ReduceLogSumExp", K_LOGSUMEXP}, {"ReduceSumSquare", K_SUMSQUARE}, {"ArgMax", K_ARGMAX}, {"ArgMin", K_ARGMIN},
};

/* Mirrors the shader's push constants: the input seen as kept and reduced dim groups. */
typedef struct reduce_layout {
    uint32_t out_count, red_count, n_kept, n_red;
    uint32_t kept_dim[4], kept_stride[4], red_dim[4], red_stride[4];
} reduce_layout;

/* Drops size-1 dims and merges neighbours of the same class (kept or reduced); with rank <= 8
 * the classes alternate at worst, so 4 groups of each suffice. */
static void build_layout(const plan_value *x, const bool *reduced, reduce_layout *l)
{
    memset(l, 0, sizeof *l);
    l->out_count = l->red_count = 1;
    int64_t stride[VKI_MAX_RANK];
    int64_t s = 1;
    for (int d = x->rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= x->dims[d];
    }
    int last_class = -1;
    for (int d = 0; d < x->rank; d++) {
        if (reduced[d]) l->red_count *= (uint32_t)x->dims[d];
        else l->out_count *= (uint32_t)x->dims[d];
        if (x->dims[d] == 1) continue;
        uint32_t *dim = reduced[d] ? l->red_dim : l->kept_dim, *str = reduced[d] ? l->red_stride : l->kept_stride;
        uint32_t *n = reduced[d] ? &l->n_red : &l->n_kept;
        if (last_class == (int)reduced[d]) {
            dim[*n - 1] *= (uint32_t)x->dims[d];
        } else {
            dim[*n] = (uint32_t)x->dims[d];
            (*n)++;
        }
        str[*n - 1] = (uint32_t)stride[d];
        last_class = reduced[d];
    }
}

static uint32_t group_offset(uint32_t i, uint32_t n, const uint32_t *dim, const uint32_t *stride)
{
    uint32_t off = 0;
    for (int g = (int)n - 1; g >= 0; g--) {
        off += (i % dim[g]) * stride[g];
        i /= dim[g];
    }
    return off;
}

/* Host evaluation for folding; mirrors the shader (in double / int64). */
/* Max and Min of an empty set: the dtype's lowest and highest values (false, true for bool) */
static int64_t dtype_int_min(vki_dtype t)
{
    switch (t) {
    case VKI_DTYPE_BOOL: case VKI_DTYPE_UINT8: case VKI_DTYPE_UINT16: return 0;
    case VKI_DTYPE_INT8: return INT8_MIN;
    case VKI_DTYPE_INT16: return INT16_MIN;
    case VKI_DTYPE_INT32: return INT32_MIN;
    default: return INT64_MIN;
    }
}

static int64_t dtype_int_max(vki_dtype t)
{
    switch (t) {
    case VKI_DTYPE_BOOL: return 1;
    case VKI_DTYPE_UINT8: return UINT8_MAX;
    case VKI_DTYPE_UINT16: return UINT16_MAX;
    case VKI_DTYPE_INT8: return INT8_MAX;
    case VKI_DTYPE_INT16: return INT16_MAX;
    case VKI_DTYPE_INT32: return INT32_MAX;
    default: return INT64_MAX;
    }
}

static void fold(op_ctx *c, enum reduce_kind kind, const reduce_layout *l, bool select_last)
{
    plan_value *x = op_in(c, 0);
    vki_dtype odt = op_out(c, 0)->dtype;
    void *out = op_output_host(c, 0);
    bool is_float = dtype_is_float(x->dtype) || kind == K_L2 || kind == K_LOGSUM || kind == K_LOGSUMEXP;
    for (uint32_t o = 0; o < l->out_count; o++) {
        uint32_t base = group_offset(o, l->n_kept, l->kept_dim, l->kept_stride);
        if (kind == K_ARGMAX || kind == K_ARGMIN) {
            double best = 0;
            int64_t best_i = -1;
            for (uint32_t r = 0; r < l->red_count; r++) {
                double v = host_read_f64(x->dtype, x->host, base + group_offset(r, l->n_red, l->red_dim, l->red_stride));
                bool wins = best_i < 0 || (isnan(v) && !isnan(best)) || (kind == K_ARGMAX ? v > best : v < best) ||
                            (select_last && (v == best || (isnan(v) && isnan(best))));
                if (wins) best = v, best_i = r;
            }
            host_write_i64(odt, out, o, best_i < 0 ? 0 : best_i);
            continue;
        }
        double acc = kind == K_PROD ? 1 : kind == K_MAX ? -INFINITY : kind == K_MIN ? INFINITY : 0, m = 0;
        int64_t iacc = kind == K_PROD ? 1 : kind == K_MAX ? dtype_int_min(x->dtype) : kind == K_MIN ? dtype_int_max(x->dtype) : 0;
        for (int pass = kind == K_LOGSUMEXP ? 0 : 1; pass < 2; pass++) {
            enum reduce_kind k = pass == 0 ? K_MAX : kind;
            if (pass == 1 && kind == K_LOGSUMEXP) acc = 0;
            for (uint32_t r = 0; r < l->red_count; r++) {
                size_t i = base + group_offset(r, l->n_red, l->red_dim, l->red_stride);
                if (is_float) {
                    double v = host_read_f64(x->dtype, x->host, i);
                    v = k == K_L1 ? fabs(v) : k == K_L2 || k == K_SUMSQUARE ? v * v : k == K_LOGSUMEXP ? exp(v - m) : v;
                    acc = k == K_MAX ? (v > acc || isnan(v) ? v : acc) : k == K_MIN ? (v < acc || isnan(v) ? v : acc)
                        : k == K_PROD ? acc * v : acc + v;
                } else {
                    int64_t v = host_read_i64(x->dtype, x->host, i);
                    v = k == K_L1 ? (v < 0 ? -v : v) : k == K_SUMSQUARE ? v * v : v;
                    iacc = k == K_MAX ? (v > iacc ? v : iacc) : k == K_MIN ? (v < iacc ? v : iacc)
                         : k == K_PROD ? iacc * v : iacc + v;
                }
            }
            if (pass == 0) m = acc;
        }
        if (is_float) {
            double n = (double)l->red_count;
            acc = kind == K_MEAN ? acc / n : kind == K_L2 ? sqrt(acc) : kind == K_LOGSUM ? log(acc)
                : kind == K_LOGSUMEXP ? (isinf(m) ? m : m + log(acc)) : acc;
            if (dtype_is_float(odt)) host_write_f64(odt, out, o, acc);
            else host_write_i64(odt, out, o, (int64_t)acc);
        } else {
            if (kind == K_MEAN) iacc = l->red_count ? iacc / (int64_t)l->red_count : 0;
            host_write_i64(odt, out, o, iacc);
        }
    }
}

/* Reads the axes (attribute, or input 1 from ReduceSum-13 / opset 18) into reduced[]. */
static vki_status read_axes(op_ctx *c, enum reduce_kind kind, int rank, bool *reduced)
{
    int64_t axes[VKI_MAX_RANK];
    int n_axes = 0;
    memset(reduced, 0, VKI_MAX_RANK * sizeof *reduced);
    if (kind == K_ARGMAX || kind == K_ARGMIN) {
        int a;
        VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", 0), rank, &a));
        if (rank && op_in(c, 0)->dims[a] == 0)
            return op_error(c, VKI_ERROR_SHAPE, "%s over an empty axis has no answer", c->node->op_type);
        if (rank) reduced[a] = true;
        return VKI_OK;
    }
    bool axes_input = (kind == K_SUM && c->opset >= 13) || c->opset >= 18;
    if (axes_input) {
        VKI_TRY(op_require_inputs(c, 1, 2));
        plan_value *a = op_in(c, 1);
        if (a && shape_numel(a->dims, a->rank) > 0) {
            if (a->dtype != VKI_DTYPE_INT64) return op_error(c, VKI_ERROR_MODEL, "axes must be int64");
            if (shape_numel(a->dims, a->rank) > VKI_MAX_RANK)
                return op_error(c, VKI_ERROR_SHAPE, "more axes than the input's rank %d", rank);
            VKI_TRY(op_const_ints(c, 1, axes, VKI_MAX_RANK, &n_axes));
        }
    } else {
        VKI_TRY(op_require_inputs(c, 1, 1));
        const int64_t *attr;
        int n = ir_attr_ints(c->node, "axes", &attr);
        if (n > VKI_MAX_RANK) return op_error(c, VKI_ERROR_SHAPE, "more axes than the input's rank %d", rank);
        for (int i = 0; i < n; i++) axes[i] = attr[i];
        n_axes = n < 0 ? 0 : n;
    }
    if (n_axes == 0) {
        /* noop_with_empty_axes: every element is reduced alone (Sum is then the identity) */
        if (axes_input && ir_attr_int(c->node, "noop_with_empty_axes", 0)) return VKI_OK;
        for (int d = 0; d < rank; d++) reduced[d] = true;
        return VKI_OK;
    }
    for (int i = 0; i < n_axes; i++) {
        int a;
        VKI_TRY(op_axis(c, axes[i], rank, &a));
        if (reduced[a]) return op_error(c, VKI_ERROR_MODEL, "axis %lld appears twice in axes", (long long)axes[i]);
        reduced[a] = true;
    }
    return VKI_OK;
}

/* A workgroup per output when each output reads many elements; else an invocation each (the
 * shader's ROWS spec constant). On CPU devices (lavapipe) a workgroup's barrier tree costs more
 * than its loop saves below long rows: the MLP policy's two ReduceMeans over 32 elements took
 * 31-32 us each as workgroups, about 1-4 us as invocations (--cpu-threads 0). */
enum { REDUCE_CPU_WORKGROUP_FROM = 8192 };

static bool workgroup_per_output(const op_ctx *c, const reduce_layout *l)
{
    if (c->vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU)
        return l->red_count >= REDUCE_CPU_WORKGROUP_FROM && l->out_count < 2048;
    return l->red_count >= 256 || (l->red_count >= 32 && l->out_count < 2048);
}

/* The kind that combines partial results of `kind` over equal parts of the reduced elements
 * into the result over all of them (ReduceL2 of partial L2 norms, LogSumExp of partial
 * LogSums...); -1 where none does exactly (ArgMax and ArgMin, whose partial indices would need
 * offsets; LogSum; Mean, L2 and LogSumExp of integers, which round each partial). */
static int combining_kind(enum reduce_kind kind, vki_dtype t)
{
    bool fl = dtype_is_float(t);
    switch (kind) {
    case K_SUM: case K_MAX: case K_MIN: case K_PROD: return (int)kind;
    case K_L1: case K_SUMSQUARE: return K_SUM;
    case K_MEAN: case K_L2: case K_LOGSUMEXP: return fl ? (int)kind : -1;
    default: return -1; /* also LogSum: the log of a negative partial sum would be NaN */
    }
}

/* A reduction whose outermost (largest-stride) dim group is reduced and whose input is larger
 * than one binding, in two stages: windows of `part` rows of that group, each reduced into its
 * own slot of a scratch value (slots aligned to the binding alignment), then the slots reduced
 * by combining_kind. The rows split into equal parts, so that Mean of partial means is the
 * mean. Partials are held in the input's storage: for float16/bfloat16 each is rounded to 16
 * bits (a single pass rounds only its result), so a sum whose parts cancel may overflow
 * where one pass would not. */
static vki_status reduce_two_stage(op_ctx *c, enum reduce_kind kind, const reduce_layout *l, const uint32_t *spec,
                                   gpu_storage st)
{
    plan_value *x = op_in(c, 0), *y = op_out(c, 0);
    int combine = combining_kind(kind, x->dtype);
    uint64_t range = op_max_binding_bytes(c), align = op_binding_alignment(c), elem = storage_size(st);
    uint64_t row_bytes = (uint64_t)l->red_stride[0] * elem, rows = l->red_dim[0];
    uint64_t fit = range / row_bytes;
    /* the largest part that fits one binding, divides the rows and starts every window aligned
     * (divisors in pairs: O(sqrt(rows)) at plan time) */
    int64_t part = 0;
    for (uint64_t d = 1; d * d <= rows; d++) {
        if (rows % d) continue;
        uint64_t pair[2] = {d, rows / d};
        for (int j = 0; j < 2; j++)
            if (pair[j] <= fit && (pair[j] * row_bytes) % align == 0 && (int64_t)pair[j] > part) part = (int64_t)pair[j];
    }
    uint64_t slot = ((uint64_t)l->out_count * elem + align - 1) / align * align;
    int64_t parts = part ? (int64_t)rows / part : 0;
    if (combine < 0 || !part || (uint64_t)parts * slot > range || parts > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "the input is larger than the device's maxStorageBufferRange (%llu bytes) "
                        "and its outermost dim is reduced: %s", (unsigned long long)range,
                        combine < 0 ? "this reduction of this dtype does not combine from parts exactly"
                                    : "it does not split into equal windows of whole rows that fit one binding and "
                                      "start at the binding alignment");
    int partial;
    VKI_TRY(op_temp(c, y->dtype, (int64_t)(parts * slot / elem), &partial));
    op_value(c, partial)->storage = st;
    reduce_layout piece = *l;
    piece.red_dim[0] = (uint32_t)part;
    piece.red_count = l->red_count / (uint32_t)rows * (uint32_t)part;
    bool rows_wg = workgroup_per_output(c, &piece);
    uint32_t spec1[6] = {spec[0], spec[1], spec[2], spec[3], rows_wg, spec[5]};
    int values1[2] = {op_in_index(c, 0), partial};
    gpu_storage stores[2] = {st, st};
    const char *shader = op_variant(c, "reduce", st);
    uint32_t gx, gy;
    op_grid_1d((uint64_t)piece.out_count * (rows_wg ? 128 : 1), 128, &gx, &gy);
    for (int64_t i = 0; i < parts; i++) {
        op_window win[2] = {{(uint64_t)i * part * row_bytes, (uint64_t)part * row_bytes}, {(uint64_t)i * slot, slot}};
        VKI_TRY(op_dispatch_stored(c, shader, spec1, 6, &piece, sizeof piece, values1, win, stores, 2, gx, gy, 1));
    }
    /* the slots: kept elements contiguous, one slot per part */
    reduce_layout join = {l->out_count, (uint32_t)parts, 1, 1, {l->out_count}, {1}, {(uint32_t)parts},
                          {(uint32_t)(slot / elem)}};
    bool rows2 = workgroup_per_output(c, &join);
    uint32_t spec2[6] = {spec[0], (uint32_t)combine, spec[3], spec[3], rows2, 0};
    int values2[2] = {partial, op_out_index(c, 0)};
    op_grid_1d((uint64_t)join.out_count * (rows2 ? 128 : 1), 128, &gx, &gy);
    return op_dispatch_stored(c, shader, spec2, 6, &join, sizeof join, values2, NULL, stores, 2, gx, gy, 1);
}

static vki_status plan_reduce(op_ctx *c)
{
    enum reduce_kind kind = K_SUM;
    for (size_t i = 0; i < sizeof reduce_ops / sizeof *reduce_ops; i++)
        if (!strcmp(reduce_ops[i].name, c->node->op_type)) kind = reduce_ops[i].kind;
    bool is_arg = kind == K_ARGMAX || kind == K_ARGMIN;
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0);
    if (!x) return op_error(c, VKI_ERROR_MODEL, "input 0 is required");
    if (x->dtype == VKI_DTYPE_BOOL && kind != K_MAX && kind != K_MIN)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "%s does not take bool", c->node->op_type);
    bool reduced[VKI_MAX_RANK];
    VKI_TRY(read_axes(c, kind, x->rank, reduced));
    bool keepdims = ir_attr_int(c->node, "keepdims", 1) != 0;
    bool select_last = is_arg && ir_attr_int(c->node, "select_last_index", 0) != 0;
    int64_t dims[VKI_MAX_RANK];
    int rank = 0;
    for (int d = 0; d < x->rank; d++) {
        if (!reduced[d]) dims[rank++] = x->dims[d];
        else if (keepdims) dims[rank++] = 1;
    }
    VKI_TRY(op_set_output(c, 0, is_arg ? VKI_DTYPE_INT64 : x->dtype, rank, dims));
    if (shape_numel(x->dims, x->rank) > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    reduce_layout l;
    build_layout(x, reduced, &l);
    if (op_input_is_const(c, 0) && l.out_count <= 4096) {
        fold(c, kind, &l, select_last);
        return VKI_OK;
    }
    if (l.out_count == 0) return VKI_OK; /* an empty output: nothing to compute */
    bool rows = workgroup_per_output(c, &l);
    uint32_t spec[6] = {128, kind, op_dtype_code(x->dtype), op_dtype_code(op_out(c, 0)->dtype), rows, select_last};
    int values[2] = {op_in_index(c, 0), op_out_index(c, 0)};
    /* halves in, halves out (float reductions, fp32 accumulation): the 16-bit variant; ArgMax
     * and ArgMin write int64 words and read their input as words */
    gpu_storage st = is_arg ? GPU_W32 : op_half_storage(c, values, 2), stores[2] = {st, st};
    const char *shader = op_variant(c, "reduce", st);
    uint64_t elem = storage_size(st);
    uint32_t gx, gy;
    /* Tensors larger than one binding run as several dispatches over windows of the outermost
     * dim group when it is kept: it has the largest stride, so a window of it is contiguous in
     * both the input and the output. */
    int64_t outer = 1;
    uint64_t outer_bytes[2] = {0, 0};
    if (l.n_kept && (uint64_t)l.kept_dim[0] * l.kept_stride[0] == (uint64_t)shape_numel(x->dims, x->rank)) {
        outer = l.kept_dim[0];
        outer_bytes[0] = (uint64_t)l.kept_stride[0] * elem;
        outer_bytes[1] = (uint64_t)(l.out_count / l.kept_dim[0]) * elem;
    }
    int64_t chunk = outer > 1 ? op_batch_chunk(c, outer, outer_bytes, 2) : outer;
    if (outer <= 1 && (uint64_t)shape_numel(x->dims, x->rank) * elem > op_max_binding_bytes(c)) {
        if (l.n_red && (uint64_t)l.red_dim[0] * l.red_stride[0] == (uint64_t)shape_numel(x->dims, x->rank))
            return reduce_two_stage(c, kind, &l, spec, st);
        return op_error(c, VKI_ERROR_UNSUPPORTED, "the input is larger than the device's maxStorageBufferRange (%llu bytes) "
                        "and its outermost dim is reduced; reductions split their work only along outermost kept dims",
                        (unsigned long long)op_max_binding_bytes(c));
    }
    if (chunk >= outer) {
        op_grid_1d((uint64_t)l.out_count * (rows ? 128 : 1), 128, &gx, &gy);
        return op_dispatch_stored(c, shader, spec, 6, &l, sizeof l, values, NULL, stores, 2, gx, gy, 1);
    }
    if (chunk <= 0)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "windows of the outermost kept dims (%llu input bytes each) cannot fit "
                        "the device's maxStorageBufferRange (%llu bytes) and start at multiples of %llu bytes; reductions "
                        "split their work only along the outermost dims, when those are kept",
                        (unsigned long long)outer_bytes[0], (unsigned long long)op_max_binding_bytes(c),
                        (unsigned long long)op_binding_alignment(c));
    for (int64_t start = 0; start < outer; start += chunk) {
        int64_t k = outer - start < chunk ? outer - start : chunk;
        reduce_layout part = l;
        part.kept_dim[0] = (uint32_t)k;
        part.out_count = (uint32_t)(k * (int64_t)(outer_bytes[1] / elem));
        op_window win[2] = {{(uint64_t)start * outer_bytes[0], (uint64_t)k * outer_bytes[0]},
                            {(uint64_t)start * outer_bytes[1], (uint64_t)k * outer_bytes[1]}};
        op_grid_1d((uint64_t)part.out_count * (rows ? 128 : 1), 128, &gx, &gy);
        VKI_TRY(op_dispatch_stored(c, shader, spec, 6, &part, sizeof part, values, win, stores, 2, gx, gy, 1));
    }
    return VKI_OK;
}

#define FLOATS OP_DTYPES_FLOAT
#define INTS OP_DTYPES_INT
#define AXES_NOTE "an axes input (ReduceSum-13, opset 18) must be known at plan time"
#define REDUCE(name_, dtypes_) const op_def op_##name_ = {#name_, "", dtypes_, AXES_NOTE, plan_reduce};
REDUCE(ReduceSum, FLOATS " " INTS) REDUCE(ReduceMean, FLOATS " " INTS) REDUCE(ReduceMax, FLOATS " " INTS " bool")
REDUCE(ReduceMin, FLOATS " " INTS " bool") REDUCE(ReduceProd, FLOATS " " INTS) REDUCE(ReduceL1, FLOATS " " INTS)
REDUCE(ReduceL2, FLOATS " " INTS) REDUCE(ReduceLogSum, FLOATS " " INTS) REDUCE(ReduceLogSumExp, FLOATS " " INTS)
REDUCE(ReduceSumSquare, FLOATS " " INTS)
const op_def op_ArgMax = {"ArgMax", "", FLOATS " " INTS, "", plan_reduce};
const op_def op_ArgMin = {"ArgMin", "", FLOATS " " INTS, "", plan_reduce};
