/* Shape ops: Shape, Size, Constant, ConstantOfShape, Range and EyeLike are computed on the
 * host; Reshape, Flatten, Squeeze and Unsqueeze are views of their input (no GPU work). */
#include "movement.h"

#include <stdlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define FILL_ON_GPU_ABOVE 4096 /* ConstantOfShape: larger outputs are filled by a dispatch */

static vki_status plan_shape(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *x = op_in(c, 0);
    int64_t start = ir_attr_int(c->node, "start", 0), end = ir_attr_int(c->node, "end", x->rank);
    if (start < 0) start += x->rank;
    if (end < 0) end += x->rank;
    start = start < 0 ? 0 : start > x->rank ? x->rank : start;
    end = end < 0 ? 0 : end > x->rank ? x->rank : end;
    int64_t n = end > start ? end - start : 0;
    VKI_TRY(op_set_output(c, 0, VKI_DTYPE_INT64, 1, &n));
    int64_t *out = op_output_host(c, 0);
    for (int64_t k = 0; k < n; k++) out[k] = x->dims[start + k];
    return VKI_OK;
}

static vki_status plan_size(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *x = op_in(c, 0);
    VKI_TRY(op_set_output(c, 0, VKI_DTYPE_INT64, 0, NULL));
    int64_t *out = op_output_host(c, 0);
    *out = shape_numel(x->dims, x->rank);
    return VKI_OK;
}

/* A constant output holding a copy of `t`. */
static vki_status output_tensor(op_ctx *c, const ir_tensor *t)
{
    if (t->dtype == VKI_DTYPE_STRING) return op_error(c, VKI_ERROR_UNSUPPORTED, "string tensors are not supported");
    VKI_TRY(op_set_output(c, 0, t->dtype, t->rank, t->dims));
    void *out = op_output_host(c, 0);
    size_t bytes = (size_t)shape_numel(t->dims, t->rank) * vki_dtype_size(t->dtype);
    if (bytes && (!t->data || t->bytes < bytes)) return op_error(c, VKI_ERROR_MODEL, "the tensor has no data");
    if (bytes) memcpy(out, t->data, bytes);
    return VKI_OK;
}

static vki_status plan_constant(op_ctx *c)
{
    if (c->node->n_attrs != 1) return op_error(c, VKI_ERROR_MODEL, "Constant needs exactly one value attribute");
    const ir_attr *a = &c->node->attrs[0];
    int64_t n = a->count;
    if (!strcmp(a->name, "value") && a->type == ATTR_TENSOR) return output_tensor(c, a->tensor);
    if (!strcmp(a->name, "value_float") && a->type == ATTR_FLOAT) {
        VKI_TRY(op_set_output(c, 0, VKI_DTYPE_FLOAT, 0, NULL));
        *(float *)op_output_host(c, 0) = a->f;
        return VKI_OK;
    }
    if (!strcmp(a->name, "value_floats") && a->type == ATTR_FLOATS) {
        VKI_TRY(op_set_output(c, 0, VKI_DTYPE_FLOAT, 1, &n));
        float *out = op_output_host(c, 0);
        if (n) memcpy(out, a->floats, (size_t)n * sizeof *out);
        return VKI_OK;
    }
    if (!strcmp(a->name, "value_int") && a->type == ATTR_INT) {
        VKI_TRY(op_set_output(c, 0, VKI_DTYPE_INT64, 0, NULL));
        *(int64_t *)op_output_host(c, 0) = a->i;
        return VKI_OK;
    }
    if (!strcmp(a->name, "value_ints") && a->type == ATTR_INTS) {
        VKI_TRY(op_set_output(c, 0, VKI_DTYPE_INT64, 1, &n));
        int64_t *out = op_output_host(c, 0);
        if (n) memcpy(out, a->ints, (size_t)n * sizeof *out);
        return VKI_OK;
    }
    return op_error(c, VKI_ERROR_UNSUPPORTED, "Constant attribute '%s' is not supported (value, value_float(s) and "
                    "value_int(s) are; sparse and string constants are not)", a->name);
}

static vki_status shape_from_input(op_ctx *c, int i, int64_t *dims, int *rank)
{
    plan_value *s = op_in(c, i);
    if (s->rank != 1) return op_error(c, VKI_ERROR_SHAPE, "the shape input must be 1-D");
    VKI_TRY(op_const_ints(c, i, dims, VKI_MAX_RANK, rank));
    for (int k = 0; k < *rank; k++)
        if (dims[k] < 0) return op_error(c, VKI_ERROR_SHAPE, "the shape has a negative dimension");
    return VKI_OK;
}

static vki_status plan_constant_of_shape(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    int64_t dims[VKI_MAX_RANK];
    int rank;
    VKI_TRY(shape_from_input(c, 0, dims, &rank));
    const ir_attr *a = ir_find_attr(c->node, "value");
    vki_dtype dtype = VKI_DTYPE_FLOAT;
    const void *value = NULL;
    if (a) {
        if (a->type != ATTR_TENSOR || shape_numel(a->tensor->dims, a->tensor->rank) != 1 || !a->tensor->data)
            return op_error(c, VKI_ERROR_MODEL, "'value' must be a tensor of one element");
        dtype = a->tensor->dtype;
        value = a->tensor->data;
    }
    size_t elem = vki_dtype_size(dtype);
    if (!elem || dtype == VKI_DTYPE_STRING) return op_error(c, VKI_ERROR_UNSUPPORTED, "dtype %s is not supported", vki_dtype_name(dtype));
    VKI_TRY(op_set_output(c, 0, dtype, rank, dims));
    int64_t count = shape_numel(dims, rank);
    if (count > FILL_ON_GPU_ABOVE && dtype_gpu_supported(dtype)) {
        uint32_t bits = 0;
        size_t bad;
        if (value && !convert_to_gpu(dtype, value, &bits, 1, &bad))
            return op_error(c, VKI_ERROR_UNSUPPORTED, "the value does not fit in int32");
        if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
        struct { uint32_t count, value; } push = {(uint32_t)count, bits};
        uint32_t spec[1] = {128}, gx, gy;
        int values[1] = {op_out_index(c, 0)};
        op_grid_1d((uint64_t)count, 128, &gx, &gy);
        return op_dispatch(c, "fill", spec, 1, &push, sizeof push, values, 1, gx, gy, 1);
    }
    char *out = op_output_host(c, 0);
    for (int64_t i = 0; value && i < count; i++) memcpy(out + i * (int64_t)elem, value, elem);
    return VKI_OK;
}

/* New element strides for viewing a strided layout (dims od, strides os) with dims nd, when
 * each run of old dims that lie evenly in memory splits or merges into whole new dims;
 * false when some new dim would straddle two such runs. */
static bool restride(const int64_t *od, const int64_t *os, int orank, const int64_t *nd, int nrank, int64_t *ns)
{
    if (shape_numel(od, orank) == 0) return false;
    int v = nrank - 1;
    int64_t base = orank ? os[orank - 1] : 1, run = 1, got = 1;
    for (int t = orank - 1; t >= 0; t--) {
        run *= od[t];
        bool run_ends = t == 0 || (od[t - 1] != 1 && os[t - 1] != run * base);
        if (!run_ends) continue;
        while (v >= 0 && (got < run || nd[v] == 1)) { /* new dims inside this run */
            ns[v] = got * base;
            got *= nd[v];
            v--;
        }
        if (got != run) return false;
        if (t > 0) {
            base = os[t - 1];
            run = got = 1;
        }
    }
    for (; v >= 0; v--) { /* leading 1s */
        if (nd[v] != 1) return false;
        ns[v] = 0;
    }
    return true;
}

/* As restride, for a strided layout whose dims lie in at most two runs of even strides (after
 * merging): new dims from the innermost on, each inside one run, except at most one that takes
 * a whole inner run and the start of the next ([10,2,64] cut from [10,2,192] viewed as [10,8,16]:
 * the 8 is 2 batches 192 apart times 4 heads 16 apart). The new strides in ns (that dim's
 * outer one), the dim in *split (-1 if none), its inner count and stride. */
static bool restride_split(const int64_t *od, const int64_t *os, int orank, const int64_t *nd, int nrank, int64_t *ns,
                           int *split, int64_t *inner, int64_t *inner_stride)
{
    int64_t rs[VKI_MAX_RANK], rd[VKI_MAX_RANK]; /* runs, innermost first: (count, stride) */
    int nr = 0;
    for (int t = orank - 1; t >= 0; t--) {
        if (od[t] == 1) continue;
        if (nr > 0 && rs[nr - 1] * rd[nr - 1] == os[t]) rd[nr - 1] *= od[t];
        else rs[nr] = os[t], rd[nr++] = od[t];
    }
    *split = -1;
    int r = 0;
    for (int v = nrank - 1; v >= 0; v--) {
        if (nd[v] == 1) {
            ns[v] = 0;
            continue;
        }
        if (r >= nr) return false;
        if (rd[r] % nd[v] == 0) { /* inside this run */
            ns[v] = rs[r];
            rd[r] /= nd[v], rs[r] *= nd[v];
        } else if (*split < 0 && nd[v] % rd[r] == 0 && r + 1 < nr && rd[r + 1] % (nd[v] / rd[r]) == 0) {
            int64_t outer = nd[v] / rd[r];
            *split = v, *inner = rd[r], *inner_stride = rs[r];
            ns[v] = rs[r + 1];
            rd[r] = 1;
            rd[r + 1] /= outer, rs[r + 1] *= outer;
        } else {
            return false;
        }
        if (rd[r] == 1) r++;
    }
    return r == nr;
}

/* Whether the output of this Reshape may be a view with a split dim: a MatMul reads it alone,
 * through Transposes and a scale by a constant at most (views that carry the split), as a
 * batch dim, and the product's other operand, if planned already with a split at the same
 * batch dim, splits it alike. */
static bool split_view_ok(op_ctx *c, int split, int64_t inner)
{
    int v = op_out_index(c, 0), rank = op_out(c, 0)->rank, at = split, t, operand;
    for (int hops = 0; hops < 4 && (t = op_only_reader(c, v, "Transpose")) >= 0; hops++) {
        const ir_node *tn = op_graph_node(c, t);
        const int64_t *perm;
        if (tn->n_outputs < 1 || ir_attr_ints(tn, "perm", &perm) != rank) return false;
        int was = at;
        at = -1;
        for (int k = 0; k < rank; k++)
            if (perm[k] == was) at = k;
        v = tn->outputs[0];
    }
    bool direct;
    const ir_node *mn = op_product_reader(c, v, &operand, &direct);
    if (!mn || !direct || at < 0 || at >= rank - 2) return false;
    if (mn->n_inputs != 2 || mn->inputs[0] == mn->inputs[1]) return false;
    const plan_value *o = op_value(c, mn->inputs[mn->inputs[0] == operand ? 1 : 0]);
    if (!o->shaped || o->split_inner == 0) return true;
    int nb = (rank > o->rank ? rank : o->rank) - 2;
    return o->split_dim - (o->rank - 2 - nb) != at - (rank - 2 - nb) || o->split_inner == inner;
}

/* The output of Reshape, Flatten, Squeeze or Unsqueeze (shaped already): a view of the input,
 * keeping a permuted input's strides where the new shape allows (attention's head split
 * between a Transpose and a MatMul; with a split dim where a MatMul alone reads it, its q, k
 * or v cut from one projection at a batch above 1), else a copy of its elements in order. */
static vki_status reshape_view(op_ctx *c)
{
    plan_value *x = op_in(c, 0), *y = op_out(c, 0);
    if (!x->permuted || !y) return op_output_alias(c, 0, 0);
    int64_t ns[VKI_MAX_RANK], inner = 0, inner_stride = 0;
    int split = -1;
    bool viewable = op_storage(c, op_in_index(c, 0)) == y->storage && !x->split_inner;
    bool viewed = viewable && restride(x->dims, x->view_strides, x->rank, y->dims, y->rank, ns);
    if (!viewed && viewable && c->vk->opts.split_views && op_fusion_on(c))
        viewed = restride_split(x->dims, x->view_strides, x->rank, y->dims, y->rank, ns, &split, &inner, &inner_stride) &&
                 split >= 0 && split_view_ok(c, split, inner);
    if (viewed) {
        VKI_TRY(op_output_alias(c, 0, 0));
        if (y->alias_of >= 0) {
            y->permuted = true;
            y->view_elem = x->view_elem;
            memcpy(y->view_strides, ns, sizeof ns);
            if (split >= 0) y->split_dim = split, y->split_inner = inner, y->split_stride = inner_stride;
            return VKI_OK;
        }
    }
    strided_copy s = {0};
    int map[VKI_MAX_RANK];
    view_layout(x, &s.rank, s.dims, s.in_strides, map);
    s.in_base = x->view_elem;
    contiguous_strides(s.dims, s.rank, s.out_strides);
    return copy_values(c, op_in_index(c, 0), op_out_index(c, 0), &s, op_storage(c, op_in_index(c, 0)));
}

bool reshape_resolve(const int64_t *shape, int n, bool allowzero, const int64_t *in, int in_rank, int64_t *out,
                     char *why, size_t why_size)
{
    int infer = -1;
    int64_t known = 1;
    for (int k = 0; k < n; k++) {
        int64_t s = shape[k];
        if (s == 0 && !allowzero) {
            if (k >= in_rank) {
                snprintf(why, why_size, "shape entry %d is 0 (copy) but the input has rank %d", k, in_rank);
                return false;
            }
            s = in[k];
        } else if (s == -1) {
            if (infer >= 0) {
                snprintf(why, why_size, "the shape has more than one -1");
                return false;
            }
            infer = k;
            s = 1;
        } else if (s < 0) {
            snprintf(why, why_size, "the shape has the invalid entry %lld", (long long)s);
            return false;
        }
        out[k] = s;
        if (s && known > INT64_MAX / s) {
            snprintf(why, why_size, "the new shape's element count overflows");
            return false;
        }
        known *= s;
    }
    int64_t numel = shape_numel(in, in_rank);
    if (infer >= 0) {
        if (known == 0 || numel % known) {
            snprintf(why, why_size, "cannot infer the -1 dimension: %lld elements do not divide by %lld",
                     (long long)numel, (long long)known);
            return false;
        }
        out[infer] = numel / known;
    } else if (known != numel) {
        snprintf(why, why_size, "the new shape has %lld elements, the input %lld", (long long)known, (long long)numel);
        return false;
    }
    return true;
}

static vki_status plan_reshape(op_ctx *c)
{
    plan_value *x = op_in(c, 0);
    int64_t shape[VKI_MAX_RANK], dims[VKI_MAX_RANK];
    int n;
    if (c->opset < 5) {
        VKI_TRY(op_require_inputs(c, 1, 1));
        const int64_t *v;
        n = ir_attr_ints(c->node, "shape", &v);
        if (n < 0 || n > VKI_MAX_RANK) return op_error(c, VKI_ERROR_MODEL, "needs a 'shape' attribute of at most %d entries", VKI_MAX_RANK);
        memcpy(shape, v, (size_t)n * sizeof *v);
    } else {
        VKI_TRY(op_require_inputs(c, 2, 2));
        VKI_TRY(op_const_ints(c, 1, shape, VKI_MAX_RANK, &n));
    }
    bool allowzero = c->opset >= 14 && ir_attr_int(c->node, "allowzero", 0);
    char why[160];
    if (!reshape_resolve(shape, n, allowzero, x->dims, x->rank, dims, why, sizeof why))
        return op_error(c, VKI_ERROR_SHAPE, "%s", why);
    VKI_TRY(op_set_output(c, 0, x->dtype, n, dims));
    return reshape_view(c);
}

static vki_status plan_flatten(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *x = op_in(c, 0);
    int64_t axis = ir_attr_int(c->node, "axis", 1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis > x->rank) return op_error(c, VKI_ERROR_SHAPE, "axis is out of range for rank %d", x->rank);
    int64_t dims[2] = {shape_numel(x->dims, (int)axis), shape_numel(x->dims + axis, x->rank - (int)axis)};
    VKI_TRY(op_set_output(c, 0, x->dtype, 2, dims));
    return reshape_view(c);
}

/* Axes from the attribute (opset < 13) or the optional input 1; *count = -1 when absent. */
static vki_status read_axes(op_ctx *c, int64_t *axes, int *count)
{
    *count = -1;
    if (c->opset < 13) {
        const int64_t *v;
        int n = ir_attr_ints(c->node, "axes", &v);
        if (n > VKI_MAX_RANK) return op_error(c, VKI_ERROR_SHAPE, "too many axes");
        if (n >= 0) memcpy(axes, v, (size_t)n * sizeof *v);
        *count = n;
        return VKI_OK;
    }
    if (!op_has_input(c, 1)) return VKI_OK;
    return op_const_ints(c, 1, axes, VKI_MAX_RANK, count);
}

static vki_status plan_squeeze(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, c->opset < 13 ? 1 : 2));
    plan_value *x = op_in(c, 0);
    int64_t axes[VKI_MAX_RANK], dims[VKI_MAX_RANK];
    int n, rank = 0;
    VKI_TRY(read_axes(c, axes, &n));
    bool drop[VKI_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) {
        int a;
        VKI_TRY(op_axis(c, axes[i], x->rank, &a));
        if (x->dims[a] != 1) return op_error(c, VKI_ERROR_SHAPE, "cannot squeeze dimension %d of size %lld", a, (long long)x->dims[a]);
        drop[a] = true;
    }
    for (int k = 0; k < x->rank; k++)
        if (!(n >= 0 ? drop[k] : x->dims[k] == 1)) dims[rank++] = x->dims[k];
    VKI_TRY(op_set_output(c, 0, x->dtype, rank, dims));
    return reshape_view(c);
}

static vki_status plan_unsqueeze(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, c->opset < 13 ? 1 : 2, c->opset < 13 ? 1 : 2));
    plan_value *x = op_in(c, 0);
    int64_t axes[VKI_MAX_RANK], dims[VKI_MAX_RANK];
    int n;
    VKI_TRY(read_axes(c, axes, &n));
    if (n < 0) return op_error(c, VKI_ERROR_MODEL, "Unsqueeze needs axes");
    int rank = x->rank + n;
    if (rank > VKI_MAX_RANK) return op_error(c, VKI_ERROR_UNSUPPORTED, "the output would have rank %d; at most %d is supported", rank, VKI_MAX_RANK);
    bool added[VKI_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) {
        int a;
        VKI_TRY(op_axis(c, axes[i], rank, &a));
        if (added[a]) return op_error(c, VKI_ERROR_MODEL, "axis %d is given twice", a);
        added[a] = true;
    }
    for (int k = 0, from = 0; k < rank; k++) dims[k] = added[k] ? 1 : x->dims[from++];
    VKI_TRY(op_set_output(c, 0, x->dtype, rank, dims));
    return reshape_view(c);
}

static vki_status plan_range(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 3, 3));
    vki_dtype t = op_in(c, 0)->dtype;
    for (int i = 0; i < 3; i++) {
        plan_value *v = op_in(c, i);
        if (v->dtype != t) return op_error(c, VKI_ERROR_MODEL, "start, limit and delta must have one dtype");
        if (shape_numel(v->dims, v->rank) != 1) return op_error(c, VKI_ERROR_SHAPE, "input %d must be a scalar", i);
    }
    /* the output shape depends on the values: they must be known at plan time */
    double fv[3];
    int64_t iv[3];
    int n_read;
    for (int i = 0; i < 3; i++) {
        if (dtype_is_float(t)) VKI_TRY(op_const_floats(c, i, &fv[i], 1, &n_read));
        else VKI_TRY(op_const_ints(c, i, &iv[i], 1, &n_read));
    }
    int64_t n;
    void *out;
    if (dtype_is_float(t)) {
        double start = fv[0], limit = fv[1], delta = fv[2];
        if (delta == 0 || !isfinite(start) || !isfinite(limit) || !isfinite(delta))
            return op_error(c, VKI_ERROR_MODEL, "delta must be non-zero and the inputs finite");
        double steps = ceil((limit - start) / delta);
        n = steps > 0 ? (int64_t)steps : 0;
        VKI_TRY(op_set_output(c, 0, t, 1, &n));
        out = op_output_host(c, 0);
        for (int64_t i = 0; i < n; i++) host_write_f64(t, out, (size_t)i, start + (double)i * delta);
        return VKI_OK;
    }
    int64_t start = iv[0], limit = iv[1], delta = iv[2];
    if (delta == 0) return op_error(c, VKI_ERROR_MODEL, "delta must be non-zero");
    int64_t span = limit - start;
    n = delta > 0 ? (span > 0 ? (span + delta - 1) / delta : 0) : (span < 0 ? (-span - delta - 1) / -delta : 0);
    VKI_TRY(op_set_output(c, 0, t, 1, &n));
    out = op_output_host(c, 0);
    for (int64_t i = 0; i < n; i++) host_write_i64(t, out, (size_t)i, start + i * delta);
    return VKI_OK;
}

static vki_status plan_eye_like(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *x = op_in(c, 0);
    if (x->rank != 2) return op_error(c, VKI_ERROR_SHAPE, "the input must be 2-D");
    vki_dtype t = (vki_dtype)ir_attr_int(c->node, "dtype", x->dtype);
    if (!vki_dtype_size(t) || t == VKI_DTYPE_STRING) return op_error(c, VKI_ERROR_UNSUPPORTED, "dtype %s is not supported", vki_dtype_name(t));
    int64_t k = ir_attr_int(c->node, "k", 0);
    VKI_TRY(op_set_output(c, 0, t, 2, x->dims));
    void *out = op_output_host(c, 0); /* zeroed */
    for (int64_t r = 0; r < x->dims[0]; r++) {
        int64_t col = r + k;
        if (col >= 0 && col < x->dims[1]) host_write_i64(t, out, (size_t)(r * x->dims[1] + col), 1);
    }
    return VKI_OK;
}

#define ALL_DTYPES OP_DTYPES_ALL
const op_def op_Shape = {"Shape", "", ALL_DTYPES, "", plan_shape, OP_SHAPE_ONLY};
const op_def op_Size = {"Size", "", ALL_DTYPES, "", plan_size, OP_SHAPE_ONLY};
const op_def op_Constant = {"Constant", "", ALL_DTYPES, "sparse_value and string values are not supported",
                            plan_constant, OP_INPUT0_OPTIONAL};
const op_def op_ConstantOfShape = {"ConstantOfShape", "", ALL_DTYPES, "the shape must be a plan-time constant", plan_constant_of_shape};
const op_def op_Reshape = {"Reshape", "", ALL_DTYPES, "the shape must be a plan-time constant", plan_reshape};
const op_def op_Flatten = {"Flatten", "", ALL_DTYPES, "", plan_flatten};
const op_def op_Squeeze = {"Squeeze", "", ALL_DTYPES, "axes must be a plan-time constant", plan_squeeze};
const op_def op_Unsqueeze = {"Unsqueeze", "", ALL_DTYPES, "axes must be a plan-time constant", plan_unsqueeze};
const op_def op_Range = {"Range", "", "float32 float16 int16 int32 int64", "start, limit and delta must be plan-time constants", plan_range};
const op_def op_EyeLike = {"EyeLike", "", ALL_DTYPES, "", plan_eye_like};
