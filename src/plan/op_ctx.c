/* The planner's side of the op contract (op_api.h). */
#include "plan.h"

#include <math.h>
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

static vki_status record_convert(op_ctx *c, int src, gpu_storage from, int dst, gpu_storage to, int64_t numel);

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
        return record_convert(c, i->view_offset ? op_in_index(c, in) : root, c->plan->values[root].storage,
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

/* The node that alone reads value v, `reads` times (once; twice where it takes v as two of
 * its operands) (as itself or as a pattern of src/plan/fuse.c),
 * where v is a float value that is not a graph output, fusion is on and that node is not
 * claimed yet: its index; -1 otherwise. With dims_read, Shape and Size nodes may read v too
 * (they need only its dims, which a view or an epilogue keeps). */
static int claimable_reader(const plan *p, int v, bool dims_read, int reads)
{
    const ir_graph *g = p->graph;
    if (p->no_fusion || v < 0 || v >= g->n_values || g->values[v].is_output ||
        p->uses[v] - (dims_read ? p->shape_reads[v] : 0) != reads || (!dims_read && p->shape_reads[v]) ||
        (p->values[v].shaped && !dtype_is_float(p->values[v].dtype)))
        return -1;
    int n = p->reader[v];
    return p->fused[n] ? -1 : n;
}

/* The node that alone reads the elements of value v, `reads` times (Shape and Size may read its dims
 * too: PyTorch's attention computes its scale from the query's shape), where v is a float
 * value that is not a graph output and that node is planned as itself (no part of a pattern
 * of src/plan/fuse.c): its index; -1 otherwise. v is unshaped when it is the output of a node claimed just now
 * (op_fused_output), whose dtype is the claiming kernel's. */
static int sole_reader(const plan *p, int v, int reads)
{
    int n = claimable_reader(p, v, true, reads);
    const ir_graph *g = p->graph;
    if (n < 0 || p->pattern[n] != PATTERN_NONE || *g->nodes[n].domain || g->nodes[n].n_outputs < 1 ||
        g->nodes[n].outputs[0] < 0)
        return -1;
    return n;
}

/* node n's Scale, B, epsilon and axis where it is a LayerNormalization (or the nine-node
 * pattern) with X = v and its statistics unread: n; -1 otherwise */
static int layer_norm_node(const plan *p, int n, int v, int *scale, int *bias, float *eps, int64_t *axis)
{
    if (n < 0) return -1;
    const ir_node *node = &p->graph->nodes[n];
    if (p->pattern[n] == PATTERN_LAYER_NORM) { /* opset < 17's nine nodes (src/plan/fuse.c) */
        if (p->pattern_in[(size_t)n * PATTERN_INPUTS] != v) return -1;
        *scale = p->pattern_in[(size_t)n * PATTERN_INPUTS + 1];
        *bias = p->pattern_in[(size_t)n * PATTERN_INPUTS + 2];
        *eps = p->pattern_eps[n];
        *axis = -1;
        return n;
    }
    if (p->pattern[n] != PATTERN_NONE || *node->domain || strcmp(node->op_type, "LayerNormalization") ||
        node->n_inputs < 2 || node->inputs[0] != v)
        return -1;
    for (int o = 1; o < node->n_outputs; o++)
        if (node->outputs[o] >= 0) return -1; /* its statistics are read */
    if (node->n_outputs < 1 || node->outputs[0] < 0) return -1;
    *scale = node->inputs[1];
    *bias = node->n_inputs > 2 ? node->inputs[2] : -1;
    *eps = ir_attr_float(node, "epsilon", 1e-5f);
    *axis = ir_attr_int(node, "axis", -1);
    return n;
}

int op_layer_norm_reader(op_ctx *c, int v, int *scale, int *bias, float *eps, int64_t *axis)
{
    return layer_norm_node(c->plan, claimable_reader(c->plan, v, false, 1), v, scale, bias, eps, axis);
}

int op_layer_norm_any_reader(op_ctx *c, int v, int *scale, int *bias, float *eps, int64_t *axis)
{
    plan *p = c->plan;
    if (p->no_fusion || v < 0 || v >= p->graph->n_values || p->ln_reader[v] < 0 || p->fused[p->ln_reader[v]]) return -1;
    return layer_norm_node(p, p->ln_reader[v], v, scale, bias, eps, axis);
}

vki_status op_claim_computed(op_ctx *c, int node, vki_dtype dtype, int rank, const int64_t *dims)
{
    if (c->n_computed >= OP_MAX_COMPUTED) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: too many claimed outputs");
    const ir_node *saved = c->node;
    c->node = &c->plan->graph->nodes[node];
    vki_status st = op_set_output(c, 0, dtype, rank, dims);
    c->node = saved;
    if (st == VKI_OK) {
        c->plan->fused[node] = PLAN_FUSED_DONE;
        c->computed[c->n_computed++] = c->plan->graph->nodes[node].outputs[0];
    }
    return st;
}

void op_fuse_claim_input0(op_ctx *c, int node) { c->plan->fused[node] = 1; }

/* Whether value s is a finite constant scalar (nonzero for a divisor), or not planned yet but
 * made from dims only (p->from_dims): then it will be a host constant, most likely a scalar,
 * and a Mul or Div that finds otherwise reads its permuted input through a copy
 * (src/ops/binary.c). */
static bool constant_scale(const plan *p, int s, bool divisor)
{
    double f;
    if (plan_const_scalar(p, s, &f)) return isfinite(f) && (f != 0 || !divisor);
    return s >= 0 && !p->values[s].shaped && p->from_dims[s];
}

/* Whether node n is a Mul or Div of value v by a constant scalar (v first for Div). */
static bool scales_by_constant(const plan *p, int n, int v)
{
    const ir_node *nd = &p->graph->nodes[n];
    if (nd->n_inputs != 2 || (strcmp(nd->op_type, "Mul") && strcmp(nd->op_type, "Div"))) return false;
    if (nd->inputs[0] == v) return constant_scale(p, nd->inputs[1], !strcmp(nd->op_type, "Div"));
    return !strcmp(nd->op_type, "Mul") && nd->inputs[1] == v && constant_scale(p, nd->inputs[0], false);
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

bool op_fusion_on(const op_ctx *c) { return !c->plan->no_fusion; }

const ir_node *op_product_reader(op_ctx *c, int v, int *operand, bool *direct)
{
    plan *p = c->plan;
    *direct = true;
    for (int depth = 0; depth < 8; depth++) { /* a chain of views, each the sole reader */
        int n = sole_reader(p, v, 1);
        if (n < 0) return NULL;
        const ir_node *nd = &p->graph->nodes[n];
        if (!strcmp(nd->op_type, "MatMul")) {
            *operand = v;
            return nd;
        }
        bool reshape = nd->n_inputs >= 1 && nd->inputs[0] == v &&
                       (!strcmp(nd->op_type, "Reshape") || !strcmp(nd->op_type, "Flatten") ||
                        !strcmp(nd->op_type, "Squeeze") || !strcmp(nd->op_type, "Unsqueeze") ||
                        !strcmp(nd->op_type, "Transpose"));
        if (reshape) {
            *direct = false;
            v = nd->outputs[0];
            continue;
        }
        /* a scale comes last, right before the product (op_output_scaled_view's condition) */
        if (!scales_by_constant(p, n, v)) return NULL;
        v = nd->outputs[0];
        n = sole_reader(p, v, 1);
        if (n < 0 || strcmp(p->graph->nodes[n].op_type, "MatMul")) return NULL;
        *operand = v;
        return &p->graph->nodes[n];
    }
    return NULL;
}

/* Whether value v is one index known at plan time: a planned host value of one element, or the
 * output of a Constant node (planned later) holding one */
static bool one_constant_index(const plan *p, int v)
{
    const ir_graph *g = p->graph;
    if (v < 0 || v >= g->n_values) return false;
    const plan_value *pv = &p->values[v];
    if (pv->shaped) return pv->host && shape_numel(pv->dims, pv->rank) == 1;
    if (g->values[v].producer < 0) return false;
    const ir_node *nd = &g->nodes[g->values[v].producer];
    const ir_attr *a = strcmp(nd->op_type, "Constant") ? NULL : ir_find_attr(nd, "value");
    return a && a->type == ATTR_TENSOR && a->tensor && shape_numel(a->tensor->dims, a->tensor->rank) == 1;
}

bool op_gather_split_readers(op_ctx *c, int v)
{
    plan *p = c->plan;
    const ir_graph *g = p->graph;
    if (!op_fusion_on(c) || !c->vk->opts.split_views) return false;
    for (int depth = 0; depth < 4; depth++) {
        int n = sole_reader(p, v, 1);
        if (n < 0) break;
        const ir_node *nd = &g->nodes[n];
        if ((strcmp(nd->op_type, "Squeeze") && strcmp(nd->op_type, "Unsqueeze")) || nd->inputs[0] != v) break;
        v = nd->outputs[0];
    }
    if (v < 0 || v >= g->n_values || g->values[v].is_output || p->shape_reads[v] || p->uses[v] < 1 || p->uses[v] > 8)
        return false;
    int found = 0;
    for (int n = c->node_index + 1; n < g->n_nodes && n <= c->node_index + 64 && found < p->uses[v]; n++) {
        const ir_node *nd = &g->nodes[n];
        bool reads = false;
        for (int i = 0; i < nd->n_inputs; i++) reads |= nd->inputs[i] == v;
        if (!reads) continue;
        if (strcmp(nd->op_type, "Gather") || *nd->domain || p->pattern[n] != PATTERN_NONE || p->fused[n] ||
            nd->n_inputs != 2 || nd->inputs[0] != v || nd->inputs[1] == v || ir_attr_int(nd, "axis", 0) != 0 ||
            nd->n_outputs < 1 || nd->outputs[0] < 0 || !one_constant_index(p, nd->inputs[1]))
            return false;
        int operand;
        bool direct;
        if (!op_product_reader(c, nd->outputs[0], &operand, &direct)) return false;
        found++;
    }
    return found == p->uses[v];
}

bool op_output_scaled_view(op_ctx *c, int in, double scale)
{
    plan_value *o = op_out(c, 0), *i = op_in(c, in);
    if (!o || !i || i->host || !isfinite(scale) || !op_read_only_by(c, op_out_index(c, 0), "MatMul"))
        return false;
    if (o->rank != i->rank || memcmp(o->dims, i->dims, (size_t)i->rank * sizeof *i->dims) || o->dtype != i->dtype)
        return false;
    if (c->plan->values[plan_root(c->plan, op_in_index(c, in))].storage != o->storage) return false;
    o->alias_of = op_in_index(c, in);
    o->view_offset = i->view_offset;
    o->permuted = i->permuted;
    o->view_elem = i->view_elem;
    memcpy(o->view_strides, i->view_strides, sizeof o->view_strides);
    o->split_dim = i->split_dim, o->split_inner = i->split_inner, o->split_stride = i->split_stride;
    o->view_scale = (float)((i->view_scale ? i->view_scale : 1.0) * scale);
    return true;
}

int op_only_reader(op_ctx *c, int v, const char *op_type)
{
    int n = sole_reader(c->plan, v, 1);
    return n >= 0 && !strcmp(c->plan->graph->nodes[n].op_type, op_type) ? n : -1;
}

bool op_read_only_by(op_ctx *c, int v, const char *op_type) { return op_only_reader(c, v, op_type) >= 0; }

bool op_cpu_kernels(const op_ctx *c, int force)
{
    if (force == OPT_KERNELS_GPU) return false;
    if (force == OPT_KERNELS_CPU) return true;
    return c->vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

bool op_broadcasts_within(const plan_value *o, const int64_t *dims, int rank)
{
    if (o->rank > rank) return false;
    for (int d = 0; d < o->rank; d++) {
        int64_t od = o->dims[o->rank - 1 - d];
        if (od != dims[rank - 1 - d] && od != 1) return false;
    }
    return true;
}

/* op_arithmetic_reader (reads 1) and op_square_reader (reads 2: the node's two operands) */
static int arithmetic_reader(op_ctx *c, int v, int reads, int *code)
{
    static const char *const names[4] = {"Add", "Sub", "Mul", "Div"};
    int n = sole_reader(c->plan, v, reads);
    if (n < 0) return -1;
    const ir_node *nd = &c->plan->graph->nodes[n];
    if (reads == 2 && (nd->n_inputs != 2 || nd->inputs[0] != v || nd->inputs[1] != v)) return -1;
    for (int k = 0; k < 4; k++)
        if (!strcmp(nd->op_type, names[k])) {
            if (code) *code = k;
            return n;
        }
    return -1;
}

int op_arithmetic_reader(op_ctx *c, int v, int *code) { return arithmetic_reader(c, v, 1, code); }

int op_square_reader(op_ctx *c, int v, int *code) { return arithmetic_reader(c, v, 2, code); }

const ir_node *op_graph_node(op_ctx *c, int n) { return &c->plan->graph->nodes[n]; }

int op_value_producer(op_ctx *c, int v)
{
    const ir_graph *g = c->plan->graph;
    return v >= 0 && v < g->n_values ? g->values[v].producer : -1;
}

void op_fuse_claim(op_ctx *c, int node, int v)
{
    const ir_node *nd = &c->plan->graph->nodes[node];
    for (int i = 0; i < nd->n_inputs; i++)
        if (nd->inputs[i] == v) {
            c->plan->fused[node] = i + 1;
            return;
        }
}

int op_fused_output(const op_ctx *c, int node) { return c->plan->graph->nodes[node].outputs[0]; }

bool op_fuse_clamp_value(op_ctx *c, int v, float *lo, float *hi)
{
    plan *p = c->plan;
    const ir_graph *g = p->graph;
    int n = sole_reader(p, v, 1);
    if (n < 0) return false;
    const ir_node *node = &g->nodes[n];
    if (node->n_inputs < 1 || node->inputs[0] != v) return false;
    float l = -INFINITY, h = INFINITY;
    if (!strcmp(node->op_type, "Relu")) {
        l = 0;
    } else if (!strcmp(node->op_type, "Clip")) {
        if (g->opset < 11) {
            l = ir_attr_float(node, "min", -INFINITY);
            h = ir_attr_float(node, "max", INFINITY);
        }
        for (int k = 1; k <= 2 && k < node->n_inputs; k++) {
            int b = node->inputs[k];
            if (b < 0) continue;
            double f;
            if (!plan_const_scalar(p, b, &f)) return false;
            if (k == 1) l = (float)f;
            else h = (float)f;
        }
    } else {
        return false;
    }
    op_fuse_claim(c, n, v);
    *lo = l > h ? h : l; /* the same result (h), and lo > hi means an activation (fused_clamp) */
    *hi = h;
    return true;
}

bool op_fuse_activation_value(op_ctx *c, int v, float *lo, float *hi)
{
    if (op_fuse_clamp_value(c, v, lo, hi)) return true;
    plan *p = c->plan;
    int n = claimable_reader(p, v, false, 1);
    if (n < 0) return false;
    const ir_node *node = &p->graph->nodes[n];
    bool own = p->pattern[n] == PATTERN_NONE && !*node->domain && node->n_inputs >= 1 && node->inputs[0] == v;
    /* shaders/common.glsl's fused_clamp: 0 erf GELU, 1 tanh GELU, 2 SiLU, 3 Sigmoid, 4 ELU, 5 Mish, 6 Tanh */
    float code;
    if (p->pattern[n] == PATTERN_GELU || p->pattern[n] == PATTERN_GELU_TANH || p->pattern[n] == PATTERN_SILU ||
        p->pattern[n] == PATTERN_MISH) {
        /* src/plan/fuse.c's erf/tanh GELU, Mul(x, Sigmoid(x)), Mul(x, Tanh(Softplus(x))) */
        if (p->pattern_in[(size_t)n * PATTERN_INPUTS] != v) return false;
        code = p->pattern[n] == PATTERN_GELU ? 0.0f : p->pattern[n] == PATTERN_GELU_TANH ? 1.0f
             : p->pattern[n] == PATTERN_SILU ? 2.0f : 5.0f;
    } else if (own && !strcmp(node->op_type, "Gelu")) { /* opset 20's Gelu */
        code = !strcmp(ir_attr_string(node, "approximate", "none"), "tanh") ? 1.0f : 0.0f;
    } else if (own && !strcmp(node->op_type, "Swish") && ir_attr_float(node, "alpha", 1.0f) == 1.0f) { /* opset 24 */
        code = 2.0f;
    } else if (own && !strcmp(node->op_type, "Sigmoid")) {
        code = 3.0f;
    } else if (own && !strcmp(node->op_type, "Elu") && ir_attr_float(node, "alpha", 1.0f) == 1.0f) {
        code = 4.0f;
    } else if (own && !strcmp(node->op_type, "Mish")) { /* opset 18 */
        code = 5.0f;
    } else if (own && !strcmp(node->op_type, "Tanh")) {
        code = 6.0f;
    } else {
        return false;
    }
    op_fuse_claim_input0(c, n);
    *lo = INFINITY;
    *hi = code;
    return true;
}

uint32_t op_act_code(bool fused, float lo, float hi)
{
    if (!fused) return 0;
    if (lo <= hi) return 1;
    return hi == 0.0f ? 7 : hi == 1.0f ? 8 : (uint32_t)hi; /* 2 SiLU ... 6 Tanh, as fused_clamp decodes them */
}

bool op_fuse_clamp(op_ctx *c, int out, float *lo, float *hi)
{
    return op_fuse_clamp_value(c, op_out_index(c, out), lo, hi);
}

bool op_fuse_activation(op_ctx *c, int out, float *lo, float *hi)
{
    return op_fuse_activation_value(c, out == 0 ? op_epilogue_value(c) : op_out_index(c, out), lo, hi);
}

int op_epilogue_value(const op_ctx *c) { return c->epilogue_from > 0 ? c->epilogue_from - 1 : op_out_index(c, 0); }

int op_fuse_add_find(op_ctx *c, int v, int *other)
{
    plan *p = c->plan;
    int n = sole_reader(p, v, 1);
    if (n < 0) return -1;
    const ir_node *node = &p->graph->nodes[n];
    if (strcmp(node->op_type, "Add") || node->n_inputs != 2) return -1;
    int o = node->inputs[0] == v ? node->inputs[1] : node->inputs[0];
    if (o < 0 || o == v) return -1;
    /* v may be the output of a node claimed already (a bias Add before this residual Add),
     * which is shaped only when it is planned: a view of the value it was claimed on, whose
     * shape it keeps (op_fuse_add_find never lets a claimed Add grow it) */
    int shaped_v = v;
    for (int hops = 0; hops < 8 && !p->values[shaped_v].shaped; hops++) {
        int prod = op_value_producer(c, shaped_v);
        if (prod < 0 || p->fused[prod] <= 0) break;
        shaped_v = p->graph->nodes[prod].inputs[p->fused[prod] - 1];
    }
    const plan_value *x = &p->values[shaped_v], *ov = &p->values[o];
    if (!x->shaped) return -1;
    /* known now: an initializer, a folded constant or the output of a node planned earlier */
    if (!ov->shaped || ov->dtype != x->dtype || ov->permuted || ov->view_scale) return -1;
    if (!op_broadcasts_within(ov, x->dims, x->rank)) return -1; /* broadcasting must not grow v */
    *other = o;
    return n;
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

vki_status op_pack_words(op_ctx *c, const int *ins, const uint32_t *counts, int *out)
{
    int dummy;
    VKI_TRY(op_temp(c, VKI_DTYPE_INT32, 1, &dummy));
    uint32_t total = counts[0] + counts[1] + counts[2];
    VKI_TRY(op_temp(c, VKI_DTYPE_INT32, total ? total : 1, out));
    if (!total) return VKI_OK;
    int values[4] = {ins[0] >= 0 ? op_in_index(c, ins[0]) : dummy, ins[1] >= 0 ? op_in_index(c, ins[1]) : dummy,
                     ins[2] >= 0 ? op_in_index(c, ins[2]) : dummy, *out};
    uint32_t spec[1] = {64}, gx, gy;
    op_grid_1d(total, 64, &gx, &gy);
    return op_dispatch(c, "pack_words", spec, 1, counts, 3 * sizeof *counts, values, 4, gx, gy, 1);
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

void op_grid_1d(uint64_t count, uint32_t local, uint32_t *gx, uint32_t *gy)
{
    uint64_t groups = (count + local - 1) / local;
    if (groups <= 65535) {
        *gx = (uint32_t)groups;
        *gy = groups ? 1 : 0;
    } else {
        *gx = 65535;
        *gy = (uint32_t)((groups + 65534) / 65535);
    }
}

uint32_t op_grid_elementwise(op_ctx *c, uint64_t count, uint32_t local, uint32_t *gx, uint32_t *gy)
{
    /* VKINFER_ELEMENTWISE_GROUPS=N: tuning, and the tests of the loop on lavapipe (0: none) */
    int64_t groups_opt = c->vk->opts.elementwise_groups;
    uint64_t cap = groups_opt != OPT_AUTO ? (uint64_t)groups_opt
                 : c->vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 0 : OP_ELEMENTWISE_GROUPS;
    if (!cap) {
        op_grid_1d(count, local, gx, gy);
        return 0;
    }
    uint64_t groups = (count + local - 1) / local;
    if (groups > cap) count = cap * local;
    op_grid_1d(count, local, gx, gy);
    return 1;
}

uint32_t op_dtype_code(vki_dtype t)
{
    switch (t) {
    case VKI_DTYPE_FLOAT: return 0;
    case VKI_DTYPE_FLOAT16: return 1;
    case VKI_DTYPE_BFLOAT16: return 2;
    case VKI_DTYPE_UINT8: return 4;
    case VKI_DTYPE_INT8: return 5;
    case VKI_DTYPE_UINT16: return 6;
    case VKI_DTYPE_INT16: return 7;
    case VKI_DTYPE_BOOL: return 8;
    case VKI_DTYPE_DOUBLE: case VKI_DTYPE_FLOAT8E4M3FN: case VKI_DTYPE_FLOAT8E4M3FNUZ: case VKI_DTYPE_FLOAT8E5M2:
    case VKI_DTYPE_FLOAT8E5M2FNUZ: case VKI_DTYPE_FLOAT4E2M1: case VKI_DTYPE_FLOAT8E8M0: case VKI_DTYPE_FLOAT6E2M3:
    case VKI_DTYPE_FLOAT6E3M2: return 0; /* held as float32 words (exact, or float64 narrowed) */
    default: return 3; /* int32; int64, uint32, uint64 (narrowed), the 4- and 2-bit ints (widened) */
    }
}

uint32_t op_dtype_code_exact(vki_dtype t)
{
    switch (t) {
    case VKI_DTYPE_INT4: return 9;
    case VKI_DTYPE_UINT4: return 10;
    case VKI_DTYPE_INT2: return 11;
    case VKI_DTYPE_UINT2: return 12;
    case VKI_DTYPE_FLOAT8E4M3FN: return 16;
    case VKI_DTYPE_FLOAT8E4M3FNUZ: return 17;
    case VKI_DTYPE_FLOAT8E5M2: return 18;
    case VKI_DTYPE_FLOAT8E5M2FNUZ: return 19;
    case VKI_DTYPE_FLOAT4E2M1: return 20;
    case VKI_DTYPE_FLOAT8E8M0: return 21;
    case VKI_DTYPE_FLOAT6E2M3: return 22;
    case VKI_DTYPE_FLOAT6E3M2: return 23;
    default: return op_dtype_code(t);
    }
}

uint64_t op_max_binding_bytes(const op_ctx *c) { return c->plan->vk->caps.max_storage_buffer_range; }

uint64_t op_binding_alignment(const op_ctx *c)
{
    uint64_t a = c->plan->vk->caps.min_storage_offset_alignment;
    return a < 4 ? 4 : a;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int64_t op_batch_chunk(const op_ctx *c, int64_t items, const uint64_t *item_bytes, int n)
{
    if (items <= 0) return 1; /* nothing to split: any chunk size does, and no loop runs */
    uint64_t range = op_max_binding_bytes(c), align = op_binding_alignment(c);
    int64_t chunk = items, step = 1;
    for (int i = 0; i < n; i++) {
        if (!item_bytes[i]) continue;
        if (item_bytes[i] > range) return 0;
        int64_t fit = (int64_t)(range / item_bytes[i]);
        if (fit < chunk) chunk = fit;
        /* chunk * item_bytes must be a multiple of align */
        int64_t need = (int64_t)(align / gcd64(align, item_bytes[i]));
        step = step / (int64_t)gcd64((uint64_t)step, (uint64_t)need) * need;
    }
    if (chunk >= items) return items;
    chunk = chunk / step * step;
    return chunk;
}

/* Appends one dispatch as given: no storage conversion. writes[i]: binding i is written. */
static vki_status push_dispatch(op_ctx *c, const char *shader_name, const uint32_t *spec, uint32_t n_spec,
                                const void *push, uint32_t push_bytes, const int *values, const op_window *windows,
                                const bool *writes, int n_values, uint32_t gx, uint32_t gy, uint32_t gz)
{
    plan *p = c->plan;
    if (gx == 0 || gy == 0 || gz == 0) return VKI_OK;
    const vk_shader *shader = vk_shader_find(shader_name);
    if (!shader) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: shader '%s' is not built in", shader_name);
    if ((int)shader->bindings != n_values)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: shader '%s' has %u bindings, %d given", shader_name, shader->bindings, n_values);
    if (push_bytes > VK_PUSH_BYTES) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: push constants too large");
    const VkPhysicalDeviceLimits *lim = &p->vk->caps.props.limits;
    if (gx > lim->maxComputeWorkGroupCount[0] || gy > lim->maxComputeWorkGroupCount[1] || gz > lim->maxComputeWorkGroupCount[2])
        return op_error(c, VKI_ERROR_UNSUPPORTED, "grid %ux%ux%u exceeds the device's workgroup count limits", gx, gy, gz);
    if (p->n_dispatches == p->cap_dispatches) {
        int cap = p->cap_dispatches ? p->cap_dispatches * 2 : 256;
        plan_dispatch *d = realloc(p->dispatches, (size_t)cap * sizeof *d);
        if (!d) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        p->dispatches = d;
        p->cap_dispatches = cap;
    }
    plan_dispatch *d = &p->dispatches[p->n_dispatches];
    memset(d, 0, sizeof *d);
    vki_status st = vk_pipeline_get(p->vk, shader, spec, n_spec, &d->pipeline);
    if (st != VKI_OK) return vki_fail_prefix(st, "node '%s' (%s): ", c->node->name, c->node->op_type);
    d->groups[0] = gx;
    d->groups[1] = gy;
    d->groups[2] = gz;
    if (push_bytes) memcpy(d->push, push, push_bytes);
    d->push_bytes = push_bytes;
    d->n_bind = n_values;
    d->node = c->node_index;
    for (int i = 0; i < n_values; i++) {
        int v = values[i];
        if (v < 0 || v >= p->n_values) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: binding %d has no value", i);
        d->bind[i] = v;
        if (windows) {
            d->win_offset[i] = windows[i].offset;
            d->win_size[i] = windows[i].size;
            if (windows[i].offset % op_binding_alignment(c))
                return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: binding %d window offset %llu is not aligned", i,
                                (unsigned long long)windows[i].offset);
        }
        uint64_t view = p->values[v].view_offset; /* a view into its root: bound from there on */
        if (view) {
            d->win_offset[i] += view;
            if (!d->win_size[i]) d->win_size[i] = plan_value_bytes(&p->values[plan_root(p, v)]) - view;
        }
        d->writes[i] = writes[i];
        if (!p->values[v].host && !writes[i] && p->values[v].alias_of < 0 && !p->values[v].shaped)
            return op_error(c, VKI_ERROR_SHAPE, "internal: binding %d reads an unshaped value", i);
    }
    p->n_dispatches++;
    return VKI_OK;
}

void op_note_flops(op_ctx *c, double flops)
{
    plan *p = c->plan;
    if (p->n_dispatches > 0 && p->dispatches[p->n_dispatches - 1].node == c->node_index)
        p->dispatches[p->n_dispatches - 1].flops = flops;
}

int op_dispatch_mark(const op_ctx *c) { return c->plan->n_dispatches; }

void op_note_flops_at(op_ctx *c, int mark, double flops)
{
    plan *p = c->plan;
    /* the first of the node's dispatches since the mark that is not a storage conversion */
    for (int d = mark < 0 ? 0 : mark; d < p->n_dispatches; d++)
        if (p->dispatches[d].node == c->node_index && strcmp(p->dispatches[d].pipeline->shader->name, "convert")) {
            p->dispatches[d].flops = flops;
            return;
        }
}

gpu_storage op_storage(op_ctx *c, int v) { return c->plan->values[plan_root(c->plan, v)].storage; }

int op_root(op_ctx *c, int v) { return plan_root(c->plan, v); }

int64_t op_bound_numel(op_ctx *c, int v)
{
    const plan_value *pv = &c->plan->values[v];
    if (!pv->permuted) return shape_numel(pv->dims, pv->rank);
    const plan_value *root = &c->plan->values[plan_root(c->plan, v)];
    return shape_numel(root->dims, root->rank) - (int64_t)(pv->view_offset / storage_size(root->storage));
}

gpu_storage op_half_storage(op_ctx *c, const int *values, int n)
{
    if (!op_has_storage16(c)) return GPU_W32;
    gpu_storage s = GPU_W32;
    bool wide_float32 = false; /* a float32 value held in words: in the fp16 mode, a graph input or output */
    for (int i = 0; i < n; i++) {
        if (values[i] < 0) continue;
        gpu_storage v = op_storage(c, values[i]);
        if (v == GPU_W32 && c->plan->values[values[i]].dtype == VKI_DTYPE_FLOAT) {
            wide_float32 = true;
            continue;
        }
        if ((v != GPU_F16 && v != GPU_BF16) || (s != GPU_W32 && v != s)) return GPU_W32;
        s = v;
    }
    /* The fp16 mode computes float32 in halves: a graph input or output beside half values is
     * converted to halves (once) rather than the half values (weights) widened to words. */
    if (wide_float32 && !(c->plan->fp16_mode && s == GPU_F16)) return GPU_W32;
    return s;
}

gpu_storage op_move_storage(op_ctx *c, const int *values, int n)
{
    bool any = false;
    for (int i = 0; i < n; i++) {
        if (values[i] < 0) continue;
        if (op_storage(c, values[i]) != GPU_F64) return op_half_storage(c, values, n);
        any = true;
    }
    return any ? GPU_F64 : op_half_storage(c, values, n);
}

const char *op_variant(op_ctx *c, const char *base, gpu_storage s)
{
    if (s == GPU_W32) return base;
    size_t n = strlen(base) + 8;
    char *name = arena_alloc(&c->plan->arena, n);
    if (!name) return base;
    snprintf(name, n, "%s_%s", base, storage_name(s));
    return name;
}
bool op_has_storage16(const op_ctx *c) { return c->plan->vk->caps.storage_16bit; }
bool op_has_storage8(const op_ctx *c) { return c->plan->vk->caps.storage_8bit; }
bool op_has_float64(const op_ctx *c) { return c->plan->vk->caps.shader_float64; }

/* Converts numel elements of value `src` (held in storage `from`) into value `dst` (storage
 * `to`) on the GPU, in windows that each fit one binding. shaders/convert.comp writes one
 * 32-bit word of the destination per invocation, so no 8/16-bit storage feature is needed. */
static vki_status record_convert(op_ctx *c, int src, gpu_storage from, int dst, gpu_storage to, int64_t numel)
{
    uint64_t align = op_binding_alignment(c), range = op_max_binding_bytes(c);
    /* whole multiples of the alignment in elements keep both windows aligned; elements of up
     * to 4 bytes (8 for float64) fit one binding */
    uint64_t widest = storage_size(from) > 4 || storage_size(to) > 4 ? 8 : 4;
    int64_t chunk = (int64_t)(range / widest / align * align);
    if (chunk <= 0) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: the binding limit is below its alignment");
    uint64_t src_bytes = plan_value_bytes(&c->plan->values[plan_root(c->plan, src)]) - c->plan->values[src].view_offset;
    uint64_t dst_bytes = plan_value_bytes(&c->plan->values[plan_root(c->plan, dst)]);
    uint32_t spec[3] = {64, (uint32_t)from, (uint32_t)to};
    int values[2] = {src, dst};
    bool writes[2] = {false, true};
    for (int64_t e0 = 0; e0 < numel; e0 += chunk) {
        int64_t n = numel - e0 < chunk ? numel - e0 : chunk;
        uint64_t so = (uint64_t)e0 * storage_size(from), dof = (uint64_t)e0 * storage_size(to);
        uint64_t ss = ((uint64_t)n * storage_size(from) + 3) / 4 * 4, ds = ((uint64_t)n * storage_size(to) + 3) / 4 * 4;
        if (so + ss > src_bytes) ss = src_bytes - so;
        if (dof + ds > dst_bytes) ds = dst_bytes - dof;
        op_window win[2] = {{so, ss}, {dof, ds}};
        uint32_t words = (uint32_t)((uint64_t)n * storage_size(to) / 4 + ((uint64_t)n * storage_size(to) % 4 ? 1 : 0));
        uint32_t push[2] = {(uint32_t)n, 0}, gx, gy;
        op_grid_1d(words, 64, &gx, &gy);
        VKI_TRY(push_dispatch(c, "convert", spec, 3, push, sizeof push, values, numel > chunk ? win : NULL, writes, 2, gx, gy, 1));
    }
    return VKI_OK;
}

/* The value to bind where a kernel reads value v in storage `want`. */
static vki_status readable_as(op_ctx *c, int v, gpu_storage want, int *out)
{
    plan *p = c->plan;
    int root = plan_root(p, v);
    plan_value *rv = &p->values[root];
    *out = v;
    if (rv->storage == want) return VKI_OK;
    /* a view with an offset converts its own elements, a whole-root view the root's */
    int from = p->values[v].view_offset ? v : root;
    int *slot = &p->converted[(size_t)from * GPU_STORAGE_COUNT + want];
    if (*slot >= 0) {
        *out = *slot;
        return VKI_OK;
    }
    int64_t numel = shape_numel(p->values[from].dims, p->values[from].rank);
    int t;
    VKI_TRY(op_temp(c, rv->dtype, numel, &t));
    plan_value *tv = &p->values[t];
    tv->storage = want;
    p->temp_owner[t] = -1; /* shared by later readers: not this node's scratch */
    if (rv->host) { /* a constant: converted on the host when the plan uploads it */
        tv->host = rv->host;
        tv->host_bytes = rv->host_bytes;
    } else {
        VKI_TRY(record_convert(c, from, rv->storage, t, want, numel));
    }
    *slot = t;
    *out = t;
    return VKI_OK;
}

static bool is_own_output(const op_ctx *c, int v)
{
    for (int o = 0; o < c->node->n_outputs; o++)
        if (c->node->outputs[o] == v) return true;
    return false;
}

/* one of its own outputs, or one of a later node's that its kernels compute */
static bool is_node_output(const op_ctx *c, int v)
{
    if (is_own_output(c, v)) return true;
    for (int k = 0; k < c->n_computed; k++)
        if (c->computed[k] == v) return true;
    return false;
}

vki_status op_dispatch_stored(op_ctx *c, const char *shader_name, const uint32_t *spec, uint32_t n_spec,
                              const void *push, uint32_t push_bytes, const int *values, const op_window *windows,
                              const gpu_storage *stores, int n_values, uint32_t gx, uint32_t gy, uint32_t gz)
{
    plan *p = c->plan;
    if (gx == 0 || gy == 0 || gz == 0) return VKI_OK;
    if (n_values > 8) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: more than 8 bindings");
    int bound[8];
    bool writes[8];
    for (int i = 0; i < n_values; i++) {
        int v = values[i];
        if (v < 0 || v >= p->n_values) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: binding %d has no value", i);
        gpu_storage want = stores ? stores[i] : GPU_W32;
        bool output = is_node_output(c, v);
        /* a binding is written if it is one of this node's outputs or a scratch value of it */
        writes[i] = output || (v >= p->graph->n_values && p->temp_owner[v] == c->node_index);
        bound[i] = v;
        if (output) {
            if (p->values[v].alias_of >= 0 || p->values[v].storage == want) continue;
            if (!is_own_output(c, v))
                return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: a claimed node's output %s bound in another storage",
                                p->graph->values[v].name);
            if (p->out_copy[v] < 0) { /* written in the kernel's storage, converted at the node's end */
                int t;
                VKI_TRY(op_temp(c, p->values[v].dtype, shape_numel(p->values[v].dims, p->values[v].rank), &t));
                p->values[t].storage = want;
                p->out_copy[v] = t;
            }
            if (p->values[p->out_copy[v]].storage != want)
                return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: output %s bound in two storages", p->graph->values[v].name);
            bound[i] = p->out_copy[v];
        } else if (!writes[i]) {
            VKI_TRY(readable_as(c, v, want, &bound[i]));
        } else if (p->values[v].storage != want) {
            return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: scratch binding %d is held as %s, the kernel writes %s", i,
                            storage_name(p->values[v].storage), storage_name(want));
        }
    }
    return push_dispatch(c, shader_name, spec, n_spec, push, push_bytes, bound, windows, writes, n_values, gx, gy, gz);
}

vki_status plan_finish_node(op_ctx *c)
{
    plan *p = c->plan;
    for (int o = 0; o < c->node->n_outputs; o++) {
        int v = c->node->outputs[o];
        if (v < 0 || p->out_copy[v] < 0) continue;
        int t = p->out_copy[v];
        p->out_copy[v] = -1;
        VKI_TRY(record_convert(c, t, p->values[t].storage, v, p->values[v].storage,
                               shape_numel(p->values[v].dims, p->values[v].rank)));
    }
    return VKI_OK;
}

vki_status op_dispatch(op_ctx *c, const char *shader_name, const uint32_t *spec, uint32_t n_spec, const void *push,
                       uint32_t push_bytes, const int *values, int n_values, uint32_t gx, uint32_t gy, uint32_t gz)
{
    return op_dispatch_stored(c, shader_name, spec, n_spec, push, push_bytes, values, NULL, NULL, n_values, gx, gy, gz);
}

vki_status op_dispatch_windowed(op_ctx *c, const char *shader_name, const uint32_t *spec, uint32_t n_spec,
                                const void *push, uint32_t push_bytes, const int *values, const op_window *windows,
                                int n_values, uint32_t gx, uint32_t gy, uint32_t gz)
{
    return op_dispatch_stored(c, shader_name, spec, n_spec, push, push_bytes, values, windows, NULL, n_values, gx, gy, gz);
}
