/* The op contract's fusion side (op_api.h): the node that alone reads a value, and claiming it,
 * so that a kernel applies the nodes after its own where it stores its results (an activation,
 * a residual Add, a scale, a LayerNormalization), or computes a later node's output itself.
 * The patterns of src/plan/fuse.c are seen here through p->pattern and p->pattern_in. */
#include "plan.h"

#include <math.h>
#include <string.h>

bool op_dims_read_only(op_ctx *c, int v)
{
    const plan *p = c->plan;
    const ir_graph *g = p->graph;
    return !p->no_fusion && v >= 0 && v < g->n_values && !g->values[v].is_output && p->uses[v] > 0 &&
           p->uses[v] == p->shape_reads[v];
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

int op_nan_guard_reader(op_ctx *c, int v, int *isnan_node)
{
    const plan *p = c->plan;
    const ir_graph *g = p->graph;
    if (p->no_fusion || v < 0 || v >= g->n_values || g->values[v].is_output || p->uses[v] != 2 || p->shape_reads[v])
        return -1;
    int w = p->reader[v]; /* the later of the two readers: the Where, which reads the IsNaN */
    if (w < 0 || p->fused[w] || p->pattern[w] != PATTERN_NONE || *g->nodes[w].domain || strcmp(g->nodes[w].op_type, "Where"))
        return -1;
    const ir_node *wn = &g->nodes[w];
    if (wn->n_inputs != 3 || wn->n_outputs < 1 || wn->outputs[0] < 0 || wn->inputs[2] != v || wn->inputs[0] < 0 ||
        wn->inputs[1] == v)
        return -1;
    int cond = wn->inputs[0], n = g->values[cond].producer;
    if (n < 0 || p->fused[n] || p->pattern[n] != PATTERN_NONE || *g->nodes[n].domain || strcmp(g->nodes[n].op_type, "IsNaN") ||
        g->nodes[n].n_inputs != 1 || g->nodes[n].inputs[0] != v || g->values[cond].is_output || p->uses[cond] != 1)
        return -1;
    double zero;
    if (!plan_const_scalar(p, wn->inputs[1], &zero) || zero != 0.0) return -1;
    *isnan_node = n;
    return w;
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
