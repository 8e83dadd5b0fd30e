/* The strided copy (strided_copy.h): one dispatch of shaders/copy.glsl, several over windows
 * for tensors past one binding, or a loop on the host for small constants. */
#include "strided_copy.h"

#include <string.h>

#define FOLD_MAX_ELEMENTS 4096

void contiguous_strides(const int64_t *dims, int rank, int64_t *strides)
{
    int64_t s = 1;
    for (int k = rank - 1; k >= 0; k--) {
        strides[k] = s;
        s *= dims[k];
    }
}

void value_strides(const plan_value *v, int64_t strides[VKI_MAX_RANK])
{
    if (v->permuted) memcpy(strides, v->view_strides, VKI_MAX_RANK * sizeof *strides);
    else contiguous_strides(v->dims, v->rank, strides);
}

void view_layout(const plan_value *v, int *rank, int64_t dims[VKI_MAX_RANK + 1], int64_t strides[VKI_MAX_RANK + 1],
                 int map[VKI_MAX_RANK])
{
    int64_t s[VKI_MAX_RANK];
    value_strides(v, s);
    int r = 0;
    for (int k = 0; k < v->rank; k++) {
        map[k] = r;
        if (v->split_inner > 0 && k == v->split_dim) {
            dims[r] = v->dims[k] / v->split_inner, strides[r++] = s[k];
            dims[r] = v->split_inner, strides[r++] = v->split_stride;
        } else {
            dims[r] = v->dims[k], strides[r++] = s[k];
        }
    }
    *rank = r;
}

/* Constant inputs are moved on the host at plan time where the outputs hold at most
 * FOLD_MAX_ELEMENTS elements, or no more than the inputs do (a Split, Slice or Transpose of a
 * weight: ACT's in-projection cut into q, k and v was 18 copy dispatches a run, 12.8 ms on
 * lavapipe; a piece of a constant mask: VQ-BeT's Slices and the Equal after them). An Expand,
 * Tile, Pad or Gather that makes more elements than it reads stays on the GPU above the limit,
 * so that a small constant cannot become a large host copy. */
bool movement_folds(op_ctx *c)
{
    if (!op_all_inputs_const(c)) return false;
    int64_t in = 0, out = 0;
    for (int i = 0; i < op_input_count(c); i++) {
        plan_value *v = op_has_input(c, i) ? op_in(c, i) : NULL;
        if (v) in += shape_numel(v->dims, v->rank);
    }
    for (int o = 0; o < op_output_count(c); o++) {
        plan_value *v = op_out(c, o);
        if (v) out += shape_numel(v->dims, v->rank);
    }
    return out <= FOLD_MAX_ELEMENTS || out <= in;
}

void movement_alloc_host_outputs(op_ctx *c)
{
    for (int o = 0; o < op_output_count(c); o++) op_output_host(c, o);
}

static int64_t copy_count(const strided_copy *s)
{
    return shape_numel(s->dims, s->rank);
}

static void copy_on_host(const strided_copy *s, const void *in, void *out, size_t elem)
{
    int64_t n = copy_count(s), idx[COPY_MAX_RANK] = {0};
    int64_t src = s->in_base, dst = s->out_base;
    for (int64_t i = 0; i < n; i++) {
        memcpy((char *)out + dst * (int64_t)elem, (const char *)in + src * (int64_t)elem, elem);
        for (int k = s->rank - 1; k >= 0; k--) { /* odometer step */
            idx[k]++;
            src += s->in_strides[k];
            dst += s->out_strides[k];
            if (idx[k] < s->dims[k]) break;
            src -= idx[k] * s->in_strides[k];
            dst -= idx[k] * s->out_strides[k];
            idx[k] = 0;
        }
    }
}

void copy_collapse(strided_copy *s)
{
    int r = 0;
    for (int k = 0; k < s->rank; k++) {
        if (s->dims[k] == 1) continue;
        if (r > 0 && s->in_strides[r - 1] == s->in_strides[k] * s->dims[k] &&
            s->out_strides[r - 1] == s->out_strides[k] * s->dims[k]) {
            s->dims[r - 1] *= s->dims[k];
            s->in_strides[r - 1] = s->in_strides[k];
            s->out_strides[r - 1] = s->out_strides[k];
            continue;
        }
        s->dims[r] = s->dims[k];
        s->in_strides[r] = s->in_strides[k];
        s->out_strides[r] = s->out_strides[k];
        r++;
    }
    if (r == 0) {
        s->dims[0] = 1;
        s->in_strides[0] = s->out_strides[0] = 0;
        r = 1;
    }
    s->rank = r;
}

gpu_storage copy_storage(op_ctx *c, int out)
{
    gpu_storage s = op_storage(c, op_out_index(c, out));
    if (s == GPU_W32 || s == GPU_F64) return s;
    if (storage_size(s) == 2) return op_has_storage16(c) ? s : GPU_W32;
    return op_has_storage8(c) ? s : GPU_W32;
}

/* One dispatch of a copy kernel (shaders/copy.glsl) for a collapsed copy in storage `st`; windows:
 * of the input and the output (bases relative to them), or NULL. */
static vki_status copy_dispatch_values(op_ctx *c, int from, int to, const strided_copy *s, const op_window *windows,
                                       gpu_storage st);

static vki_status copy_dispatch(op_ctx *c, int in, int out, const strided_copy *s, const op_window *windows,
                                gpu_storage st)
{
    return copy_dispatch_values(c, op_in_index(c, in), op_out_index(c, out), s, windows, st);
}

vki_status copy_values(op_ctx *c, int from, int to, const strided_copy *copy, gpu_storage st)
{
    strided_copy s = *copy;
    copy_collapse(&s);
    if (s.rank > 8)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "the copy needs %d dimensions after merging contiguous ones; "
                        "at most 8 are supported", s.rank);
    return copy_dispatch_values(c, from, to, &s, NULL, st);
}

vki_status op_contiguous_copy(op_ctx *c, int v, int *copy)
{
    plan_value *x = op_value(c, v);
    strided_copy s = {0};
    int map[VKI_MAX_RANK];
    view_layout(x, &s.rank, s.dims, s.in_strides, map);
    s.in_base = x->view_elem;
    contiguous_strides(s.dims, s.rank, s.out_strides);
    if ((uint64_t)shape_numel(x->dims, x->rank) * storage_size(x->storage) > op_max_binding_bytes(c))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: a permuted view larger than the device's maxStorageBufferRange "
                        "(%llu bytes) would be copied whole", (unsigned long long)op_max_binding_bytes(c));
    VKI_TRY(op_temp(c, x->dtype, shape_numel(x->dims, x->rank), copy));
    plan_value *t = op_value(c, *copy);
    t->storage = x->storage;
    t->rank = x->rank;
    memcpy(t->dims, x->dims, sizeof t->dims);
    return copy_values(c, v, *copy, &s, x->storage);
}

/* The widest group (16, 8 or the element's own bytes) that a copy of `elem`-byte elements can
 * move as one: the innermost run contiguous on both sides and a whole number of groups long,
 * every other stride, both bases and the windows' offsets whole groups. */
static uint32_t copy_group_bytes(const strided_copy *s, const op_window *windows, uint32_t elem)
{
    int last = s->rank - 1;
    for (uint32_t g = 16; g > elem; g /= 2) {
        uint32_t f = g / elem;
        bool ok = s->in_strides[last] == 1 && s->out_strides[last] == 1 && s->dims[last] % f == 0 &&
                  s->in_base % f == 0 && s->out_base % f == 0;
        for (int k = 0; ok && k < last; k++) ok = s->in_strides[k] % f == 0 && s->out_strides[k] % f == 0;
        for (int w = 0; ok && windows && w < 2; w++) ok = windows[w].offset % g == 0;
        if (ok) return g;
    }
    return elem;
}

static vki_status copy_dispatch_values(op_ctx *c, int from, int to, const strided_copy *region, const op_window *windows,
                                       gpu_storage st)
{
    /* regrouped so that each invocation moves up to 16 bytes (a run of 64 halves: 8 invocations
     * instead of 64) */
    strided_copy grouped = *region;
    const strided_copy *s = &grouped;
    uint32_t elem = st == GPU_W32 ? 4 : (uint32_t)storage_size(st), group = copy_group_bytes(s, windows, elem);
    if (group > elem) {
        int64_t f = group / elem;
        grouped.dims[s->rank - 1] /= f;
        grouped.in_base /= f;
        grouped.out_base /= f;
        for (int k = 0; k < s->rank - 1; k++) {
            grouped.in_strides[k] /= f;
            grouped.out_strides[k] /= f;
        }
    }
    struct {
        uint32_t count;
        int32_t in_base, out_base;
        uint32_t unused;
        uint32_t dims[8];
        int32_t in_strides[8], out_strides[8];
    } push = {(uint32_t)copy_count(s), (int32_t)s->in_base, (int32_t)s->out_base, 0, {0}, {0}, {0}};
    for (int k = 0; k < s->rank; k++) {
        push.dims[k] = (uint32_t)s->dims[k];
        push.in_strides[k] = (int32_t)s->in_strides[k];
        push.out_strides[k] = (int32_t)s->out_strides[k];
    }
    uint32_t gx, gy;
    uint32_t spec[3] = {128, (uint32_t)s->rank, op_grid_elementwise(c, (uint64_t)push.count, 128, &gx, &gy)};
    int values[2] = {from, to};
    /* named for the width moved, not the dtype: the copy never looks at the bits */
    const char *shader = group == 16 ? "copy_128" : group == 8 ? "copy_64" : group == 4 ? "copy" : group == 2 ? "copy_16" : "copy_8";
    gpu_storage stores[2] = {st, st};
    return op_dispatch_stored(c, shader, spec, 3, &push, sizeof push, values, windows, stores, 2, gx, gy, 1);
}

/* The element offsets, relative to the base, that `rows` rows of dim 0 and all of the other
 * dims reach through `strides`: [*lo, *hi]. */
static void copy_reach(const strided_copy *s, const int64_t *strides, int64_t rows, int64_t *lo, int64_t *hi)
{
    *lo = *hi = 0;
    for (int k = 0; k < s->rank; k++) {
        int64_t step = (k ? s->dims[k] - 1 : rows - 1) * strides[k];
        if (step < 0) *lo += step;
        else *hi += step;
    }
}

/* The most rows of dim 0 whose elements, reached through `strides`, fit one binding that
 * starts at an aligned offset. */
static int64_t copy_rows_that_fit(const strided_copy *s, const int64_t *strides, int64_t span_limit)
{
    int64_t lo, hi;
    copy_reach(s, strides, 1, &lo, &hi);
    int64_t one_row = hi - lo + 1;
    if (one_row > span_limit) return 0;
    int64_t stride = strides[0] < 0 ? -strides[0] : strides[0];
    if (stride == 0) return s->dims[0];
    int64_t rows = (span_limit - one_row) / stride + 1;
    return rows < s->dims[0] ? rows : s->dims[0];
}

/* A copy between tensors larger than one binding: several dispatches over runs of dim 0 (the
 * outermost after collapsing), each binding the aligned input and output spans it reaches.
 * Works when a run of dim 0 reaches a compact span on both sides (Concat along axis != 0,
 * Slice, Split, Transpose keeping axis 0 first...). */
static vki_status copy_windowed(op_ctx *c, int in, int out, const strided_copy *s, gpu_storage st)
{
    int64_t elem = storage_size(st);
    int64_t align = (int64_t)op_binding_alignment(c) / elem; /* in elements */
    int64_t span_limit = (int64_t)op_max_binding_bytes(c) / elem - (align - 1);
    int64_t rows_in = copy_rows_that_fit(s, s->in_strides, span_limit);
    int64_t rows_out = copy_rows_that_fit(s, s->out_strides, span_limit);
    int64_t chunk = rows_in < rows_out ? rows_in : rows_out;
    if (chunk <= 0)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "the tensors are larger than the device's maxStorageBufferRange (%llu bytes) "
                        "and this copy does not split into windows along its outermost dim (one step of it reaches "
                        "too far into the input or the output)", (unsigned long long)op_max_binding_bytes(c));
    for (int64_t start = 0; start < s->dims[0]; start += chunk) {
        strided_copy part = *s;
        part.dims[0] = s->dims[0] - start < chunk ? s->dims[0] - start : chunk;
        int64_t in_base = s->in_base + start * s->in_strides[0], out_base = s->out_base + start * s->out_strides[0];
        int64_t in_lo, in_hi, out_lo, out_hi;
        copy_reach(&part, part.in_strides, part.dims[0], &in_lo, &in_hi);
        copy_reach(&part, part.out_strides, part.dims[0], &out_lo, &out_hi);
        int64_t in_first = (in_base + in_lo) / align * align, out_first = (out_base + out_lo) / align * align;
        part.in_base = in_base - in_first;
        part.out_base = out_base - out_first;
        op_window windows[2] = {{(uint64_t)(in_first * elem), (uint64_t)((in_base + in_hi - in_first + 1) * elem)},
                                {(uint64_t)(out_first * elem), (uint64_t)((out_base + out_hi - out_first + 1) * elem)}};
        VKI_TRY(copy_dispatch(c, in, out, &part, windows, st));
    }
    return VKI_OK;
}

vki_status copy_run(op_ctx *c, int in, int out, const strided_copy *copy, bool on_host)
{
    plan_value *x = op_in(c, in), *y = op_out(c, out);
    if (!y) return VKI_OK;
    int64_t count = copy_count(copy);
    if (count == 0) return VKI_OK;
    if (on_host) {
        size_t elem = vki_dtype_size(x->dtype);
        if (!elem) return op_error(c, VKI_ERROR_UNSUPPORTED, "dtype %s cannot be copied", vki_dtype_name(x->dtype));
        copy_on_host(copy, x->host, (void *)y->host, elem);
        return VKI_OK;
    }
    VKI_TRY(op_require_gpu_dtype(c, in));
    if (shape_numel(x->dims, x->rank) > INT32_MAX || shape_numel(y->dims, y->rank) > INT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "tensors of more than 2^31 elements are not supported");
    strided_copy s = *copy;
    copy_collapse(&s);
    if (s.rank > 8)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "the copy needs %d dimensions after merging contiguous ones; "
                        "at most 8 are supported", s.rank);
    gpu_storage st = copy_storage(c, out);
    uint64_t range = op_max_binding_bytes(c), elem = storage_size(st);
    if ((uint64_t)shape_numel(x->dims, x->rank) * elem <= range && (uint64_t)shape_numel(y->dims, y->rank) * elem <= range)
        return copy_dispatch(c, in, out, &s, NULL, st);
    return copy_windowed(c, in, out, &s, st);
}
