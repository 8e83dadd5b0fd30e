/* ScatterElements (and the older Scatter) and ScatterND with every reduction (none, add, mul, max,
 * min; shaders/scatter_elements.comp, shaders/scatter_nd.glsl). The shaders work as gathers: each
 * output element collects the updates aimed at it in order, so duplicate indices need no atomics
 * and reduce exactly as the reference does. ScatterND without reduction over many tuples (a
 * masked_scatter) is three linear passes instead (scatter_nd_owned), the last duplicate winning.
 * Small constant inputs are folded on the host. Constant indices out of range are errors at plan time; on the GPU an update whose index (ScatterND: any
 * index of its tuple) is out of range is skipped, so nothing is written outside the output.
 *
 * vkinfer.ScatterSlices, the dynamo exporter's slice assignment planned as one node
 * (src/plan/fuse.c, match_scatter_slices):
 *   Y = Transpose(ScatterND(ScatterND(data, i1, Transpose(u1, perm)), i2, Transpose(u2, perm)), out_perm)
 * (inputs data, i1, u1 and optionally i2, u2; out_perm optional). Each run of consecutive
 * index tuples is one strided copy from u straight into Y's layout; data is copied first only
 * where the pieces do not cover its first dimension. Indices must be constants. */
#include "movement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum reduction { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN }; /* keep in step with the shaders */

static vki_status read_reduction(op_ctx *c, enum reduction *out)
{
    const char *r = ir_attr_string(c->node, "reduction", "none");
    if (!strcmp(r, "none")) *out = RED_NONE;
    else if (!strcmp(r, "add")) *out = RED_ADD;
    else if (!strcmp(r, "mul")) *out = RED_MUL;
    else if (!strcmp(r, "max")) *out = RED_MAX;
    else if (!strcmp(r, "min")) *out = RED_MIN;
    else return op_error(c, VKI_ERROR_UNSUPPORTED, "reduction '%s' is not supported (none, add, mul, max, min)", r);
    return VKI_OK;
}

/* out[at] = reduce(out[at], upd[from]) on host data of dtype t. */
static void host_reduce(vki_dtype t, enum reduction red, void *out, int64_t at, const void *upd, int64_t from)
{
    if (dtype_is_float(t)) {
        double a = host_read_f64(t, out, (size_t)at), b = host_read_f64(t, upd, (size_t)from);
        double r = red == RED_ADD ? a + b : red == RED_MUL ? a * b : red == RED_MAX ? (a > b ? a : b)
                 : red == RED_MIN ? (a < b ? a : b) : b;
        host_write_f64(t, out, (size_t)at, r);
    } else {
        int64_t a = host_read_i64(t, out, (size_t)at), b = host_read_i64(t, upd, (size_t)from);
        int64_t r = red == RED_ADD ? a + b : red == RED_MUL ? a * b : red == RED_MAX ? (a > b ? a : b)
                  : red == RED_MIN ? (a < b ? a : b) : b;
        host_write_i64(t, out, (size_t)at, r);
    }
}

static vki_status common_checks(op_ctx *c, enum reduction *red)
{
    VKI_TRY(op_require_inputs(c, 3, 3));
    plan_value *x = op_in(c, 0), *ind = op_in(c, 1), *upd = op_in(c, 2);
    if (ind->dtype != VKI_DTYPE_INT32 && ind->dtype != VKI_DTYPE_INT64)
        return op_error(c, VKI_ERROR_MODEL, "indices must be int32 or int64");
    if (upd->dtype != x->dtype) return op_error(c, VKI_ERROR_MODEL, "updates and data differ in dtype");
    VKI_TRY(read_reduction(c, red));
    if (*red != RED_NONE && x->dtype == VKI_DTYPE_BOOL) return op_error(c, VKI_ERROR_UNSUPPORTED, "reductions on bool");
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    for (int i = 0; i < 3; i++)
        if (shape_numel(op_in(c, i)->dims, op_in(c, i)->rank) > INT32_MAX)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    return VKI_OK;
}

static vki_status gpu_scatter(op_ctx *c, const char *shader, uint32_t spec1, enum reduction red, const void *push, uint32_t push_bytes)
{
    plan_value *x = op_in(c, 0);
    int64_t count = shape_numel(x->dims, x->rank);
    if (count == 0) return VKI_OK;
    for (int i = 0; i < 3; i++) VKI_TRY(op_require_gpu_dtype(c, i));
    uint32_t spec[4] = {128, spec1, op_dtype_code(x->dtype), red}, gx, gy;
    int values[4] = {op_in_index(c, 0), op_in_index(c, 1), op_in_index(c, 2), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    if (strcmp(shader, "scatter_nd")) return op_dispatch(c, shader, spec, 4, push, push_bytes, values, 4, gx, gy, 1);
    /* float data and updates held as halves are scattered as halves; indices stay int32 words */
    int data[3] = {values[0], values[2], values[3]};
    gpu_storage st = op_half_storage(c, data, 3), stores[4] = {st, GPU_W32, st, st};
    return op_dispatch_stored(c, op_variant(c, shader, st), spec, 4, push, push_bytes, values, NULL, stores, 4, gx, gy, 1);
}

static vki_status plan_scatter_elements(op_ctx *c)
{
    enum reduction red;
    VKI_TRY(common_checks(c, &red));
    plan_value *x = op_in(c, 0), *ind = op_in(c, 1), *upd = op_in(c, 2);
    int axis, r = x->rank;
    if (r < 1 || ind->rank != r || upd->rank != r) return op_error(c, VKI_ERROR_SHAPE, "data, indices and updates must have one rank >= 1");
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", 0), r, &axis));
    for (int k = 0; k < r; k++) {
        if (upd->dims[k] != ind->dims[k]) return op_error(c, VKI_ERROR_SHAPE, "updates and indices differ in shape");
        if (k != axis && ind->dims[k] > x->dims[k]) return op_error(c, VKI_ERROR_SHAPE, "indices are larger than the data in dimension %d", k);
    }
    int64_t n = x->dims[axis], idx_count = shape_numel(ind->dims, r), idx_strides[VKI_MAX_RANK], data_strides[VKI_MAX_RANK];
    contiguous_strides(ind->dims, r, idx_strides);
    contiguous_strides(x->dims, r, data_strides);
    if (ind->host)
        for (int64_t i = 0; i < idx_count; i++) {
            int64_t v = host_read_i64(ind->dtype, ind->host, (size_t)i);
            if (v < -n || v >= n) return op_error(c, VKI_ERROR_SHAPE, "index %lld is out of range for an axis of size %lld", (long long)v, (long long)n);
        }
    if (movement_folds(c)) {
        void *out = op_output_host(c, 0);
        memcpy(out, x->host, (size_t)shape_numel(x->dims, r) * vki_dtype_size(x->dtype));
        for (int64_t i = 0; i < idx_count; i++) {
            int64_t rest = i, at = 0;
            for (int k = r - 1; k >= 0; k--) {
                int64_t coord = rest % ind->dims[k];
                rest /= ind->dims[k];
                if (k == axis) {
                    coord = host_read_i64(ind->dtype, ind->host, (size_t)i);
                    if (coord < 0) coord += n;
                }
                at += coord * data_strides[k];
            }
            host_reduce(x->dtype, red, out, at, upd->host, i);
        }
        return VKI_OK;
    }
    struct {
        uint32_t count;
        int32_t axis, n_along_axis;
        uint32_t unused;
        int32_t data_dims[8], idx_dims[8], idx_strides[8];
    } push = {(uint32_t)shape_numel(x->dims, r), axis, (int32_t)ind->dims[axis], 0, {0}, {0}, {0}};
    for (int k = 0; k < r; k++) {
        push.data_dims[k] = (int32_t)x->dims[k];
        push.idx_dims[k] = (int32_t)ind->dims[k];
        push.idx_strides[k] = (int32_t)idx_strides[k];
    }
    return gpu_scatter(c, "scatter_elements", (uint32_t)r, red, &push, sizeof push);
}

/* ScatterND's rules for data x, indices ind and updates of dims ud (rank ur; `upd` names them in
 * the message): tuples of *k indices, updates of shape indices.shape[:-1] + data.shape[k:],
 * constant indices in range. */
static vki_status nd_shapes(op_ctx *c, const plan_value *x, const plan_value *ind, const int64_t *ud, int ur,
                            const char *upd, int *k)
{
    if (ind->rank < 1) return op_error(c, VKI_ERROR_SHAPE, "indices must have rank >= 1");
    *k = (int)ind->dims[ind->rank - 1];
    if (*k < 1 || *k > x->rank) return op_error(c, VKI_ERROR_SHAPE, "index tuples of length %d for data of rank %d", *k, x->rank);
    bool ok = ur == ind->rank - 1 + x->rank - *k;
    for (int d = 0; ok && d < ind->rank - 1; d++) ok = ud[d] == ind->dims[d];
    for (int d = 0; ok && d < x->rank - *k; d++) ok = ud[ind->rank - 1 + d] == x->dims[*k + d];
    if (!ok) return op_error(c, VKI_ERROR_SHAPE, "%s must have shape indices.shape[:-1] + data.shape[%d:]", upd, *k);
    if (ind->host)
        for (int64_t i = 0; i < shape_numel(ind->dims, ind->rank - 1) * *k; i++) {
            int64_t v = host_read_i64(ind->dtype, ind->host, (size_t)i), n = x->dims[i % *k];
            if (v < -n || v >= n) return op_error(c, VKI_ERROR_SHAPE, "index %lld is out of range for a dimension of size %lld", (long long)v, (long long)n);
        }
    return VKI_OK;
}

/* ScatterND's gather (shaders/scatter_nd.glsl) scans every tuple for each output element: up to
 * this many tuples; more, without a reduction, take scatter_nd_owned's three passes. */
enum { ND_GATHER_MAX_TUPLES = 64 };

/* Keep in step with the Push block of shaders/scatter_nd_owned.glsl. */
typedef struct nd_owned_push {
    uint32_t count, elements, outers, slice;
    int32_t dims[8], outer_strides[8];
} nd_owned_push;

/* ScatterND without reduction as three dispatches over the output (shaders/scatter_nd_owned.glsl):
 * Y = data with an owner per outer position reset, each tuple claiming its position (the last
 * wins), each owning tuple's slice stored; work linear in data and updates, for the many
 * tuples of a masked_scatter (a VLM's image features put into its token sequence). */
static vki_status scatter_nd_owned(op_ctx *c, int k, int64_t tuples, int64_t slice, const int64_t *outer_strides)
{
    plan_value *x = op_in(c, 0);
    int64_t elements = shape_numel(x->dims, x->rank), outers = shape_numel(x->dims, k);
    if (elements == 0) return VKI_OK;
    for (int i = 0; i < 3; i++) VKI_TRY(op_require_gpu_dtype(c, i));
    int owner;
    VKI_TRY(op_temp(c, VKI_DTYPE_INT32, outers, &owner));
    int values[5] = {op_in_index(c, 0), op_in_index(c, 1), op_in_index(c, 2), op_out_index(c, 0), owner};
    int data[3] = {values[0], values[2], values[3]};
    gpu_storage st = op_half_storage(c, data, 3), stores[5] = {st, GPU_W32, st, st, GPU_W32};
    const char *shader = op_variant(c, "scatter_nd_owned", st);
    nd_owned_push push = {0, (uint32_t)elements, (uint32_t)outers, (uint32_t)(slice ? slice : 1), {0}, {0}};
    for (int t = 0; t < k; t++) {
        push.dims[t] = (int32_t)x->dims[t];
        push.outer_strides[t] = (int32_t)outer_strides[t];
    }
    int64_t counts[3] = {elements > outers ? elements : outers, tuples, tuples * slice};
    for (uint32_t mode = 0; mode < 3; mode++) {
        if (counts[mode] == 0) continue;
        push.count = (uint32_t)counts[mode];
        uint32_t spec[3] = {128, (uint32_t)k, mode}, gx, gy;
        op_grid_1d((uint64_t)counts[mode], 128, &gx, &gy);
        VKI_TRY(op_dispatch_stored(c, shader, spec, 3, &push, sizeof push, values, NULL, stores, 5, gx, gy, 1));
    }
    return VKI_OK;
}

static vki_status plan_scatter_nd(op_ctx *c)
{
    enum reduction red;
    VKI_TRY(common_checks(c, &red));
    plan_value *x = op_in(c, 0), *ind = op_in(c, 1), *upd = op_in(c, 2);
    int k;
    VKI_TRY(nd_shapes(c, x, ind, upd->dims, upd->rank, "updates", &k));
    int64_t tuples = shape_numel(ind->dims, ind->rank - 1), slice = shape_numel(x->dims + k, x->rank - k), outer_strides[VKI_MAX_RANK];
    contiguous_strides(x->dims, k, outer_strides);
    if (movement_folds(c)) {
        void *out = op_output_host(c, 0);
        memcpy(out, x->host, (size_t)shape_numel(x->dims, x->rank) * vki_dtype_size(x->dtype));
        for (int64_t m = 0; m < tuples; m++) {
            int64_t outer = 0;
            for (int t = 0; t < k; t++) {
                int64_t v = host_read_i64(ind->dtype, ind->host, (size_t)(m * k + t));
                outer += (v < 0 ? v + x->dims[t] : v) * outer_strides[t];
            }
            for (int64_t s = 0; s < slice; s++) host_reduce(x->dtype, red, out, outer * slice + s, upd->host, m * slice + s);
        }
        return VKI_OK;
    }
    if (red == RED_NONE && tuples > ND_GATHER_MAX_TUPLES) return scatter_nd_owned(c, k, tuples, slice, outer_strides);
    struct {
        uint32_t count, n_tuples, slice, unused;
        int32_t dims[8], outer_strides[8];
    } push = {(uint32_t)shape_numel(x->dims, x->rank), (uint32_t)tuples, (uint32_t)(slice ? slice : 1), 0, {0}, {0}};
    for (int t = 0; t < k; t++) {
        push.dims[t] = (int32_t)x->dims[t];
        push.outer_strides[t] = (int32_t)outer_strides[t];
    }
    return gpu_scatter(c, "scatter_nd", (uint32_t)k, red, &push, sizeof push);
}

/* perm (an attribute of `rank` entries, a permutation of 0..rank-1) into out; n 0: identity */
static vki_status read_perm(op_ctx *c, const char *name, int rank, bool required, int *out)
{
    const int64_t *a;
    int n = ir_attr_ints(c->node, name, &a);
    bool seen[VKI_MAX_RANK] = {false};
    if (n <= 0 && !required) {
        for (int k = 0; k < rank; k++) out[k] = k;
        return VKI_OK;
    }
    if (n != rank) return op_error(c, VKI_ERROR_MODEL, "%s has %d entries for rank %d", name, n, rank);
    for (int k = 0; k < rank; k++) {
        if (a[k] < 0 || a[k] >= rank || seen[a[k]]) return op_error(c, VKI_ERROR_MODEL, "%s is not a permutation", name);
        seen[a[k]] = true;
        out[k] = (int)a[k];
    }
    return VKI_OK;
}

/* One piece of ScatterSlices: u = input `ui`, scattered as Transpose(u, perm) by the index
 * tuples of input `ii` into y, whose element strides for the data's dims are sstr. Consecutive
 * tuples of one index each that point at consecutive rows are one copy. Marks the rows of the
 * data's first dim it writes in `covered` (tuples of one index); records the copies if `record`. */
static vki_status scatter_piece(op_ctx *c, int ii, int ui, const int *perm, const int64_t *sstr, bool fold, bool *covered,
                                bool record)
{
    plan_value *x = op_in(c, 0), *ind = op_in(c, ii), *u = op_in(c, ui);
    int r = x->rank, ur = u->rank;
    if (!ind->host) return op_error(c, VKI_ERROR_UNSUPPORTED, "indices %d are not a constant", ii);
    if (ind->dtype != VKI_DTYPE_INT32 && ind->dtype != VKI_DTYPE_INT64) return op_error(c, VKI_ERROR_MODEL, "indices must be int32 or int64");
    if (u->dtype != x->dtype) return op_error(c, VKI_ERROR_MODEL, "input %d and data differ in dtype", ui);
    int64_t ud[VKI_MAX_RANK], ustr[VKI_MAX_RANK];
    for (int m = 0; m < ur; m++) ud[m] = u->dims[perm[m]];
    char what[40];
    snprintf(what, sizeof what, "input %d, transposed,", ui);
    int k;
    VKI_TRY(nd_shapes(c, x, ind, ud, ur, what, &k));
    int lead = ind->rank - 1;
    int src = op_in_index(c, ui);
    if (record && (u->permuted || u->view_scale)) VKI_TRY(op_contiguous_copy(c, src, &src)); /* a view: its elements in order */
    contiguous_strides(u->dims, ur, ustr);
    int64_t tuples = shape_numel(ind->dims, lead);
    for (int64_t t = 0; t < tuples;) {
        int64_t out_base = 0, first = 0, len = 1;
        for (int q = 0; q < k; q++) { /* in range: nd_shapes */
            int64_t v = host_read_i64(ind->dtype, ind->host, (size_t)(t * k + q)), n = x->dims[q];
            if (q == 0) first = v < 0 ? v + n : v;
            out_base += (v < 0 ? v + n : v) * sstr[q];
        }
        /* a run: more tuples of one index each, along the last dim of the tuples' own dims */
        while (k == 1 && lead >= 1 && (t + len) % ud[lead - 1] != 0 && t + len < tuples && first + len < x->dims[0]) {
            int64_t v = host_read_i64(ind->dtype, ind->host, (size_t)(t + len));
            if ((v < 0 ? v + x->dims[0] : v) != first + len) break;
            len++;
        }
        if (k == 1)
            for (int64_t j = 0; j < len; j++) covered[first + j] = true;
        if (!record) {
            t += len;
            continue;
        }
        strided_copy s = {0};
        int64_t rest = t;
        for (int m = lead - 1; m >= 0; m--) { /* the tuple's place in u */
            s.in_base += (rest % ud[m]) * ustr[perm[m]];
            rest /= ud[m];
        }
        s.out_base = out_base;
        if (lead >= 1) {
            s.dims[s.rank] = len;
            s.in_strides[s.rank] = ustr[perm[lead - 1]];
            s.out_strides[s.rank++] = k == 1 ? sstr[0] : 0;
        }
        for (int d = 0; d < r - k; d++) {
            s.dims[s.rank] = ud[lead + d];
            s.in_strides[s.rank] = ustr[perm[lead + d]];
            s.out_strides[s.rank++] = sstr[k + d];
        }
        if (src != op_in_index(c, ui)) VKI_TRY(copy_values(c, src, op_out_index(c, 0), &s, op_storage(c, src)));
        else VKI_TRY(copy_run(c, ui, 0, &s, fold));
        t += len;
    }
    return VKI_OK;
}

static vki_status plan_scatter_slices(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 3, 5));
    int n_in = op_input_count(c);
    if (n_in == 4 || (n_in == 5 && (!op_has_input(c, 3) || !op_has_input(c, 4))))
        return op_error(c, VKI_ERROR_MODEL, "a second piece needs both its indices and its values");
    plan_value *x = op_in(c, 0);
    int r = x->rank, perm[VKI_MAX_RANK], out_perm[VKI_MAX_RANK];
    if (r < 1) return op_error(c, VKI_ERROR_SHAPE, "data must have rank >= 1");
    VKI_TRY(read_perm(c, "perm", op_in(c, 2)->rank, true, perm));
    VKI_TRY(read_perm(c, "out_perm", r, false, out_perm));
    if (n_in == 5 && op_in(c, 4)->rank != op_in(c, 2)->rank) return op_error(c, VKI_ERROR_SHAPE, "the pieces differ in rank");
    int64_t ydims[VKI_MAX_RANK], ystr[VKI_MAX_RANK], sstr[VKI_MAX_RANK];
    for (int j = 0; j < r; j++) ydims[j] = x->dims[out_perm[j]];
    VKI_TRY(op_set_output(c, 0, x->dtype, r, ydims));
    if (shape_numel(x->dims, r) == 0) return VKI_OK;
    contiguous_strides(ydims, r, ystr);
    for (int j = 0; j < r; j++) sstr[out_perm[j]] = ystr[j]; /* y's stride of the data's dim out_perm[j] */
    bool fold = movement_folds(c);
    if (fold) movement_alloc_host_outputs(c);
    /* which rows of data's first dim the pieces cover decides whether data is copied first */
    bool *covered = calloc((size_t)x->dims[0], sizeof *covered);
    if (!covered) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    vki_status st = VKI_OK;
    for (int i = 1; i < n_in && st == VKI_OK; i += 2) st = scatter_piece(c, i, i + 1, perm, sstr, fold, covered, false);
    bool all = true;
    for (int64_t j = 0; j < x->dims[0] && all; j++) all = covered[j];
    if (st == VKI_OK && !all) {
        strided_copy s = {.rank = r};
        memcpy(s.dims, x->dims, (size_t)r * sizeof *s.dims);
        contiguous_strides(x->dims, r, s.in_strides);
        memcpy(s.out_strides, sstr, (size_t)r * sizeof *sstr);
        st = copy_run(c, 0, 0, &s, fold);
    }
    for (int i = 1; i < n_in && st == VKI_OK; i += 2) st = scatter_piece(c, i, i + 1, perm, sstr, fold, covered, true);
    free(covered);
    return st;
}

#define ALL_DTYPES OP_DTYPES_ALL
const op_def op_ScatterElements = {"ScatterElements", "", ALL_DTYPES, "", plan_scatter_elements};
const op_def op_Scatter = {"Scatter", "", ALL_DTYPES, "", plan_scatter_elements};
const op_def op_ScatterND = {"ScatterND", "", ALL_DTYPES, "out-of-range index tuples are skipped on the GPU", plan_scatter_nd};
const op_def op_ScatterSlices = {"ScatterSlices", "vkinfer", ALL_DTYPES,
                                 "vkinfer's own: ScatterNDs of transposed pieces (src/plan/fuse.c); constant indices",
                                 plan_scatter_slices};
