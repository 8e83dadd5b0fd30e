/* Control flow inlined at plan time: If, Loop and Scan nodes replaced by their subgraphs'
 * nodes (ir_graph_expand, declared in src/graph/ir.h). */
#include "reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The planner decides each If's branch, Loop's trip count and Scan's length once they are
 * known (src/ops/control.c) and asks for a graph with those nodes replaced by their
 * subgraphs' nodes: one copy per iteration, names prefixed by the instance
 * ("Loop_3[2]/sum"), outer-scope names resolved through the enclosing scopes. Nested
 * control nodes stay nodes and are decided in the next round. */

/* Nodes of an expanded graph, at most (nested loops multiply). */
#define EXPAND_MAX_NODES (1 << 22)

typedef struct expander {
    reader rd;
    int cap_nodes;
} expander;

static vki_status ex_reserve(expander *e, int extra)
{
    ir_graph *g = e->rd.g;
    if (g->n_nodes + extra > EXPAND_MAX_NODES)
        return vki_fail(VKI_ERROR_UNSUPPORTED, "unrolling control flow makes more than %d nodes", EXPAND_MAX_NODES);
    if (g->n_nodes + extra <= e->cap_nodes) return VKI_OK;
    int cap = e->cap_nodes * 2 > g->n_nodes + extra ? e->cap_nodes * 2 : g->n_nodes + extra + 16;
    ir_node *n = realloc(g->nodes, (size_t)cap * sizeof *n);
    if (!n) return reader_oom();
    memset(n + e->cap_nodes, 0, (size_t)(cap - e->cap_nodes) * sizeof *n);
    g->nodes = n;
    e->cap_nodes = cap;
    return VKI_OK;
}

/* A new intermediate named prefix + base (+ "~k" while that name is taken). */
static vki_status ex_value(expander *e, const char *prefix, const char *base, int *v)
{
    size_t n = strlen(prefix) + strlen(base) + 24;
    char *name = arena_alloc(&e->rd.g->arena, n);
    if (!name) return reader_oom();
    snprintf(name, n, "%s%s", prefix, base);
    for (int k = 1; find_value(&e->rd, name) >= 0; k++) snprintf(name, n, "%s%s~%d", prefix, base, k);
    return add_value(&e->rd, name, v);
}

static vki_status ex_node(expander *e, const char *op, const char *name, const int *in, int n_in, const int *out,
                          int n_out, ir_attr *attrs, int n_attrs)
{
    VKI_TRY(ex_reserve(e, 1));
    ir_graph *g = e->rd.g;
    int idx = g->n_nodes;
    ir_node *n = &g->nodes[idx];
    memset(n, 0, sizeof *n);
    n->name = name;
    n->op_type = op;
    n->domain = "";
    n->inputs = arena_alloc(&g->arena, (size_t)(n_in + 1) * sizeof(int));
    n->outputs = arena_alloc(&g->arena, (size_t)(n_out + 1) * sizeof(int));
    n->attrs = attrs ? attrs : arena_alloc(&g->arena, sizeof(ir_attr));
    if (!n->inputs || !n->outputs || !n->attrs) return reader_oom();
    if (n_in) memcpy(n->inputs, in, (size_t)n_in * sizeof(int)); /* a Constant has none (in is NULL) */
    if (n_out) memcpy(n->outputs, out, (size_t)n_out * sizeof(int));
    n->n_inputs = n_in;
    n->n_outputs = n_out;
    n->n_attrs = n_attrs;
    n->scopes = e->rd.scopes;
    n->n_scopes = e->rd.n_scopes;
    for (int k = 0; k < n_out; k++)
        if (out[k] >= 0) g->values[out[k]].producer = idx;
    g->n_nodes++;
    return VKI_OK;
}

static ir_attr *ex_attr_int(expander *e, const char *name, int64_t v)
{
    ir_attr *a = arena_alloc(&e->rd.g->arena, sizeof *a);
    if (!a) return NULL;
    a->name = name;
    a->type = ATTR_INT;
    a->i = v;
    return a;
}

/* A Constant node making an int64 tensor of n elements (rank 0 or 1). */
static vki_status ex_const_i64(expander *e, const char *prefix, const char *base, const int64_t *vals, int n, int rank,
                               int *v)
{
    vki_arena *a = &e->rd.g->arena;
    ir_attr *at = arena_alloc(a, sizeof *at);
    ir_tensor *t = arena_alloc(a, sizeof *t);
    int64_t *d = arena_alloc(a, (size_t)(n + 1) * sizeof *d);
    if (!at || !t || !d) return reader_oom();
    if (n) memcpy(d, vals, (size_t)n * sizeof *d);
    t->name = "";
    t->dtype = VKI_DTYPE_INT64;
    t->rank = rank;
    t->dims[0] = n;
    t->data = d;
    t->bytes = (size_t)n * sizeof *d;
    at->name = "value";
    at->type = ATTR_TENSOR;
    at->tensor = t;
    VKI_TRY(ex_value(e, prefix, base, v));
    return ex_node(e, "Constant", e->rd.g->values[*v].name, NULL, 0, v, 1, at, 1);
}

static vki_status ex_identity(expander *e, int from, int to)
{
    return ex_node(e, "Identity", e->rd.g->values[to].name, &from, 1, &to, 1, NULL, 0);
}

/* x with a new axis of length 1 (Unsqueeze by attribute before opset 13, by input after). */
static vki_status ex_unsqueeze(expander *e, const char *prefix, int x, int64_t axis, int *out)
{
    ir_graph *g = e->rd.g;
    VKI_TRY(ex_value(e, prefix, "unsqueezed", out));
    if (g->opset >= 13) {
        int axes;
        VKI_TRY(ex_const_i64(e, prefix, "axes", &axis, 1, 1, &axes));
        int in[2] = {x, axes};
        return ex_node(e, "Unsqueeze", g->values[*out].name, in, 2, out, 1, NULL, 0);
    }
    ir_attr *a = arena_alloc(&g->arena, sizeof *a);
    int64_t *ints = arena_alloc(&g->arena, sizeof *ints);
    if (!a || !ints) return reader_oom();
    *ints = axis;
    *a = (ir_attr){.name = "axes", .type = ATTR_INTS, .count = 1, .ints = ints};
    return ex_node(e, "Unsqueeze", g->values[*out].name, &x, 1, out, 1, a, 1);
}

/* out = the n values of parts, each with a new axis `axis`, concatenated along it. */
static vki_status ex_stack(expander *e, const char *prefix, const int *parts, int n, int64_t axis, int out)
{
    ir_graph *g = e->rd.g;
    int *u = malloc((size_t)(n + 1) * sizeof *u);
    if (!u) return reader_oom();
    vki_status st = VKI_OK;
    for (int i = 0; st == VKI_OK && i < n; i++) st = ex_unsqueeze(e, prefix, parts[i], axis, &u[i]);
    ir_attr *a = st == VKI_OK ? ex_attr_int(e, "axis", axis) : NULL;
    if (st == VKI_OK && !a) st = reader_oom();
    if (st == VKI_OK) st = ex_node(e, "Concat", g->values[out].name, u, n, &out, 1, a, 1);
    free(u);
    return st;
}

static char *ex_prefix(expander *e, const ir_node *owner, const char *label)
{
    size_t n = strlen(owner->name) + strlen(label) + 4;
    char *s = arena_alloc(&e->rd.g->arena, n);
    if (s) snprintf(s, n, "%s[%s]/", owner->name, label);
    return s;
}

/* One instance of the subgraph `graph` of `owner`, named by label: its formal inputs bound to
 * bind[0..n_bind), its outputs' values into outs[0..n_outs). */
static vki_status ex_subgraph(expander *e, const ir_node *owner, const char *label, const ir_attr *graph,
                              const int *bind, int n_bind, int *outs, int n_outs)
{
    reader *rd = &e->rd;
    ir_graph *g = rd->g;
    char *prefix = ex_prefix(e, owner, label);
    const char **scopes = arena_alloc(&g->arena, (size_t)(owner->n_scopes + 1) * sizeof *scopes);
    if (!prefix || !scopes) return reader_oom();
    for (int k = 0; k < owner->n_scopes; k++) scopes[k] = owner->scopes[k];
    scopes[owner->n_scopes] = prefix;
    const char *const *saved = rd->scopes;
    int saved_n = rd->n_scopes;
    rd->scopes = scopes;
    rd->n_scopes = owner->n_scopes + 1;
    vki_status st = VKI_OK;
    int n_in = 0, n_out = 0;
    pb_reader r = pb_init(graph->graph_bytes, graph->graph_len);
    pb_field f;
    while (st == VKI_OK && pb_next(&r, &f)) { /* formal inputs: bound by Identity nodes */
        if (f.number != 11 || f.wire != PB_LEN) continue;
        const char *name;
        ir_value info;
        st = parse_value_info(rd, &f, &name, &info);
        if (st != VKI_OK) break;
        if (n_in >= n_bind) {
            n_in++;
            continue;
        }
        int v;
        st = ex_value(e, prefix, name, &v);
        if (st == VKI_OK) st = ex_identity(e, bind[n_in], v);
        n_in++;
    }
    if (st == VKI_OK && n_in != n_bind)
        st = vki_fail(VKI_ERROR_MODEL, "node '%s' (%s): its subgraph '%s' has %d inputs, %d expected", owner->name,
                      owner->op_type, graph->name, n_in, n_bind);
    r = pb_init(graph->graph_bytes, graph->graph_len);
    while (st == VKI_OK && pb_next(&r, &f)) { /* initializers: Constant nodes */
        if (f.number != 5 || f.wire != PB_LEN) continue;
        ir_tensor *t = arena_alloc(&g->arena, sizeof *t);
        ir_attr *a = arena_alloc(&g->arena, sizeof *a);
        if (!t || !a) {
            st = reader_oom();
            break;
        }
        st = parse_tensor(f.data, f.len, t, &g->arena, rd->model);
        if (st != VKI_OK) break;
        *a = (ir_attr){.name = "value", .type = ATTR_TENSOR, .tensor = t};
        int v;
        st = ex_value(e, prefix, t->name, &v);
        if (st == VKI_OK) st = ex_node(e, "Constant", g->values[v].name, NULL, 0, &v, 1, a, 1);
    }
    r = pb_init(graph->graph_bytes, graph->graph_len);
    while (st == VKI_OK && pb_next(&r, &f)) {
        if (f.number != 1 || f.wire != PB_LEN) continue;
        st = ex_reserve(e, 1);
        if (st == VKI_OK) st = parse_node(rd, &f, g->n_nodes);
        if (st == VKI_OK) g->n_nodes++;
    }
    r = pb_init(graph->graph_bytes, graph->graph_len);
    while (st == VKI_OK && pb_next(&r, &f)) {
        if (f.number != 12 || f.wire != PB_LEN) continue;
        const char *name;
        ir_value info;
        st = parse_value_info(rd, &f, &name, &info);
        if (st != VKI_OK) break;
        int v = resolve_value(rd, name);
        if (v == -2) st = reader_oom();
        else if (v < 0)
            st = vki_fail(VKI_ERROR_MODEL, "node '%s' (%s): subgraph '%s' outputs '%s', which it does not define",
                          owner->name, owner->op_type, graph->name, name);
        else if (n_out < n_outs) outs[n_out] = v;
        n_out++;
    }
    if (st == VKI_OK && r.error) st = reader_bad("truncated subgraph");
    if (st == VKI_OK && n_out != n_outs)
        st = vki_fail(VKI_ERROR_MODEL, "node '%s' (%s): its subgraph '%s' has %d outputs, %d expected", owner->name,
                      owner->op_type, graph->name, n_out, n_outs);
    rd->scopes = saved;
    rd->n_scopes = saved_n;
    return st;
}

static const ir_attr *ex_graph_attr(const ir_node *n, const char *name)
{
    const ir_attr *a = ir_find_attr(n, name);
    return a && a->type == ATTR_GRAPH ? a : NULL;
}

/* Attribute of the Where nodes that select by a condition computed on the GPU: src/ops/binary.c
 * then requires its two value operands to have one shape. */
#define SELECT_ATTR "vkinfer.select"

/* x (one element) as a scalar, so that a Where on it keeps its other operands' shapes. */
static vki_status ex_scalar(expander *e, const char *prefix, int x, int *out)
{
    if (e->rd.g->opset < 5) return vki_fail(VKI_ERROR_UNSUPPORTED, "a condition computed on the GPU needs opset 5 or later");
    int shape;
    VKI_TRY(ex_const_i64(e, prefix, "scalar_shape", NULL, 0, 1, &shape));
    VKI_TRY(ex_value(e, prefix, "scalar", out));
    int in[2] = {x, shape};
    return ex_node(e, "Reshape", e->rd.g->values[*out].name, in, 2, out, 1, NULL, 0);
}

/* out = Where(cond, a, b), the two values of one shape. */
static vki_status ex_select(expander *e, int cond, int a, int b, int out)
{
    ir_attr *at = ex_attr_int(e, SELECT_ATTR, 1);
    if (!at) return reader_oom();
    int in[3] = {cond, a, b};
    return ex_node(e, "Where", e->rd.g->values[out].name, in, 3, &out, 1, at, 1);
}

/* If on a condition computed on the GPU: both branches, each output selected by it. */
static vki_status ex_if_both(expander *e, const ir_node *n)
{
    const ir_attr *then_g = ex_graph_attr(n, "then_branch"), *else_g = ex_graph_attr(n, "else_branch");
    if (!then_g || !else_g) return vki_fail(VKI_ERROR_MODEL, "node '%s' (If) lacks a then_branch or else_branch graph", n->name);
    int *outs = malloc((size_t)(2 * n->n_outputs + 1) * sizeof *outs);
    char *prefix = ex_prefix(e, n, "select");
    if (!outs || !prefix) {
        free(outs);
        return reader_oom();
    }
    int cond;
    vki_status st = ex_subgraph(e, n, "then", then_g, NULL, 0, outs, n->n_outputs);
    if (st == VKI_OK) st = ex_subgraph(e, n, "else", else_g, NULL, 0, outs + n->n_outputs, n->n_outputs);
    if (st == VKI_OK) st = ex_scalar(e, prefix, n->inputs[0], &cond);
    for (int k = 0; st == VKI_OK && k < n->n_outputs; k++)
        if (n->outputs[k] >= 0) st = ex_select(e, cond, outs[k], outs[n->n_outputs + k], n->outputs[k]);
    free(outs);
    return st;
}

static vki_status ex_if(expander *e, const ir_node *n, int64_t branch)
{
    if (branch & IR_DECIDE_ON_GPU) return ex_if_both(e, n);
    const ir_attr *body = ex_graph_attr(n, branch ? "then_branch" : "else_branch");
    if (!body) return vki_fail(VKI_ERROR_MODEL, "node '%s' (If) has no %s graph", n->name, branch ? "then_branch" : "else_branch");
    int *outs = malloc((size_t)(n->n_outputs + 1) * sizeof *outs);
    if (!outs) return reader_oom();
    vki_status st = ex_subgraph(e, n, branch ? "then" : "else", body, NULL, 0, outs, n->n_outputs);
    for (int k = 0; st == VKI_OK && k < n->n_outputs; k++)
        if (n->outputs[k] >= 0) st = ex_identity(e, outs[k], n->outputs[k]);
    free(outs);
    return st;
}

/* Whether v is `cond` passed through Identity nodes. */
static bool ex_passes_through(const ir_graph *g, int v, int cond)
{
    for (int hops = 0; hops < 64 && v >= 0; hops++) {
        if (v == cond) return true;
        int p = g->values[v].producer;
        if (p < 0 || strcmp(g->nodes[p].op_type, "Identity") || g->nodes[p].n_inputs < 1) return false;
        v = g->nodes[p].inputs[0];
    }
    return false;
}

/* target = parts[0..n) stacked along a new axis 0, after `acc` (already stacked) when acc >= 0. */
static vki_status ex_append(expander *e, const char *prefix, int acc, const int *parts, int n, int target)
{
    if (acc < 0) return ex_stack(e, prefix, parts, n, 0, target);
    if (n == 0) return ex_identity(e, acc, target);
    int in[2] = {acc, -1};
    VKI_TRY(ex_value(e, prefix, "stacked", &in[1]));
    VKI_TRY(ex_stack(e, prefix, parts, n, 0, in[1]));
    ir_attr *a = ex_attr_int(e, "axis", 0);
    if (!a) return reader_oom();
    return ex_node(e, "Concat", e->rd.g->values[target].name, in, 2, &target, 1, a, 1);
}


/* Loop: `trips` copies of the body. A body whose condition output is its condition input
 * passed through is unrolled in one go; otherwise one iteration is, followed by a Loop of the
 * rest, decided in the next round once that iteration's condition is known. */
static vki_status ex_loop(expander *e, const ir_node *n, int64_t trips)
{
    ir_graph *g = e->rd.g;
    bool on_gpu = (trips & IR_DECIDE_ON_GPU) != 0; /* each iteration kept while the condition holds */
    bool read_m = (trips & IR_DECIDE_READ_M) != 0, read_cond = (trips & IR_DECIDE_READ_COND) != 0;
    trips &= ~(IR_DECIDE_ON_GPU | IR_DECIDE_READ_M | IR_DECIDE_READ_COND);
    const ir_attr *body = ex_graph_attr(n, "body");
    if (!body) return vki_fail(VKI_ERROR_MODEL, "node '%s' (Loop) has no body graph", n->name);
    int64_t first = ir_attr_int(n, IR_LOOP_FIRST_ITERATION, 0);
    int n_acc = (int)ir_attr_int(n, IR_LOOP_SCANNED, 0);
    int n_carried = n->n_inputs - 2 - n_acc;
    int n_scan = n->n_outputs - n_carried;
    if (n_carried < 0 || n_scan < 0 || (n_acc && n_acc != n_scan))
        return vki_fail(VKI_ERROR_MODEL, "node '%s' (Loop) has %d inputs and %d outputs", n->name, n->n_inputs, n->n_outputs);
    for (int k = 0; k < n_scan; k++) {
        if (trips == 0 && !n_acc && n->outputs[n_carried + k] >= 0)
            return vki_fail(VKI_ERROR_UNSUPPORTED, "node '%s' (Loop) runs 0 times: its scan output %d would be empty with a "
                            "shape only the body knows; not supported", n->name, k);
        if (on_gpu && (n_acc || n->outputs[n_carried + k] >= 0))
            return vki_fail(VKI_ERROR_UNSUPPORTED, "node '%s' (Loop): its condition is computed on the GPU from data, so its "
                            "scan output %d would have a data-dependent length; not supported", n->name, k);
    }
    size_t n_bind = (size_t)n_carried + 2, n_outs = (size_t)n_carried + 1 + (size_t)n_scan;
    int *bind = malloc(n_bind * sizeof *bind), *outs = malloc(n_outs * sizeof *outs);
    int *scans = malloc(((size_t)n_scan * (size_t)trips + 1) * sizeof *scans);
    int *rest = malloc((n_bind + (size_t)n_scan + 1) * sizeof *rest);
    vki_status st = bind && outs && scans && rest ? VKI_OK : reader_oom();
    char *prefix = ex_prefix(e, n, "loop");
    if (st == VKI_OK && !prefix) st = reader_oom();
    int cond = n->inputs[1];
    if (st == VKI_OK && cond < 0) { /* no condition: true throughout */
        ir_tensor *t = arena_alloc(&g->arena, sizeof *t);
        ir_attr *a = arena_alloc(&g->arena, sizeof *a);
        uint8_t *one = arena_alloc(&g->arena, 1);
        if (!t || !a || !one) st = reader_oom();
        else {
            *one = 1;
            *t = (ir_tensor){.name = "", .dtype = VKI_DTYPE_BOOL, .data = one, .bytes = 1};
            *a = (ir_attr){.name = "value", .type = ATTR_TENSOR, .tensor = t};
            st = ex_value(e, prefix, "cond", &cond);
            if (st == VKI_OK) st = ex_node(e, "Constant", g->values[cond].name, NULL, 0, &cond, 1, a, 1);
        }
    }
    /* the values this decision read back, read again where the Loop was (IR_READ_BACK) */
    for (int r = 0; st == VKI_OK && r < 2; r++) {
        if (!(r ? read_cond : read_m)) continue;
        int read;
        ir_attr *a = ex_attr_int(e, IR_READ_BACK, r ? 1 : IR_MAX_TRIPS);
        st = a ? ex_value(e, prefix, r ? "cond_read" : "trips_read", &read) : reader_oom();
        if (st == VKI_OK) st = ex_node(e, "Identity", g->values[read].name, &n->inputs[r], 1, &read, 1, a, 1);
    }
    for (int k = 0; st == VKI_OK && k < n_carried; k++) bind[2 + k] = n->inputs[2 + k];
    int64_t done = 0;
    bool more = false; /* the rest runs as a Loop decided in the next round */
    for (int64_t i = 0; st == VKI_OK && i < trips && !more; i++) {
        char label[32];
        int64_t it = first + i;
        snprintf(label, sizeof label, "%lld", (long long)it);
        char *ip = ex_prefix(e, n, label);
        if (!ip) {
            st = reader_oom();
            break;
        }
        st = ex_const_i64(e, ip, "iteration", &it, 1, 0, &bind[0]);
        bind[1] = cond;
        if (st == VKI_OK) st = ex_subgraph(e, n, label, body, bind, (int)n_bind, outs, (int)n_outs);
        if (st != VKI_OK) break;
        if (on_gpu) { /* state = cond ? the body's : as it was; cond = cond and the body's */
            int active = -1, next_cond = -1, in[2];
            st = ex_scalar(e, ip, cond, &active);
            for (int k = 0; st == VKI_OK && k < n_carried; k++) {
                int kept;
                st = ex_value(e, ip, "kept", &kept);
                if (st == VKI_OK) st = ex_select(e, active, outs[1 + k], bind[2 + k], kept);
                bind[2 + k] = kept;
            }
            if (st == VKI_OK) st = ex_value(e, ip, "cond", &next_cond);
            in[0] = active, in[1] = outs[0];
            if (st == VKI_OK) st = ex_node(e, "And", g->values[next_cond].name, in, 2, &next_cond, 1, NULL, 0);
            cond = next_cond;
            done++;
            continue;
        }
        /* the body's formal condition input is Identity(cond): a body that passes it through
         * runs every iteration */
        bool passes = ex_passes_through(g, outs[0], cond);
        if (n->inputs[0] < 0 && passes) { /* no M, and a condition that stays true */
            st = vki_fail(VKI_ERROR_MODEL, "node '%s' (Loop) has no trip count M and its body passes its condition through, "
                          "which is true: the loop never ends", n->name);
            break;
        }
        more = i + 1 < trips && !passes;
        cond = outs[0];
        for (int k = 0; k < n_carried; k++) bind[2 + k] = outs[1 + k];
        for (int k = 0; k < n_scan; k++) scans[(size_t)k * (size_t)trips + (size_t)i] = outs[1 + n_carried + k];
        done++;
    }
    if (st == VKI_OK && more) {
        int64_t left = trips - done, next = first + done;
        rest[0] = -1; /* a Loop without M continues as one */
        if (n->inputs[0] >= 0) st = ex_const_i64(e, prefix, "trips_left", &left, 1, 0, &rest[0]);
        rest[1] = cond;
        for (int k = 0; k < n_carried; k++) rest[2 + k] = bind[2 + k];
        for (int k = 0; st == VKI_OK && k < n_scan; k++) {
            st = ex_value(e, prefix, "scanned", &rest[n_bind + (size_t)k]);
            if (st == VKI_OK)
                st = ex_append(e, prefix, n_acc ? n->inputs[n_bind + (size_t)k] : -1, &scans[(size_t)k * (size_t)trips],
                               (int)done, rest[n_bind + (size_t)k]);
        }
        ir_attr *attrs = st == VKI_OK ? arena_alloc(&g->arena, (size_t)(n->n_attrs + 2) * sizeof *attrs) : NULL;
        if (st == VKI_OK && !attrs) st = reader_oom();
        if (st == VKI_OK) {
            int na = 0;
            for (int k = 0; k < n->n_attrs; k++)
                if (strcmp(n->attrs[k].name, IR_LOOP_FIRST_ITERATION) && strcmp(n->attrs[k].name, IR_LOOP_SCANNED))
                    attrs[na++] = n->attrs[k];
            attrs[na++] = (ir_attr){.name = IR_LOOP_FIRST_ITERATION, .type = ATTR_INT, .i = next};
            attrs[na++] = (ir_attr){.name = IR_LOOP_SCANNED, .type = ATTR_INT, .i = n_scan};
            st = ex_node(e, "Loop", n->name, rest, (int)n_bind + n_scan, n->outputs, n->n_outputs, attrs, na);
        }
        if (st == VKI_OK) { /* its body reads names of the scopes this loop was in */
            g->nodes[g->n_nodes - 1].scopes = n->scopes;
            g->nodes[g->n_nodes - 1].n_scopes = n->n_scopes;
        }
    }
    for (int k = 0; st == VKI_OK && !more && k < n_carried; k++)
        if (n->outputs[k] >= 0) st = ex_identity(e, bind[2 + k], n->outputs[k]);
    for (int k = 0; st == VKI_OK && !more && k < n_scan; k++)
        if (n->outputs[n_carried + k] >= 0)
            st = ex_append(e, prefix, n_acc ? n->inputs[n_bind + (size_t)k] : -1, &scans[(size_t)k * (size_t)trips], (int)done,
                           n->outputs[n_carried + k]);
    free(bind);
    free(outs);
    free(scans);
    free(rest);
    return st;
}

/* Gather(x, Constant(pos), axis) into a new value. */
static vki_status ex_take(expander *e, const char *prefix, int x, int64_t pos, int64_t axis, int *out)
{
    int idx;
    VKI_TRY(ex_const_i64(e, prefix, "index", &pos, 1, 0, &idx));
    ir_attr *a = ex_attr_int(e, "axis", axis);
    if (!a) return reader_oom();
    VKI_TRY(ex_value(e, prefix, "slice", out));
    int in[2] = {x, idx};
    return ex_node(e, "Gather", e->rd.g->values[*out].name, in, 2, out, 1, a, 1);
}

/* One scan of `len` steps: state[0..n_state) updated in place; scan input j sliced along
 * in_axes[j] (backwards where in_dirs[j]); scan output k stacked along out_axes[k] into
 * targets[k] (skipped where -1; reversed where out_dirs[k]). */
static vki_status ex_scan_run(expander *e, const ir_node *n, const ir_attr *body, const char *tag, int64_t len,
                              int n_state, int n_in, int n_scan, int *state, const int *xs, const int64_t *in_axes,
                              const int64_t *in_dirs, const int64_t *out_axes, const int64_t *out_dirs, const int *targets)
{
    size_t n_bind = (size_t)(n_state + n_in), n_outs = (size_t)(n_state + n_scan);
    int *bind = malloc((n_bind + 1) * sizeof *bind), *outs = malloc((n_outs + 1) * sizeof *outs);
    int *scans = malloc(((size_t)n_scan * (size_t)len + 1) * sizeof *scans);
    vki_status st = bind && outs && scans ? VKI_OK : reader_oom();
    char *prefix = ex_prefix(e, n, tag);
    if (st == VKI_OK && !prefix) st = reader_oom();
    for (int k = 0; st == VKI_OK && k < n_state; k++) bind[k] = state[k];
    for (int64_t t = 0; st == VKI_OK && t < len; t++) {
        char label[64];
        snprintf(label, sizeof label, "%s%lld", tag, (long long)t);
        char *ip = ex_prefix(e, n, label);
        if (!ip) {
            st = reader_oom();
            break;
        }
        for (int j = 0; st == VKI_OK && j < n_in; j++)
            st = ex_take(e, ip, xs[j], in_dirs[j] ? len - 1 - t : t, in_axes[j], &bind[n_state + j]);
        if (st == VKI_OK) st = ex_subgraph(e, n, label, body, bind, (int)n_bind, outs, (int)n_outs);
        if (st != VKI_OK) break;
        for (int k = 0; k < n_state; k++) bind[k] = outs[k];
        for (int k = 0; k < n_scan; k++) scans[(size_t)k * (size_t)len + (size_t)(out_dirs[k] ? len - 1 - t : t)] = outs[n_state + k];
    }
    for (int k = 0; st == VKI_OK && k < n_state; k++) state[k] = bind[k];
    for (int k = 0; st == VKI_OK && k < n_scan; k++)
        if (targets[k] >= 0) st = ex_stack(e, prefix, &scans[(size_t)k * (size_t)len], (int)len, out_axes[k], targets[k]);
    free(bind);
    free(outs);
    free(scans);
    return st;
}

/* Scan 9+: decision = len. Scan 8 (a batch axis 0 on every input and output, the scan axis 1
 * of scan inputs, no sequence_lens): decision = batch << 32 | len, one scan per batch entry
 * and the results stacked along axis 0. */
static vki_status ex_scan(expander *e, const ir_node *n, int64_t decision)
{
    ir_graph *g = e->rd.g;
    const ir_attr *body = ex_graph_attr(n, "body");
    if (!body) return vki_fail(VKI_ERROR_MODEL, "node '%s' (Scan) has no body graph", n->name);
    bool v8 = g->opset < 9;
    int first = v8 ? 1 : 0; /* Scan-8's input 0 is sequence_lens */
    int n_in = (int)ir_attr_int(n, "num_scan_inputs", -1);
    int n_state = n->n_inputs - first - n_in;
    int n_scan = n->n_outputs - n_state;
    if (n_in < 1 || n_state < 0 || n_scan < 0)
        return vki_fail(VKI_ERROR_MODEL, "node '%s' (Scan) has %d inputs, %d outputs and num_scan_inputs %d", n->name,
                        n->n_inputs, n->n_outputs, n_in);
    const int64_t *ia = NULL, *id = NULL, *oa = NULL, *od = NULL;
    int c_ia = ir_attr_ints(n, "scan_input_axes", &ia);
    int c_id = ir_attr_ints(n, v8 ? "directions" : "scan_input_directions", &id);
    int c_oa = ir_attr_ints(n, "scan_output_axes", &oa), c_od = ir_attr_ints(n, "scan_output_directions", &od);
    if ((c_ia >= 0 && c_ia != n_in) || (c_id >= 0 && c_id != n_in) || (c_oa >= 0 && c_oa != n_scan) ||
        (c_od >= 0 && c_od != n_scan))
        return vki_fail(VKI_ERROR_MODEL, "node '%s' (Scan): an axes or directions attribute has the wrong length", n->name);
    size_t nn = (size_t)(n_in + n_scan + n_state) + 1;
    int64_t *arr = calloc(4 * nn, sizeof *arr);
    int *state = malloc(nn * sizeof *state), *xs = malloc(nn * sizeof *xs), *targets = malloc(nn * sizeof *targets);
    vki_status st = arr && state && xs && targets ? VKI_OK : reader_oom();
    int64_t *in_axes = arr, *in_dirs = arr + nn, *out_axes = arr + 2 * nn, *out_dirs = arr + 3 * nn;
    for (int j = 0; st == VKI_OK && j < n_in; j++) {
        in_axes[j] = c_ia >= 0 ? ia[j] : 0;
        in_dirs[j] = c_id >= 0 ? id[j] : 0;
    }
    for (int k = 0; st == VKI_OK && k < n_scan; k++) {
        out_axes[k] = c_oa >= 0 ? oa[k] : 0;
        out_dirs[k] = c_od >= 0 ? od[k] : 0;
    }
    if (st == VKI_OK && !v8) {
        for (int k = 0; k < n_state; k++) state[k] = n->inputs[k];
        for (int j = 0; j < n_in; j++) xs[j] = n->inputs[n_state + j];
        for (int k = 0; k < n_scan; k++) targets[k] = n->outputs[n_state + k];
        st = ex_scan_run(e, n, body, "", decision, n_state, n_in, n_scan, state, xs, in_axes, in_dirs, out_axes, out_dirs,
                         targets);
        for (int k = 0; st == VKI_OK && k < n_state; k++)
            if (n->outputs[k] >= 0) st = ex_identity(e, state[k], n->outputs[k]);
    } else if (st == VKI_OK) {
        int64_t batch = decision >> 32, len = decision & 0xffffffff;
        size_t per = (size_t)(n_state + n_scan);
        int *res = malloc(((size_t)batch * per + 1) * sizeof *res);
        char *prefix = ex_prefix(e, n, "batch");
        if (!res || !prefix) st = reader_oom();
        for (int64_t b = 0; st == VKI_OK && b < batch; b++) {
            char tag[40];
            snprintf(tag, sizeof tag, "b%lld.", (long long)b);
            char *bp = ex_prefix(e, n, tag);
            if (!bp) st = reader_oom();
            for (int k = 0; st == VKI_OK && k < n_state; k++)
                st = ex_take(e, bp, n->inputs[first + k], b, 0, &state[k]);
            for (int j = 0; st == VKI_OK && j < n_in; j++) st = ex_take(e, bp, n->inputs[first + n_state + j], b, 0, &xs[j]);
            for (int k = 0; st == VKI_OK && k < n_scan; k++) st = ex_value(e, bp, "scanned", &targets[k]);
            if (st == VKI_OK)
                st = ex_scan_run(e, n, body, tag, len, n_state, n_in, n_scan, state, xs, in_axes, in_dirs, out_axes, out_dirs,
                                 targets);
            for (int k = 0; st == VKI_OK && k < n_state; k++) res[(size_t)k * (size_t)batch + (size_t)b] = state[k];
            for (int k = 0; st == VKI_OK && k < n_scan; k++) res[(size_t)(n_state + k) * (size_t)batch + (size_t)b] = targets[k];
        }
        for (int k = 0; st == VKI_OK && k < (int)per; k++)
            if (n->outputs[k] >= 0) st = ex_stack(e, prefix, &res[(size_t)k * (size_t)batch], (int)batch, 0, n->outputs[k]);
        free(res);
    }
    free(arr);
    free(state);
    free(xs);
    free(targets);
    return st;
}

/* SequenceMap: the body once per element, decision = N | mask << 32 (bit j: input j is a
 * sequence, bound to its element i by SequenceAt; other inputs bound as they are); output k
 * is SequenceConstruct of the body's output k of every instance. */
static vki_status ex_sequence_map(expander *e, const ir_node *n, int64_t decision)
{
    ir_graph *g = e->rd.g;
    int64_t len = decision & 0xffffffff, mask = decision >> 32;
    const ir_attr *body = ex_graph_attr(n, "body");
    if (!body) return vki_fail(VKI_ERROR_MODEL, "node '%s' (SequenceMap) has no body graph", n->name);
    size_t n_out = (size_t)n->n_outputs;
    int *bind = malloc(((size_t)n->n_inputs + 1) * sizeof *bind), *outs = malloc((n_out + 1) * sizeof *outs);
    int *elems = malloc((n_out * (size_t)len + 1) * sizeof *elems);
    vki_status st = bind && outs && elems ? VKI_OK : reader_oom();
    for (int64_t i = 0; st == VKI_OK && i < len; i++) {
        char label[32];
        snprintf(label, sizeof label, "%lld", (long long)i);
        char *ip = ex_prefix(e, n, label);
        if (!ip) {
            st = reader_oom();
            break;
        }
        int pos = -1;
        for (int j = 0; st == VKI_OK && j < n->n_inputs; j++) {
            bind[j] = n->inputs[j];
            if (!(mask >> j & 1)) continue;
            if (pos < 0) st = ex_const_i64(e, ip, "position", &i, 1, 0, &pos);
            if (st == VKI_OK) st = ex_value(e, ip, "element", &bind[j]);
            int in[2] = {n->inputs[j], pos};
            if (st == VKI_OK) st = ex_node(e, "SequenceAt", g->values[bind[j]].name, in, 2, &bind[j], 1, NULL, 0);
        }
        if (st == VKI_OK) st = ex_subgraph(e, n, label, body, bind, n->n_inputs, outs, (int)n_out);
        for (size_t k = 0; st == VKI_OK && k < n_out; k++) elems[k * (size_t)len + (size_t)i] = outs[k];
    }
    for (size_t k = 0; st == VKI_OK && k < n_out; k++)
        if (n->outputs[k] >= 0)
            st = ex_node(e, "SequenceConstruct", g->values[n->outputs[k]].name, &elems[k * (size_t)len], (int)len,
                         &n->outputs[k], 1, NULL, 0);
    free(bind);
    free(outs);
    free(elems);
    return st;
}

vki_status ir_graph_expand(ir_graph *src, const int64_t *decision, ir_graph **out)
{
    *out = NULL;
    ir_graph *g = calloc(1, sizeof *g);
    if (!g) return reader_oom();
    g->expanded = true;
    g->base = src;
    g->opset = src->opset;
    g->ir_version = src->ir_version;
    g->inputs = src->inputs;
    g->n_inputs = src->n_inputs;
    g->outputs = src->outputs;
    g->n_outputs = src->n_outputs;
    g->cap_values = src->n_values + 64;
    g->values = malloc((size_t)g->cap_values * sizeof *g->values);
    expander e = {.rd = {.g = g}};
    vki_status st = g->values ? VKI_OK : reader_oom();
    if (st == VKI_OK) {
        if (src->n_values) memcpy(g->values, src->values, (size_t)src->n_values * sizeof *g->values);
        g->n_values = src->n_values;
        for (int v = 0; v < g->n_values; v++) g->values[v].producer = -1;
    }
    while (st == VKI_OK && (size_t)(g->n_values + 1) * 2 > e.rd.table_cap) st = grow_table(&e.rd);
    if (st == VKI_OK) st = ex_reserve(&e, src->n_nodes + 16);
    for (int n = 0; st == VKI_OK && n < src->n_nodes; n++) {
        const ir_node *node = &src->nodes[n];
        if (decision[n] == INT64_MIN) {
            st = ex_reserve(&e, 1);
            if (st != VKI_OK) break;
            g->nodes[g->n_nodes] = *node;
            for (int k = 0; k < node->n_outputs; k++)
                if (node->outputs[k] >= 0) g->values[node->outputs[k]].producer = g->n_nodes;
            g->n_nodes++;
        } else if (!strcmp(node->op_type, "If")) {
            st = ex_if(&e, node, decision[n]);
        } else if (!strcmp(node->op_type, "Loop")) {
            st = ex_loop(&e, node, decision[n]);
        } else if (!strcmp(node->op_type, "Scan")) {
            st = ex_scan(&e, node, decision[n]);
        } else if (!strcmp(node->op_type, "SequenceMap")) {
            st = ex_sequence_map(&e, node, decision[n]);
        } else {
            st = vki_fail(VKI_ERROR_MODEL, "internal: node '%s' (%s) is not a control-flow node", node->name, node->op_type);
        }
    }
    free(e.rd.table);
    if (st != VKI_OK) {
        g->base = NULL;
        g->expanded = false;
        arena_free(&g->arena);
        free(g->values);
        free(g->nodes);
        free(g);
        return st;
    }
    *out = g;
    return VKI_OK;
}
