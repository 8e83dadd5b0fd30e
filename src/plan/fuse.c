/* Plan-time pattern fusion: chains of nodes that one kernel computes, found before any node
 * is planned, so that the ops files stay one op each. A pattern is planned at its last node
 * as one op (plan_node in plan.c) on the pattern's input; its other nodes are skipped.
 *
 * GELU as the TorchScript exporter writes it (opset < 20 has no Gelu op):
 *   y = Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5)
 * also with Mul(x, 1/sqrt 2) for the Div, the 0.5 applied to x first
 * (Mul(Mul(x, 0.5), Add(...)), as Hugging Face's exports have it) or to the Add first, and
 * any operand order of Add and Mul. Every intermediate value must have the pattern's next
 * node as its only reader and must not be a graph output. Constants match within 1e-6.
 *
 * LayerNormalization over the last axis as exports of opset < 17 spell it (ReduceMean, Sub,
 * Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta): see match_layer_norm.
 *
 * Mish as exports of opset < 18 spell it (Diffusion Policy's and TD-MPC's activations):
 *   y = Mul(x, Tanh(Softplus(x))), either operand order: one element-wise pass, not three.
 *
 * SiLU (nn.SiLU, EfficientNet's and diffusion U-Nets' activation) as every exporter before
 * opset 24 spells it: y = Mul(x, Sigmoid(x)), either operand order; planned as Swish (alpha 1),
 * which a producing Conv, MatMul or Gemm applies where it stores (op_fuse_activation_value).
 *
 * RMSNorm as Llama-, Gemma- and SmolVLM-style models write it (opset 23 has RMSNormalization,
 * which no exporter writes yet): see match_rms_norm.
 *
 * Slice assignment into a fresh buffer as the dynamo exporter writes it (Transposes around
 * ScatterNDs): see match_scatter_slices.
 *
 * And before all of them, nodes equal to an earlier node are planned as views of its output:
 * see merge_same_nodes. */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Reshape, Identity, Squeeze or Unsqueeze: a node whose output holds its first input's elements */
static bool is_reshape(const ir_node *n)
{
    return !*n->domain && n->n_inputs >= 1 && n->inputs[0] >= 0 &&
           (!strcmp(n->op_type, "Reshape") || !strcmp(n->op_type, "Identity") || !strcmp(n->op_type, "Squeeze") ||
            !strcmp(n->op_type, "Unsqueeze"));
}

/* v's constant elements: an initializer, a value folded on the host, a Constant node's output,
 * or a reshape of one (its rank then unknown: -1) */
static bool const_data(const plan *p, int v, const void **data_out, vki_dtype *dtype, int64_t *numel_out, int *rank_out,
                       int depth)
{
    const ir_graph *g = p->graph;
    if (v < 0) return false;
    const plan_value *pv = &p->values[v];
    const void *data = NULL;
    vki_dtype dt = VKI_DTYPE_UNDEFINED;
    int64_t numel = 0;
    int rank = 0;
    if (pv->host) {
        data = pv->host, dt = pv->dtype, numel = shape_numel(pv->dims, pv->rank), rank = pv->rank;
    } else if (v < g->n_values && g->values[v].producer >= 0 && is_reshape(&g->nodes[g->values[v].producer])) {
        /* the same elements: an unoptimized export shapes its constants (ReduceMean's axes) this way */
        if (depth >= 4 || !const_data(p, g->nodes[g->values[v].producer].inputs[0], data_out, dtype, numel_out, rank_out,
                                      depth + 1))
            return false;
        *rank_out = -1;
        return true;
    } else if (v < g->n_values && g->values[v].producer >= 0 &&
               !strcmp(g->nodes[g->values[v].producer].op_type, "Constant")) {
        /* a Constant node is not planned yet when the pass runs, nor when it follows in graph order */
        const ir_attr *a = ir_find_attr(&g->nodes[g->values[v].producer], "value");
        if (a && a->type == ATTR_TENSOR && a->tensor) {
            data = a->tensor->data, dt = a->tensor->dtype, numel = shape_numel(a->tensor->dims, a->tensor->rank);
            rank = a->tensor->rank;
        }
    }
    if (!data) return false;
    *data_out = data, *dtype = dt, *numel_out = numel, *rank_out = rank;
    return true;
}

/* v as a one-element float constant (an initializer, a value folded on the host or a Constant
 * node's output), its dtype and rank */
static bool const_scalar_rank(const plan *p, int v, double *out, vki_dtype *dtype, int *rank)
{
    const void *data;
    int64_t numel;
    if (!const_data(p, v, &data, dtype, &numel, rank, 0) || !dtype_is_float(*dtype) || numel != 1) return false;
    *out = host_read_f64(*dtype, data, 0);
    return true;
}

/* plan_const_scalar, also giving the constant's dtype */
static bool const_scalar(const plan *p, int v, double *out, vki_dtype *dtype)
{
    int rank;
    return const_scalar_rank(p, v, out, dtype, &rank);
}

/* v as a one-element integer constant */
static bool const_int(const plan *p, int v, int64_t *out)
{
    const void *data;
    vki_dtype dt;
    int64_t numel;
    int rank;
    if (!const_data(p, v, &data, &dt, &numel, &rank, 0) || numel != 1 || (dt != VKI_DTYPE_INT64 && dt != VKI_DTYPE_INT32))
        return false;
    *out = (int64_t)host_read_f64(dt, data, 0);
    return true;
}

bool plan_const_scalar(const plan *p, int v, double *out)
{
    vki_dtype dt;
    return const_scalar(p, v, out, &dt);
}

typedef struct matcher {
    plan *p;
    const bool *live;
} matcher;

static bool is_op(const matcher *m, int n, const char *op, int n_inputs)
{
    const ir_node *node = &m->p->graph->nodes[n];
    return m->live[n] && m->p->pattern[n] == PATTERN_NONE && !*node->domain && !strcmp(node->op_type, op) &&
           node->n_inputs == n_inputs && node->n_outputs >= 1 && node->outputs[0] >= 0;
}

static int out0(const matcher *m, int n) { return m->p->graph->nodes[n].outputs[0]; }

/* The live node that alone reads intermediate value v (once), which is not a graph output, if it
 * is `op`; -1 otherwise. */
static int only_reader(const matcher *m, int v, const char *op, int n_inputs)
{
    const ir_graph *g = m->p->graph;
    if (v < 0 || g->values[v].is_output || m->p->uses[v] != 1 || m->p->shape_reads[v]) return -1;
    int n = m->p->reader[v];
    return is_op(m, n, op, n_inputs) ? n : -1;
}

/* For a binary node reading v: its other operand, or -1 (also when both are v). */
static int other_input(const matcher *m, int n, int v)
{
    const ir_node *node = &m->p->graph->nodes[n];
    if (node->inputs[0] == v && node->inputs[1] != v) return node->inputs[1];
    if (node->inputs[1] == v && node->inputs[0] != v) return node->inputs[0];
    return -1;
}

/* Whether v is a one-element float constant equal to `want` as its graph value's dtype holds it:
 * within 1e-6, or within half a unit in the last place of float16 (2^-11 relative) or
 * bfloat16 (2^-8): a bfloat16 export writes sqrt(2) as 1.4140625, and the fused kernel then
 * computes with the exact constant, which is what PyTorch's own GELU does. */
static bool is_const(const matcher *m, int v, double want)
{
    double f;
    vki_dtype dt;
    if (!const_scalar(m->p, v, &f, &dt)) return false;
    double tol = dt == VKI_DTYPE_BFLOAT16 ? fabs(want) * 0x1p-8 : dt == VKI_DTYPE_FLOAT16 ? fabs(want) * 0x1p-11 : 0;
    return fabs(f - want) <= (tol > 1e-6 ? tol : 1e-6);
}

/* Node n as the first node of an erf-GELU: marks the pattern and returns true. */
static bool match_gelu(matcher *m, int n)
{
    const ir_node *d = &m->p->graph->nodes[n];
    int x;
    if (is_op(m, n, "Div", 2) && is_const(m, d->inputs[1], sqrt(2.0))) {
        x = d->inputs[0];
    } else if (is_op(m, n, "Mul", 2) && is_const(m, d->inputs[1], sqrt(0.5))) {
        x = d->inputs[0];
    } else if (is_op(m, n, "Mul", 2) && is_const(m, d->inputs[0], sqrt(0.5))) {
        x = d->inputs[1];
    } else {
        return false;
    }
    if (x < 0) return false;
    int e = only_reader(m, out0(m, n), "Erf", 1);
    if (e < 0) return false;
    int a = only_reader(m, out0(m, e), "Add", 2);
    if (a < 0 || !is_const(m, other_input(m, a, out0(m, e)), 1.0)) return false;
    int r = only_reader(m, out0(m, a), "Mul", 2);
    if (r < 0) return false;
    int r_other = other_input(m, r, out0(m, a)), nodes[6] = {n, e, a, r, -1, -1}, last;
    if (r_other == x) { /* x * (1 + erf) then * 0.5 */
        int h = only_reader(m, out0(m, r), "Mul", 2);
        if (h < 0 || !is_const(m, other_input(m, h, out0(m, r)), 0.5)) return false;
        nodes[4] = last = h;
    } else if (is_const(m, r_other, 0.5)) { /* (1 + erf) * 0.5 then * x */
        int h = only_reader(m, out0(m, r), "Mul", 2);
        if (h < 0 || other_input(m, h, out0(m, r)) != x) return false;
        nodes[4] = last = h;
    } else { /* (x * 0.5) * (1 + erf) */
        const ir_graph *g = m->p->graph;
        if (r_other < 0 || r_other >= g->n_values) return false;
        int h = g->values[r_other].producer;
        if (h < 0 || !is_op(m, h, "Mul", 2) || only_reader(m, r_other, "Mul", 2) != r) return false;
        int hx = other_input(m, h, x);
        if (hx < 0 || !is_const(m, hx, 0.5)) return false;
        nodes[4] = h;
        last = r;
    }
    for (int i = 0; i < 6; i++)
        if (nodes[i] >= 0) m->p->pattern[nodes[i]] = PATTERN_INNER;
    m->p->pattern[last] = PATTERN_GELU;
    m->p->pattern_in[(size_t)last * PATTERN_INPUTS] = x;
    return true;
}

/* Node n as the Softplus of a Mish, Mul(x, Tanh(Softplus(x))): marks the pattern and returns true. */
static bool match_mish(matcher *m, int n)
{
    if (!is_op(m, n, "Softplus", 1)) return false;
    int x = m->p->graph->nodes[n].inputs[0];
    int t = only_reader(m, out0(m, n), "Tanh", 1);
    int mu = t >= 0 ? only_reader(m, out0(m, t), "Mul", 2) : -1;
    if (x < 0 || mu < 0 || other_input(m, mu, out0(m, t)) != x) return false;
    m->p->pattern[n] = m->p->pattern[t] = PATTERN_INNER;
    m->p->pattern[mu] = PATTERN_MISH;
    m->p->pattern_in[(size_t)mu * PATTERN_INPUTS] = x;
    return true;
}

/* Node n as the Sigmoid of a SiLU, Mul(x, Sigmoid(x)): marks the pattern and returns true. */
static bool match_silu(matcher *m, int n)
{
    if (!is_op(m, n, "Sigmoid", 1)) return false;
    int x = m->p->graph->nodes[n].inputs[0];
    int mu = only_reader(m, out0(m, n), "Mul", 2);
    if (x < 0 || mu < 0 || other_input(m, mu, out0(m, n)) != x) return false;
    m->p->pattern[n] = PATTERN_INNER;
    m->p->pattern[mu] = PATTERN_SILU;
    m->p->pattern_in[(size_t)mu * PATTERN_INPUTS] = x;
    return true;
}

/* ReduceMean over the last axis, keeping it (the attribute form of opsets < 18). */
static bool is_mean_last(const matcher *m, int n)
{
    const ir_node *node = &m->p->graph->nodes[n];
    const int64_t *axes;
    return ir_attr_ints(node, "axes", &axes) == 1 && axes[0] == -1 && ir_attr_int(node, "keepdims", 1) == 1;
}

/* A live node other than `not` that reads v, or -1. */
static int other_reader(const matcher *m, int v, int not)
{
    const ir_graph *g = m->p->graph;
    for (int n = 0; n < g->n_nodes; n++)
        for (int i = 0; m->live[n] && n != not && i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] == v) return n;
    return -1;
}

/* A 1-D float initializer, or an Identity of one (exporters share equal weights that way). */
static bool is_vector(const matcher *m, int v)
{
    const ir_graph *g = m->p->graph;
    for (int hops = 0; v >= 0 && v < g->n_values && hops < 8; hops++) {
        if (g->values[v].kind == VALUE_INITIALIZER)
            return m->p->values[v].rank == 1 && dtype_is_float(m->p->values[v].dtype);
        int n = g->values[v].producer;
        if (n < 0 || strcmp(g->nodes[n].op_type, "Identity") || *g->nodes[n].domain || g->nodes[n].n_inputs != 1) return false;
        v = g->nodes[n].inputs[0];
    }
    return false;
}

/* Node n as the first node of LayerNormalization over the last axis as opset < 17 exports
 * spell it: d = Sub(x, ReduceMean(x)); y = Add(Mul(Div(d, Sqrt(Add(ReduceMean(Pow(d, 2)),
 * eps))), gamma), beta), gamma and beta 1-D initializers (or Identities of them); d is read by the Pow and the Div. */
static bool match_layer_norm(matcher *m, int n)
{
    const ir_graph *g = m->p->graph;
    if (!is_op(m, n, "ReduceMean", 1) || !is_mean_last(m, n)) return false;
    int x = g->nodes[n].inputs[0];
    int sub = only_reader(m, out0(m, n), "Sub", 2);
    if (x < 0 || sub < 0 || g->nodes[sub].inputs[0] != x || g->nodes[sub].inputs[1] != out0(m, n)) return false;
    int d = out0(m, sub);
    if (g->values[d].is_output || m->p->uses[d] != 2 || m->p->shape_reads[d]) return false;
    int pw = other_reader(m, d, -1), dv = pw >= 0 ? other_reader(m, d, pw) : -1;
    if (pw >= 0 && dv >= 0 && is_op(m, pw, "Div", 2)) {
        int t = pw;
        pw = dv;
        dv = t;
    }
    if (pw < 0 || dv < 0 || !is_op(m, pw, "Pow", 2) || g->nodes[pw].inputs[0] != d || !is_const(m, g->nodes[pw].inputs[1], 2.0))
        return false;
    int r2 = only_reader(m, out0(m, pw), "ReduceMean", 1);
    if (r2 < 0 || !is_mean_last(m, r2)) return false;
    int ae = only_reader(m, out0(m, r2), "Add", 2);
    double eps;
    if (ae < 0 || !plan_const_scalar(m->p, other_input(m, ae, out0(m, r2)), &eps) || eps < 0) return false;
    int sq = only_reader(m, out0(m, ae), "Sqrt", 1);
    if (sq < 0 || only_reader(m, out0(m, sq), "Div", 2) != dv || g->nodes[dv].inputs[0] != d) return false;
    int mu = only_reader(m, out0(m, dv), "Mul", 2);
    int gamma = mu >= 0 ? other_input(m, mu, out0(m, dv)) : -1;
    int ab = mu >= 0 ? only_reader(m, out0(m, mu), "Add", 2) : -1;
    int beta = ab >= 0 ? other_input(m, ab, out0(m, mu)) : -1;
    if (!is_vector(m, gamma) || !is_vector(m, beta)) return false;
    int nodes[9] = {n, sub, pw, r2, ae, sq, dv, mu, ab};
    for (int i = 0; i < 9; i++) m->p->pattern[nodes[i]] = PATTERN_INNER;
    m->p->pattern[ab] = PATTERN_LAYER_NORM;
    m->p->pattern_in[(size_t)ab * PATTERN_INPUTS] = x;
    m->p->pattern_in[(size_t)ab * PATTERN_INPUTS + 1] = gamma;
    m->p->pattern_in[(size_t)ab * PATTERN_INPUTS + 2] = beta;
    m->p->pattern_eps[ab] = (float)eps;
    return true;
}

/* Node n is a Cast to float32, float16 or bfloat16 */
static bool is_float_cast(const ir_node *n)
{
    int64_t to = ir_attr_int(n, "to", 0);
    return !*n->domain && !strcmp(n->op_type, "Cast") && n->n_inputs == 1 &&
           (to == VKI_DTYPE_FLOAT || to == VKI_DTYPE_FLOAT16 || to == VKI_DTYPE_BFLOAT16);
}

/* RMSNorm's Scale: a 1-D float initializer (or an Identity of one), a Cast of one to a float
 * type (a bfloat16 weight widened), or Add(c, w) / Add(w, c) of a one-element constant c of
 * rank <= 1 and such a w (Gemma's 1 + w, where the exporter did not fold it). */
static bool is_scale(const matcher *m, int v, int depth)
{
    const ir_graph *g = m->p->graph;
    if (is_vector(m, v)) return true;
    if (depth > 2 || v < 0 || v >= g->n_values || g->values[v].kind == VALUE_INITIALIZER) return false;
    int n = g->values[v].producer;
    if (n < 0 || !m->live[n] || *g->nodes[n].domain) return false;
    const ir_node *node = &g->nodes[n];
    if (is_float_cast(node)) return is_scale(m, node->inputs[0], depth + 1);
    if (!strcmp(node->op_type, "Add") && node->n_inputs == 2) {
        double c;
        vki_dtype dt;
        int rank;
        for (int i = 0; i < 2; i++)
            if (const_scalar_rank(m->p, node->inputs[i], &c, &dt, &rank) && rank >= 0 && rank <= 1 && is_scale(m, node->inputs[1 - i], depth + 1))
                return true;
    }
    return false;
}

/* v's dtype where the graph tells it before planning: an input's, an initializer's, a Cast's
 * `to`, or through ops whose result has their first input's dtype (element-wise arithmetic,
 * products, moves), up to 12 nodes back; UNDEFINED otherwise */
static vki_dtype dtype_before_planning(const matcher *m, int v)
{
    static const char *const same_as_first[] = {"Add", "Sub", "Mul", "Div", "MatMul", "Gemm", "Neg", "Relu", "Sigmoid",
                                                "Tanh", "Softmax", "Reshape", "Transpose", "Identity", "Squeeze",
                                                "Unsqueeze", "Slice", "Concat", "Expand"};
    const ir_graph *g = m->p->graph;
    for (int depth = 0; depth < 12 && v >= 0 && v < g->n_values; depth++) {
        if (g->values[v].dtype != VKI_DTYPE_UNDEFINED) return g->values[v].dtype;
        int n = g->values[v].producer;
        if (n < 0 || *g->nodes[n].domain || g->nodes[n].n_inputs < 1) break;
        const ir_node *node = &g->nodes[n];
        if (!strcmp(node->op_type, "Cast")) return (vki_dtype)ir_attr_int(node, "to", 0);
        bool same = false;
        for (size_t i = 0; i < sizeof same_as_first / sizeof *same_as_first && !same; i++)
            same = !strcmp(node->op_type, same_as_first[i]);
        if (!same) break;
        v = node->inputs[0];
    }
    return VKI_DTYPE_UNDEFINED;
}

/* The Cast to float32 that produces v from float16 or bfloat16 (dtype_before_planning), where
 * v's `uses` reads are all the caller's; or -1 */
static int widening_cast(const matcher *m, int v, int uses)
{
    const ir_graph *g = m->p->graph;
    if (v < 0 || v >= g->n_values || g->values[v].is_output || m->p->uses[v] != uses || m->p->shape_reads[v]) return -1;
    int c = g->values[v].producer;
    if (c < 0 || !is_op(m, c, "Cast", 1) || ir_attr_int(&g->nodes[c], "to", 0) != VKI_DTYPE_FLOAT) return -1;
    vki_dtype dt = dtype_before_planning(m, g->nodes[c].inputs[0]);
    return dt == VKI_DTYPE_FLOAT16 || dt == VKI_DTYPE_BFLOAT16 ? c : -1;
}

/* Node n as the first node of RMSNorm over the last axis:
 *   y = Mul(gamma, [Cast](Mul(x, Reciprocal(Sqrt(Add(ReduceMean(Pow(x, 2)), eps))))))
 * x squared as Pow(x, 2) or Mul(x, x); ReduceMean over axis -1 keeping it (the attribute of
 * opsets < 18 or the axes input after); 1/sqrt as Reciprocal or Div(1, .), or x / sqrt(.)
 * in place of the Mul by it; both Muls in either
 * operand order; gamma a Scale (is_scale); the Cast, if any, to a float type (Hugging Face's
 * Llama norm computes in float32 and casts back before the weight). Planned as
 * RMSNormalization(x, gamma): its sums are float32 whatever the dtype. Where the product is not
 * by a Scale (none, or one computed in the graph: pi05's adaptive norm multiplies by 1 +
 * a conditioning), the pattern ends at x * r, planned as RMSNormalization(x) without a Scale. */
static bool match_rms_norm(matcher *m, int n)
{
    const ir_graph *g = m->p->graph;
    const ir_node *sqr = &g->nodes[n];
    int x;
    if (is_op(m, n, "Pow", 2) && is_const(m, sqr->inputs[1], 2.0)) x = sqr->inputs[0];
    else if (is_op(m, n, "Mul", 2) && sqr->inputs[0] == sqr->inputs[1]) x = sqr->inputs[0];
    else return false;
    if (x < 0) return false;
    int rm = only_reader(m, out0(m, n), "ReduceMean", 1);
    if (rm >= 0 && !is_mean_last(m, rm)) return false;
    if (rm < 0) {
        int64_t axis;
        rm = only_reader(m, out0(m, n), "ReduceMean", 2);
        if (rm < 0 || !const_int(m->p, g->nodes[rm].inputs[1], &axis) || axis != -1 ||
            ir_attr_int(&g->nodes[rm], "keepdims", 1) != 1)
            return false;
    }
    int ae = only_reader(m, out0(m, rm), "Add", 2);
    double eps;
    if (ae < 0 || !plan_const_scalar(m->p, other_input(m, ae, out0(m, rm)), &eps) || eps < 0) return false;
    int sq = only_reader(m, out0(m, ae), "Sqrt", 1);
    if (sq < 0) return false;
    int rc = only_reader(m, out0(m, sq), "Reciprocal", 1), mx;
    if (rc < 0) {
        rc = only_reader(m, out0(m, sq), "Div", 2);
        if (rc < 0 || g->nodes[rc].inputs[1] != out0(m, sq)) return false;
    }
    if (is_op(m, rc, "Div", 2) && g->nodes[rc].inputs[0] == x) { /* x / sqrt(.) */
        mx = rc, rc = -1;
    } else {
        if (is_op(m, rc, "Div", 2) && !is_const(m, g->nodes[rc].inputs[0], 1.0)) return false;
        mx = only_reader(m, out0(m, rc), "Mul", 2);
        if (mx < 0 || other_input(m, mx, out0(m, rc)) != x) return false;
    }
    int cast = only_reader(m, out0(m, mx), "Cast", 1), last = mx;
    if (cast >= 0 && !is_float_cast(&g->nodes[cast])) return false;
    if (cast >= 0) last = cast;
    int mg = only_reader(m, out0(m, last), "Mul", 2);
    int gamma = mg >= 0 ? other_input(m, mg, out0(m, last)) : -1;
    if (gamma < 0 || !is_scale(m, gamma, 0)) /* no Scale (or one computed, as pi05's adaptive norm): x * r alone */
        mg = mx, cast = gamma = -1;
    /* x widened from halves for the sums (Llama's and Qwen's hidden.to(float32)), read only
     * here: the fused node reads the halves, an exact widening, and the Cast is not computed
     * (its result is the Scale's dtype either way; without a Scale it would be x's) */
    int widen = gamma >= 0 ? widening_cast(m, x, is_op(m, n, "Pow", 2) ? 2 : 3) : -1;
    if (widen >= 0) x = g->nodes[widen].inputs[0];
    int nodes[9] = {n, rm, ae, sq, rc, mx, cast, mg, widen};
    for (int i = 0; i < 9; i++)
        if (nodes[i] >= 0) m->p->pattern[nodes[i]] = PATTERN_INNER;
    m->p->pattern[mg] = PATTERN_RMS_NORM;
    m->p->pattern_in[(size_t)mg * PATTERN_INPUTS] = x;
    m->p->pattern_in[(size_t)mg * PATTERN_INPUTS + 1] = gamma;
    m->p->pattern_eps[mg] = (float)eps;
    return true;
}

/* The Transpose that alone produces value v for reader `reader`, or -1 */
static int transpose_of(const matcher *m, int v, int reader)
{
    const ir_graph *g = m->p->graph;
    if (v < 0 || v >= g->n_values || g->values[v].is_output || m->p->uses[v] != 1 || m->p->shape_reads[v]) return -1;
    int t = g->values[v].producer;
    return t >= 0 && is_op(m, t, "Transpose", 1) && m->p->reader[v] == reader ? t : -1;
}

static bool same_perm(const ir_node *a, const ir_node *b)
{
    const int64_t *pa, *pb;
    int na = ir_attr_ints(a, "perm", &pa), nb = ir_attr_ints(b, "perm", &pb);
    return na > 0 && na == nb && !memcmp(pa, pb, (size_t)na * sizeof *pa);
}

/* Whether v is computed from constants and shapes alone (folded on the host when planned) */
static bool is_dims(const matcher *m, int v) { return v >= 0 && (m->p->values[v].host || m->p->from_dims[v]); }

/* Node n as the first of a slice assignment as the dynamo exporter writes `out[..., a:b] = u`
 * (Llama-style rotary embeddings written into torch.empty_like: SmolVLA's apply_rope): the
 * assigned axis moved first by a Transpose of u, ScatterND into a buffer with indices [k, 1]
 * along it, a second ScatterND for the other piece, and the Transpose back (which, after
 * attention's head transpose, exporters fold into one other perm):
 *   y = Transpose(ScatterND(ScatterND(data, i1, Transpose(u1, P)), i2, Transpose(u2, P)), Q)
 * with one or two ScatterNDs (reduction none), the same P, Q optional, indices computed from
 * constants. Planned as vkinfer.ScatterSlices (src/ops/scatter.c), which copies each piece of u
 * straight into y's layout: two copies where there were five dispatches. */
static bool match_scatter_slices(matcher *m, int n)
{
    const ir_graph *g = m->p->graph;
    if (!is_op(m, n, "ScatterND", 3) || strcmp(ir_attr_string(&g->nodes[n], "reduction", "none"), "none")) return false;
    int t1 = transpose_of(m, g->nodes[n].inputs[2], n);
    if (t1 < 0 || !is_dims(m, g->nodes[n].inputs[1]) || g->nodes[n].inputs[0] < 0) return false;
    int s2 = only_reader(m, out0(m, n), "ScatterND", 3), t2 = -1, last = n;
    if (s2 >= 0 && g->nodes[s2].inputs[0] == out0(m, n) && !strcmp(ir_attr_string(&g->nodes[s2], "reduction", "none"), "none") &&
        is_dims(m, g->nodes[s2].inputs[1]) && (t2 = transpose_of(m, g->nodes[s2].inputs[2], s2)) >= 0 &&
        same_perm(&g->nodes[t1], &g->nodes[t2]))
        last = s2;
    else
        s2 = t2 = -1;
    const int64_t *qperm;
    int q = only_reader(m, out0(m, last), "Transpose", 1);
    if (q >= 0 && ir_attr_ints(&g->nodes[q], "perm", &qperm) <= 0) q = -1;
    int nodes[4] = {t1, n, t2, s2}, end = q >= 0 ? q : last;
    for (int i = 0; i < 4; i++)
        if (nodes[i] >= 0) m->p->pattern[nodes[i]] = PATTERN_INNER;
    if (q >= 0) m->p->pattern[last] = PATTERN_INNER;
    m->p->pattern[end] = PATTERN_SCATTER_SLICES;
    int *in = &m->p->pattern_in[(size_t)end * PATTERN_INPUTS];
    in[0] = g->nodes[n].inputs[0];
    in[1] = g->nodes[n].inputs[1];
    in[2] = g->nodes[t1].inputs[0];
    if (s2 >= 0) {
        in[3] = g->nodes[s2].inputs[1];
        in[4] = g->nodes[t2].inputs[0];
    }
    return true;
}

/* The perms of the ScatterSlices pattern ending at node `last` (match_scatter_slices): P, the
 * Transpose of the pieces, and Q, the Transpose after (0 entries: none). */
void plan_scatter_slices_perms(const plan *p, int last, const int64_t **perm, int *n_perm, const int64_t **out_perm,
                               int *n_out)
{
    const ir_graph *g = p->graph;
    *n_out = 0;
    int s = last;
    if (!strcmp(g->nodes[last].op_type, "Transpose")) {
        *n_out = ir_attr_ints(&g->nodes[last], "perm", out_perm);
        s = g->values[g->nodes[last].inputs[0]].producer;
    }
    int t = g->values[g->nodes[s].inputs[2]].producer;
    *n_perm = ir_attr_ints(&g->nodes[t], "perm", perm);
}

/* Whether two attributes hold the same value (not graphs: nodes with subgraphs never merge) */
static bool same_attr(const ir_attr *a, const ir_attr *b)
{
    if (strcmp(a->name, b->name) || a->type != b->type) return false;
    switch (a->type) {
    case ATTR_FLOAT: return !memcmp(&a->f, &b->f, sizeof a->f);
    case ATTR_INT: return a->i == b->i;
    case ATTR_STRING: return a->s_len == b->s_len && !memcmp(a->s, b->s, a->s_len);
    case ATTR_FLOATS: return a->count == b->count && !memcmp(a->floats, b->floats, (size_t)a->count * sizeof *a->floats);
    case ATTR_INTS: return a->count == b->count && !memcmp(a->ints, b->ints, (size_t)a->count * sizeof *a->ints);
    case ATTR_STRINGS:
        if (a->count != b->count) return false;
        for (int i = 0; i < a->count; i++)
            if (strcmp(a->strings[i], b->strings[i])) return false;
        return true;
    case ATTR_TENSOR:
        return a->tensor && b->tensor && a->tensor->dtype == b->tensor->dtype && a->tensor->rank == b->tensor->rank &&
               !memcmp(a->tensor->dims, b->tensor->dims, (size_t)a->tensor->rank * sizeof *a->tensor->dims) &&
               a->tensor->bytes == b->tensor->bytes && !memcmp(a->tensor->data, b->tensor->data, a->tensor->bytes);
    default: return false;
    }
}

/* Node n may merge with an equal node: one output, inputs all present, an op without state or
 * randomness, no subgraph (plan_order plans a merged node after the node it views) */
static bool mergeable(const plan *p, const bool *live, int n)
{
    const ir_node *nd = &p->graph->nodes[n];
    const op_def *def = p->defs[n];
    if (!live[n] || p->pattern[n] != PATTERN_NONE || !def || nd->n_outputs != 1 || nd->outputs[0] < 0 || nd->n_inputs < 1 ||
        (def->flags & (OP_NOT_CONSTANT | OP_TAKES_LISTS | OP_READS_Y_ATTR | OP_SHAPE_ONLY)))
        return false;
    for (int i = 0; i < nd->n_inputs; i++)
        if (nd->inputs[i] < 0) return false;
    for (int a = 0; a < nd->n_attrs; a++)
        if (nd->attrs[a].type == ATTR_GRAPH || nd->attrs[a].type == ATTR_GRAPHS || nd->attrs[a].type == ATTR_TENSORS ||
            nd->attrs[a].type == ATTR_SPARSE_TENSOR || nd->attrs[a].type == ATTR_SPARSE_TENSORS)
            return false;
    return true;
}

/* For Transpose n of a Transpose that it undoes (the dynamo exporter's slice assignment writes
 * Transpose(P) back and Transpose(P) again around a value that a Shape also reads, where its
 * optimizer cannot fold them): the first Transpose's input, which n's output equals; else -1 */
static int undone_transpose(const plan *p, const bool *live, int n)
{
    const ir_graph *g = p->graph;
    const ir_node *nd = &g->nodes[n];
    if (*nd->domain || strcmp(nd->op_type, "Transpose") || nd->n_inputs != 1) return -1;
    int t = g->values[nd->inputs[0]].producer;
    if (t < 0 || !live[t] || p->pattern[t] != PATTERN_NONE) return -1;
    const ir_node *first = &g->nodes[t];
    if (*first->domain || strcmp(first->op_type, "Transpose") || first->n_inputs != 1 || first->inputs[0] < 0) return -1;
    const int64_t *p1, *p2;
    int n1 = ir_attr_ints(first, "perm", &p1), n2 = ir_attr_ints(nd, "perm", &p2);
    if (n1 <= 0 || n1 != n2) return -1;
    for (int k = 0; k < n2; k++)
        if (p2[k] < 0 || p2[k] >= n1 || p1[p2[k]] != k) return -1;
    return first->inputs[0];
}

static uint64_t hash_mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

static uint64_t hash_str(uint64_t h, const char *s)
{
    while (*s) h = hash_mix(h, (unsigned char)*s++);
    return hash_mix(h, 0);
}

/* Nodes that compute the same thing twice (same op, attributes and inputs, the inputs counted
 * after merging: unoptimized exports cast each weight and recompute rotary tables once per
 * layer or step) are planned once: the later node becomes an Identity of the earlier's output,
 * a view (PATTERN_SAME). So does a Transpose that undoes the Transpose before it, of that
 * one's input (undone_transpose). Inputs are compared through rep[], each value's merged
 * representative, so chains of equal nodes merge whole. */
static vki_status merge_same_nodes(plan *p, const bool *live)
{
    const ir_graph *g = p->graph;
    size_t slots = 1;
    while (slots < (size_t)g->n_nodes * 2) slots <<= 1;
    int *rep = malloc((size_t)g->n_values * sizeof *rep), *table = malloc(slots * sizeof *table);
    if (!rep || !table) {
        free(rep);
        free(table);
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    for (int v = 0; v < g->n_values; v++) rep[v] = v;
    for (size_t i = 0; i < slots; i++) table[i] = -1;
    for (int n = 0; n < g->n_nodes; n++) {
        if (!mergeable(p, live, n)) continue;
        const ir_node *nd = &g->nodes[n];
        int undone = undone_transpose(p, live, n);
        if (undone >= 0) { /* the value before both Transposes, viewed */
            p->pattern[n] = PATTERN_SAME;
            p->pattern_in[(size_t)n * PATTERN_INPUTS] = undone;
            rep[nd->outputs[0]] = rep[undone];
            continue;
        }
        uint64_t h = hash_str(hash_str(0xcbf29ce484222325ull, nd->domain), nd->op_type);
        for (int i = 0; i < nd->n_inputs; i++) h = hash_mix(h, (uint64_t)rep[nd->inputs[i]] + 1);
        for (int a = 0; a < nd->n_attrs; a++) h = hash_mix(hash_str(h, nd->attrs[a].name), (uint64_t)nd->attrs[a].i);
        for (size_t at = h & (slots - 1);; at = (at + 1) & (slots - 1)) {
            int m = table[at];
            if (m < 0) {
                table[at] = n;
                break;
            }
            const ir_node *md = &g->nodes[m];
            bool same = !strcmp(md->op_type, nd->op_type) && !strcmp(md->domain, nd->domain) &&
                        md->n_inputs == nd->n_inputs && md->n_attrs == nd->n_attrs;
            for (int i = 0; same && i < nd->n_inputs; i++) same = rep[md->inputs[i]] == rep[nd->inputs[i]];
            for (int a = 0; same && a < nd->n_attrs; a++) same = same_attr(&md->attrs[a], &nd->attrs[a]);
            if (same) {
                p->pattern[n] = PATTERN_SAME;
                p->pattern_in[(size_t)n * PATTERN_INPUTS] = md->outputs[0];
                rep[nd->outputs[0]] = rep[md->outputs[0]];
                break;
            }
        }
    }
    free(rep);
    free(table);
    return VKI_OK;
}

static void count_uses(plan *p, const bool *live)
{
    const ir_graph *g = p->graph;
    memset(p->uses, 0, (size_t)g->n_values * sizeof *p->uses);
    memset(p->shape_reads, 0, (size_t)g->n_values * sizeof *p->shape_reads);
    for (int v = 0; v < g->n_values; v++) p->ln_reader[v] = -1;
    for (int n = 0; n < g->n_nodes; n++) {
        if (!live[n] || p->pattern[n] == PATTERN_INNER) continue;
        bool pattern = p->pattern[n] != PATTERN_NONE; /* planned as one op on the pattern's inputs */
        const int *in = pattern ? &p->pattern_in[(size_t)n * PATTERN_INPUTS] : g->nodes[n].inputs;
        bool dims_only = !pattern && !*g->nodes[n].domain &&
                         (!strcmp(g->nodes[n].op_type, "Shape") || !strcmp(g->nodes[n].op_type, "Size"));
        if (p->pattern[n] == PATTERN_LAYER_NORM ||
            (!pattern && !*g->nodes[n].domain && !strcmp(g->nodes[n].op_type, "LayerNormalization")))
            if ((pattern || g->nodes[n].n_inputs > 0) && in[0] >= 0) p->ln_reader[in[0]] = n;
        for (int i = 0; i < (pattern ? PATTERN_INPUTS : g->nodes[n].n_inputs); i++)
            if (in[i] >= 0) {
                p->uses[in[i]]++;
                if (dims_only) p->shape_reads[in[i]]++;
                else p->reader[in[i]] = n;
            }
    }
}

/* p->from_dims, in the graph's (topological) order */
static void mark_from_dims(plan *p, const bool *live)
{
    const ir_graph *g = p->graph;
    for (int n = 0; n < g->n_nodes; n++) {
        const ir_node *nd = &g->nodes[n];
        if (!live[n] || *nd->domain) continue;
        bool dims = !strcmp(nd->op_type, "Shape") || !strcmp(nd->op_type, "Size") || !strcmp(nd->op_type, "Constant");
        if (!dims && nd->n_inputs > 0) {
            dims = true;
            for (int i = 0; i < nd->n_inputs && dims; i++)
                dims = nd->inputs[i] < 0 || p->from_dims[nd->inputs[i]] || p->values[nd->inputs[i]].host;
        }
        for (int o = 0; o < nd->n_outputs && dims; o++)
            if (nd->outputs[o] >= 0) p->from_dims[nd->outputs[o]] = true;
    }
}

vki_status plan_fuse_patterns(plan *p, const bool *live)
{
    count_uses(p, live);
    mark_from_dims(p, live);
    p->no_fusion = p->vk->opts.no_fusion; /* measure against the graph as it is */
    /* a Gradient reads forward values by name (not as inputs), which claims would remove */
    for (int n = 0; n < p->graph->n_nodes && !p->no_fusion; n++)
        p->no_fusion = live[n] && !strcmp(p->graph->nodes[n].op_type, "Gradient") &&
                       !strcmp(p->graph->nodes[n].domain, "ai.onnx.preview.training");
    if (p->no_fusion) return VKI_OK;
    matcher m = {p, live};
    bool found = false;
    for (int n = 0; n < p->graph->n_nodes * PATTERN_INPUTS; n++) p->pattern_in[n] = -1;
    VKI_TRY(merge_same_nodes(p, live));
    count_uses(p, live);
    for (int n = 0; n < p->graph->n_nodes; n++)
        if (match_gelu(&m, n) || match_layer_norm(&m, n) || match_mish(&m, n) || match_silu(&m, n) ||
            match_rms_norm(&m, n) || match_scatter_slices(&m, n)) found = true;
    if (found) count_uses(p, live);
    return VKI_OK;
}
