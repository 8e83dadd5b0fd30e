/* The op contract's value side (op_api.h): a node's inputs and outputs, errors that name the
 * node and its inputs, attributes and constants read at plan time, outputs as views of their
 * inputs, and scratch values. */
#include "plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int op_input_count(const op_ctx *c) { return c->node->n_inputs; }
int op_output_count(const op_ctx *c) { return c->node->n_outputs; }
bool op_has_input(const op_ctx *c, int i) { return i >= 0 && i < c->node->n_inputs && c->node->inputs[i] >= 0; }
bool op_has_output(const op_ctx *c, int i) { return i >= 0 && i < c->node->n_outputs && c->node->outputs[i] >= 0; }
int op_in_index(const op_ctx *c, int i) { return op_has_input(c, i) ? c->node->inputs[i] : -1; }
int op_out_index(const op_ctx *c, int i) { return op_has_output(c, i) ? c->node->outputs[i] : -1; }
plan_value *op_in(op_ctx *c, int i) { return op_has_input(c, i) ? &c->plan->values[c->node->inputs[i]] : NULL; }
plan_value *op_out(op_ctx *c, int i) { return op_has_output(c, i) ? &c->plan->values[c->node->outputs[i]] : NULL; }
plan_value *op_value(op_ctx *c, int v) { return &c->plan->values[v]; }

bool op_input_is_const(op_ctx *c, int i)
{
    plan_value *v = op_in(c, i);
    return v && v->host;
}

bool op_all_inputs_const(op_ctx *c)
{
    for (int i = 0; i < op_input_count(c); i++)
        if (op_has_input(c, i) && !op_input_is_const(c, i)) return false;
    return true;
}

vki_status op_error(op_ctx *c, vki_status status, const char *fmt, ...)
{
    char msg[1024], desc[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t o = 0;
    desc[0] = 0;
    for (int i = 0; i < op_input_count(c) && o < sizeof desc - 64; i++) {
        plan_value *v = op_in(c, i);
        char shape[256];
        if (!v) o += (size_t)snprintf(desc + o, sizeof desc - o, "%s-", i ? ", " : "");
        else if (!v->shaped) o += (size_t)snprintf(desc + o, sizeof desc - o, "%s?", i ? ", " : "");
        else if (v->kind == PV_SEQUENCE)
            o += (size_t)snprintf(desc + o, sizeof desc - o, "%ssequence of %d %s", i ? ", " : "", v->n_items,
                                  vki_dtype_name(v->dtype));
        else if (v->kind == PV_OPTIONAL)
            o += (size_t)snprintf(desc + o, sizeof desc - o, "%soptional (%s)", i ? ", " : "", v->n_items ? "set" : "none");
        else o += (size_t)snprintf(desc + o, sizeof desc - o, "%s%s%s", i ? ", " : "", vki_dtype_name(v->dtype),
                                   shape_str(v->dims, v->rank, shape, sizeof shape));
    }
    return vki_fail(status, "node '%s' (%s, inputs %s): %s", c->node->name, c->node->op_type, desc, msg);
}

vki_status op_require_inputs(op_ctx *c, int min, int max)
{
    int n = 0;
    for (int i = 0; i < op_input_count(c); i++) n = op_has_input(c, i) ? i + 1 : n;
    if (n < min || op_input_count(c) > max)
        return op_error(c, VKI_ERROR_MODEL, "takes %d to %d inputs, has %d", min, max, op_input_count(c));
    for (int i = 0; i < min; i++)
        if (!op_has_input(c, i)) return op_error(c, VKI_ERROR_MODEL, "input %d is required", i);
    return VKI_OK;
}

vki_status op_require_gpu_dtype(op_ctx *c, int i)
{
    plan_value *v = op_in(c, i);
    if (v && !dtype_gpu_supported(v->dtype))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "input %d has dtype %s, which vkinfer does not run on the GPU "
                        "(strings and complex are not supported)", i, vki_dtype_name(v->dtype));
    return VKI_OK;
}

vki_status op_require_float(op_ctx *c, int i)
{
    plan_value *v = op_in(c, i);
    if (v && !dtype_is_float(v->dtype))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "input %d has dtype %s; this op runs float32, float16 and bfloat16",
                        i, vki_dtype_name(v->dtype));
    return VKI_OK;
}

vki_status op_axis(op_ctx *c, int64_t axis, int rank, int *out)
{
    if (axis < -rank || axis >= (rank ? rank : 1))
        return op_error(c, VKI_ERROR_SHAPE, "axis %lld is out of range for rank %d", (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return VKI_OK;
}

vki_status op_set_output(op_ctx *c, int i, vki_dtype dtype, int rank, const int64_t *dims)
{
    plan_value *v = op_out(c, i);
    if (!v) return VKI_OK;
    if (rank < 0 || rank > VKI_MAX_RANK)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "output %d would have rank %d; at most %d is supported", i, rank, VKI_MAX_RANK);
    for (int d = 0; d < rank; d++)
        if (dims[d] < 0) return op_error(c, VKI_ERROR_SHAPE, "output %d would have negative dimension %lld", i, (long long)dims[d]);
    if (shape_numel(dims, rank) > (int64_t)1 << 40)
        return op_error(c, VKI_ERROR_SHAPE, "output %d would have more than 2^40 elements", i);
    v->dtype = dtype;
    v->storage = plan_storage_for(c->plan, op_out_index(c, i), dtype);
    v->rank = rank;
    memset(v->dims, 0, sizeof v->dims);
    if (rank) memcpy(v->dims, dims, (size_t)rank * sizeof *dims);
    v->shaped = true;
    return VKI_OK;
}

void *op_output_host(op_ctx *c, int i)
{
    plan_value *v = op_out(c, i);
    if (!v) return NULL;
    size_t bytes = (size_t)shape_numel(v->dims, v->rank) * vki_dtype_size(v->dtype);
    void *data = arena_alloc(&c->plan->arena, bytes ? bytes : 1);
    v->host = data;
    v->host_bytes = bytes;
    return data;
}

void *op_temp_state(op_ctx *c, vki_dtype dtype, int64_t numel, int *index)
{
    void *data = op_temp_const(c, dtype, numel, index);
    if (data) op_value(c, *index)->kernel_state = true;
    return data;
}

vki_status op_output_alias(op_ctx *c, int out, int in)
{
    plan_value *o = op_out(c, out), *i = op_in(c, in);
    if (!o) return VKI_OK;
    if (shape_numel(o->dims, o->rank) != shape_numel(i->dims, i->rank))
        return op_error(c, VKI_ERROR_SHAPE, "internal: a view must keep the element count");
    if (i->host) { /* a view of a constant is a constant */
        o->host = i->host;
        o->host_bytes = i->host_bytes;
        return VKI_OK;
    }
    int root = plan_root(c->plan, op_in_index(c, in));
    if (c->plan->values[root].storage != o->storage) /* e.g. a graph output (host layout) viewing a half value */
        return plan_record_convert(c, i->view_offset ? op_in_index(c, in) : root, c->plan->values[root].storage,
                                   op_out_index(c, out), o->storage, shape_numel(o->dims, o->rank));
    o->alias_of = op_in_index(c, in);
    o->view_offset = i->view_offset;
    return VKI_OK;
}

/* Offsets of views: a multiple of both binding alignments, so that any kernel can bind one
 * (storage buffers, and the CPU kernels' texel buffers). */
static uint64_t view_alignment(const op_ctx *c)
{
    uint64_t a = op_binding_alignment(c), t = c->plan->vk->caps.props.limits.minTexelBufferOffsetAlignment;
    if (!t) t = 1;
    uint64_t hi = a > t ? a : t, lo = a > t ? t : a;
    return hi % lo ? a * t : hi; /* both are powers of two on every device seen */
}

bool op_output_offset_view(op_ctx *c, int out, int in, int64_t first)
{
    plan_value *o = op_out(c, out), *i = op_in(c, in);
    int ov = op_out_index(c, out);
    if (!o || !i || i->host || i->permuted || c->plan->no_fusion || first < 0) return false;
    if (ov < c->plan->graph->n_values && c->plan->graph->values[ov].is_output) return false;
    plan_value *root = &c->plan->values[plan_root(c->plan, op_in_index(c, in))];
    if (root->storage != o->storage || o->dtype != i->dtype) return false;
    int64_t numel = shape_numel(o->dims, o->rank);
    if (numel <= 0 || first + numel > shape_numel(i->dims, i->rank)) return false;
    uint64_t offset = i->view_offset + (uint64_t)first * storage_size(root->storage);
    if (offset % view_alignment(c)) return false;
    o->alias_of = op_in_index(c, in);
    o->view_offset = offset;
    return true;
}

vki_status op_temp(op_ctx *c, vki_dtype dtype, int64_t numel, int *index)
{
    plan *p = c->plan;
    *index = -1; /* set on failure too: gcc -O2 cannot tell that op_error never returns VKI_OK */
    if (p->n_values >= p->cap_values) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "too many scratch values");
    int v = p->n_values++;
    plan_value *pv = &p->values[v];
    memset(pv, 0, sizeof *pv);
    pv->alias_of = -1;
    pv->first_use = pv->last_use = -1;
    pv->dtype = dtype;
    pv->storage = GPU_W32;
    pv->rank = 1;
    pv->dims[0] = numel;
    pv->shaped = true;
    p->temp_owner[v] = c->node_index;
    *index = v;
    return VKI_OK;
}

vki_status op_attr_ints_n(op_ctx *c, const char *name, int n, int64_t fill, int64_t lo, int64_t hi, int64_t *out)
{
    const int64_t *v;
    int count = ir_attr_ints(c->node, name, &v);
    for (int i = 0; i < n; i++) out[i] = fill;
    if (count < 0) return VKI_OK;
    if (count != n) return op_error(c, VKI_ERROR_MODEL, "'%s' has %d values, expected %d", name, count, n);
    for (int i = 0; i < n; i++) {
        if (v[i] < lo || v[i] > hi)
            return op_error(c, VKI_ERROR_MODEL, "'%s' value %lld is outside [%lld, %lld]", name, (long long)v[i], (long long)lo,
                            (long long)hi);
        out[i] = v[i];
    }
    return VKI_OK;
}

bool op_const_scalar(op_ctx *c, int i, double *out) { return op_has_input(c, i) && plan_const_scalar(c->plan, op_in_index(c, i), out); }

bool op_broadcasts_within(const plan_value *o, const int64_t *dims, int rank)
{
    if (o->rank > rank) return false;
    for (int d = 0; d < o->rank; d++) {
        int64_t od = o->dims[o->rank - 1 - d];
        if (od != dims[rank - 1 - d] && od != 1) return false;
    }
    return true;
}

void *op_temp_const(op_ctx *c, vki_dtype dtype, int64_t numel, int *index)
{
    if (op_temp(c, dtype, numel, index) != VKI_OK) return NULL;
    plan_value *v = op_value(c, *index);
    size_t bytes = (size_t)numel * vki_dtype_size(dtype);
    void *data = arena_alloc(&c->plan->arena, bytes ? bytes : 1);
    if (!data) return NULL;
    v->host = data;
    v->host_bytes = bytes;
    return data;
}

int op_keyable_input(const plan *p, int v)
{
    const ir_graph *g = p->graph;
    bool *seen = calloc((size_t)g->n_values + 1, 1);
    int *stack = malloc(((size_t)g->n_values + 1) * sizeof *stack);
    int found = -1, top = 0;
    if (!seen || !stack) goto done;
    stack[top++] = v;
    seen[v] = true;
    while (top > 0 && found < 0) {
        int u = stack[--top];
        const ir_value *iv = &g->values[u];
        const plan_value *pv = &p->values[u];
        if (pv->host || pv->kind != PV_TENSOR) continue;
        if (iv->kind == VALUE_INPUT) {
            int64_t numel = shape_numel(pv->dims, pv->rank);
            if ((dtype_is_int(pv->dtype) && numel <= 1024) || numel <= 8)
                for (int k = 0; k < g->n_inputs; k++)
                    if (g->inputs[k] == u && !p->keyed[k]) found = k;
            continue;
        }
        if (iv->producer < 0) continue;
        const ir_node *n = &g->nodes[iv->producer];
        for (int i = 0; i < n->n_inputs; i++) {
            int w = n->inputs[i];
            if (w >= 0 && !seen[w]) {
                seen[w] = true;
                stack[top++] = w;
            }
        }
    }
done:
    free(seen);
    free(stack);
    return found;
}

static vki_status read_const(op_ctx *c, int i, int max, int *count, int64_t *ints, double *floats)
{
    plan_value *v = op_in(c, i);
    if (!v) return op_error(c, VKI_ERROR_MODEL, "input %d is required", i);
    if (v->shaped && shape_numel(v->dims, v->rank) == 0) { /* empty: nothing to know */
        *count = 0;
        return VKI_OK;
    }
    int vi = op_in_index(c, i);
    const ir_graph *g = c->plan->graph;
    /* integer inputs up to 1024 elements (shapes, axes, starts) and float scalars (Range's
     * bounds, OneHot's depth) may key the plan */
    (void)g;
    if (!v->host) {
        int k = op_keyable_input(c->plan, vi);
        if (k >= 0) c->plan->wanted_input = k; /* the session may plan again for its value */
    }
    if (!v->host)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "input %d ('%s') must be known at plan time (an initializer, a Constant, "
                        "or computed from shapes); vkinfer does not support data-dependent shapes here",
                        i, c->plan->graph->values[op_in_index(c, i)].name);
    int64_t n = shape_numel(v->dims, v->rank);
    if (n > max) return op_error(c, VKI_ERROR_UNSUPPORTED, "input %d has %lld elements; at most %d are supported", i, (long long)n, max);
    for (int64_t k = 0; k < n; k++) {
        if (ints) ints[k] = host_read_i64(v->dtype, v->host, (size_t)k);
        if (floats) floats[k] = host_read_f64(v->dtype, v->host, (size_t)k);
    }
    *count = (int)n;
    return VKI_OK;
}

vki_status op_const_ints(op_ctx *c, int i, int64_t *out, int max, int *count)
{
    return read_const(c, i, max, count, out, NULL);
}

vki_status op_const_floats(op_ctx *c, int i, double *out, int max, int *count)
{
    return read_const(c, i, max, count, NULL, out);
}
