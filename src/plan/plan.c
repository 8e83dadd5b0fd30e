/* Plan creation: per-node shape inference, folding and kernel choice in graph order, then
 * memory placement and recording. */
#include "plan.h"
#include "strided_copy.h"

#include <stdlib.h>
#include <string.h>

gpu_storage plan_storage_for(const plan *p, int v, vki_dtype t)
{
    const ir_graph *g = p->graph;
    bool io = v >= 0 && v < g->n_values && (g->values[v].is_output || g->values[v].kind == VALUE_INPUT);
    if (io) return storage_native(t); /* the user's bytes, copied as they are (widened dtypes: converted) */
    if (t == VKI_DTYPE_FLOAT && p->fp16_mode) return GPU_F16;
    return storage_native(t);
}

int plan_root(const plan *p, int v)
{
    while (p->values[v].alias_of >= 0) v = p->values[v].alias_of;
    return v;
}

vki_status plan_reserve_values(plan *p, int extra)
{
    if (p->n_values + extra <= p->cap_values) return VKI_OK;
    if (extra > (1 << 24) || p->n_values > (1 << 26)) return vki_fail(VKI_ERROR_UNSUPPORTED, "more than 2^26 values in one plan");
    int cap = p->cap_values * 2 > p->n_values + extra ? p->cap_values * 2 : p->n_values + extra;
    plan_value *values = realloc(p->values, (size_t)cap * sizeof *values);
    if (values) p->values = values;
    int *converted = realloc(p->converted, (size_t)cap * GPU_STORAGE_COUNT * sizeof *converted);
    if (converted) p->converted = converted;
    int *out_copy = realloc(p->out_copy, (size_t)cap * sizeof *out_copy);
    if (out_copy) p->out_copy = out_copy;
    int *owner = realloc(p->temp_owner, (size_t)cap * sizeof *owner);
    if (owner) p->temp_owner = owner;
    if (!values || !converted || !out_copy || !owner) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    memset(p->values + p->cap_values, 0, (size_t)(cap - p->cap_values) * sizeof *values);
    for (int v = p->cap_values; v < cap; v++) {
        p->values[v].alias_of = -1;
        p->values[v].first_use = p->values[v].last_use = -1;
        p->out_copy[v] = -1;
        p->temp_owner[v] = 0;
        for (int k = 0; k < GPU_STORAGE_COUNT; k++) p->converted[(size_t)v * GPU_STORAGE_COUNT + k] = -1;
    }
    p->cap_values = cap;
    return VKI_OK;
}

/* A new value past the graph's (an element of a sequence or optional graph input). */
static int new_value(plan *p)
{
    int v = p->n_values++;
    memset(&p->values[v], 0, sizeof p->values[v]);
    p->values[v].alias_of = -1;
    p->values[v].first_use = p->values[v].last_use = -1;
    p->temp_owner[v] = -1;
    return v;
}

/* The tensors of graph inputs (struct plan: io_in): a sequence or optional input becomes a
 * value listing new element values, each a tensor copied from the host. */
static vki_status plan_inputs(plan *p, const int *counts, int n_io)
{
    const ir_graph *g = p->graph;
    p->io_in = calloc((size_t)n_io + 1, sizeof *p->io_in);
    p->in_first = calloc((size_t)g->n_inputs + 1, sizeof *p->in_first);
    p->in_count = calloc((size_t)g->n_inputs + 1, sizeof *p->in_count);
    if (!p->io_in || !p->in_first || !p->in_count) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    int k = 0;
    for (int i = 0; i < g->n_inputs; i++) {
        int v = g->inputs[i], n = counts ? counts[i] : 1;
        const ir_value *iv = &g->values[v];
        plan_value *pv = &p->values[v];
        p->in_first[i] = k;
        p->in_count[i] = n;
        if (iv->type_kind == IR_TENSOR) {
            if (n != 1) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "input '%s' is a tensor, given as %d", iv->name, n);
            p->io_in[k++] = v;
            continue;
        }
        bool seq = iv->type_kind == IR_SEQUENCE || iv->type_kind == IR_OPTIONAL_SEQUENCE;
        pv->dtype = iv->dtype;
        pv->shaped = true;
        int holder = v; /* the value listing the elements */
        if (iv->type_kind == IR_OPTIONAL || iv->type_kind == IR_OPTIONAL_SEQUENCE) {
            pv->kind = PV_OPTIONAL;
            if (n < 0) continue; /* none */
            pv->n_items = 1;
            pv->items = arena_alloc(&p->arena, sizeof(int));
            if (!pv->items) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
            if (!seq) {
                pv->items[0] = new_value(p);
                p->io_in[k++] = pv->items[0];
                continue;
            }
            holder = pv->items[0] = new_value(p);
            p->values[holder].dtype = iv->dtype;
            p->values[holder].shaped = true;
        } else if (n < 0) {
            return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "input '%s' is a sequence; it cannot be none", iv->name);
        }
        plan_value *h = &p->values[holder];
        h->kind = PV_SEQUENCE;
        h->n_items = n;
        h->items = arena_alloc(&p->arena, ((size_t)n + 1) * sizeof(int));
        if (!h->items) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        for (int e = 0; e < n; e++) p->io_in[k++] = h->items[e] = new_value(p);
    }
    p->n_io_in = k;
    return VKI_OK;
}

static vki_status init_values(plan *p, const int *counts, int n_io, const int *ranks, const int64_t *dims)
{
    const ir_graph *g = p->graph;
    for (int v = 0; v < p->cap_values; v++) {
        p->values[v].alias_of = -1;
        p->values[v].first_use = p->values[v].last_use = -1;
    }
    for (int v = 0; v < g->n_values; v++) {
        const ir_value *iv = &g->values[v];
        plan_value *pv = &p->values[v];
        if (iv->kind == VALUE_INITIALIZER) {
            pv->dtype = iv->dtype;
            pv->rank = iv->init.rank;
            memcpy(pv->dims, iv->init.dims, sizeof pv->dims);
            pv->host = iv->init.data;
            pv->host_bytes = iv->init.bytes;
            pv->storage = plan_storage_for(p, v, pv->dtype);
            pv->shaped = true;
        }
    }
    VKI_TRY(plan_inputs(p, counts, n_io));
    for (int i = 0; i < g->n_inputs; i++)
        for (int e = 0; e < p->in_count[i]; e++) {
            int k = p->in_first[i] + e, v = p->io_in[k];
            plan_value *pv = &p->values[v];
            pv->dtype = g->values[g->inputs[i]].dtype; /* an element's: the session checked it */
            pv->storage = v < g->n_values ? plan_storage_for(p, v, pv->dtype) : storage_native(pv->dtype);
            pv->rank = ranks[k];
            memcpy(pv->dims, dims + (size_t)k * VKI_MAX_RANK, sizeof pv->dims);
            /* shapes declared by the file (planning at session creation) are bounded like the
             * ones set at run time, so that no op's size arithmetic can overflow */
            if (shape_numel(pv->dims, pv->rank) > (int64_t)1 << 40) {
                char shape[256];
                return vki_fail(VKI_ERROR_SHAPE, "input '%s' has shape %s: more than 2^40 elements",
                                g->values[g->inputs[i]].name, shape_str(pv->dims, pv->rank, shape, sizeof shape));
            }
            pv->shaped = true;
        }
    return VKI_OK;
}

/* The tensors of graph outputs (struct plan: io_out). */
static vki_status plan_outputs(plan *p)
{
    const ir_graph *g = p->graph;
    int total = 0;
    p->out_first = calloc((size_t)g->n_outputs + 1, sizeof *p->out_first);
    p->out_count = calloc((size_t)g->n_outputs + 1, sizeof *p->out_count);
    if (!p->out_first || !p->out_count) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int i = 0; i < g->n_outputs; i++) {
        VKI_TRY(seq_flatten(p, g->outputs[i], NULL, &p->out_count[i]));
        total += p->out_count[i] > 0 ? p->out_count[i] : 0;
    }
    p->io_out = calloc((size_t)total + 1, sizeof *p->io_out);
    if (!p->io_out) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int i = 0; i < g->n_outputs; i++) {
        p->out_first[i] = p->n_io_out;
        VKI_TRY(seq_flatten(p, g->outputs[i], p->io_out + p->n_io_out, &p->out_count[i]));
        p->n_io_out += p->out_count[i] > 0 ? p->out_count[i] : 0;
    }
    return VKI_OK;
}

/* Nodes that some graph output depends on; the rest are dead and skipped. A Gradient node
 * (OP_READS_Y_ATTR) reads the forward value named by its y attribute and the nodes that
 * compute it, which are not its inputs. */
static vki_status live_nodes(const ir_graph *g, const op_def *const *defs, bool *live)
{
    bool *needed = calloc((size_t)g->n_values + 1, 1);
    if (!needed) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int i = 0; i < g->n_outputs; i++) needed[g->outputs[i]] = true;
    for (int n = g->n_nodes - 1; n >= 0; n--) {
        const ir_node *node = &g->nodes[n];
        live[n] = false;
        for (int o = 0; o < node->n_outputs; o++)
            if (node->outputs[o] >= 0 && needed[node->outputs[o]]) live[n] = true;
        if (ir_attr_int(node, IR_READ_BACK, 0) > 0) live[n] = true; /* a read a Loop was decided by */
        if (live[n])
            for (int i = 0; i < node->n_inputs; i++)
                if (node->inputs[i] >= 0) needed[node->inputs[i]] = true;
        bool reads_y = live[n] && defs[n] && (defs[n]->flags & OP_READS_Y_ATTR);
        const char *y = reads_y ? ir_attr_string(node, "y", NULL) : NULL;
        for (int v = 0; y && v < g->n_values; v++)
            if (!strcmp(g->values[v].name, y)) needed[v] = true;
    }
    free(needed);
    return VKI_OK;
}

/* Nodes whose outputs are plan-time constants whatever the inputs' values: Shape and Size
 * (OP_SHAPE_ONLY), Constant, and any node reading only initializers and such outputs (not
 * control flow, the random generators or the sequence ops: OP_NOT_CONSTANT). */
static bool const_like_node(const ir_node *node, const op_def *def, const bool *const_value)
{
    if (*node->domain) return false;
    uint32_t flags = def ? def->flags : 0;
    if (flags & OP_SHAPE_ONLY) return true;
    if (flags & OP_NOT_CONSTANT) return false;
    for (int i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0 && !const_value[node->inputs[i]]) return false;
    return true;
}

static bool inputs_ready(const ir_node *node, const bool *avail)
{
    for (int i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0 && !avail[node->inputs[i]]) return false;
    return true;
}

/* inputs_ready, and for a node merged with an equal one (PATTERN_SAME), that one's output too */
static bool node_ready(const plan *p, int n, const bool *avail)
{
    if (!inputs_ready(&p->graph->nodes[n], avail)) return false;
    return p->pattern[n] != PATTERN_SAME || avail[p->pattern_in[(size_t)n * PATTERN_INPUTS]];
}

/* The order nodes are planned in: the graph's, except that a constant-like node (above) is
 * planned as soon as its inputs are, so that a node planned before it in the graph's order
 * can already see its value (the TorchScript exporter computes attention's scale from a
 * Shape after the Transpose of K that the scale then multiplies: with the scale known, that
 * Transpose is a view the product reads, not a copy). Returns a malloc'ed array of n_nodes. */
static int *plan_order(const plan *p, const ir_graph *g, const op_def *const *defs)
{
    int nn = g->n_nodes, nv = g->n_values;
    int *order = malloc(((size_t)nn + 1) * sizeof *order), *stack = malloc(((size_t)nn + 1) * sizeof *stack);
    int *first = calloc((size_t)nv + 2, sizeof *first), *at = calloc((size_t)nv + 1, sizeof *at), *readers = NULL;
    bool *const_value = calloc((size_t)nv + 1, 1), *avail = calloc((size_t)nv + 1, 1);
    bool *const_node = calloc((size_t)nn + 1, 1), *done = calloc((size_t)nn + 1, 1);
    size_t total = 0;
    for (int n = 0; n < nn; n++) total += (size_t)g->nodes[n].n_inputs;
    readers = malloc((total + 1) * sizeof *readers);
    if (!order || !stack || !first || !at || !readers || !const_value || !avail || !const_node || !done) {
        free(order);
        order = NULL;
        goto out;
    }
    for (int v = 0; v < nv; v++) {
        avail[v] = g->values[v].producer < 0;
        const_value[v] = g->values[v].kind == VALUE_INITIALIZER;
    }
    for (int n = 0; n < nn; n++) { /* graph order is topological: one pass */
        const ir_node *node = &g->nodes[n];
        const_node[n] = const_like_node(node, defs[n], const_value);
        for (int o = 0; o < node->n_outputs; o++)
            if (node->outputs[o] >= 0) const_value[node->outputs[o]] = const_node[n];
        for (int i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] >= 0) first[node->inputs[i] + 1]++;
    }
    for (int v = 0; v < nv; v++) first[v + 1] += first[v]; /* readers of v: readers[first[v] .. first[v+1]) */
    for (int n = 0; n < nn; n++)
        for (int i = 0; i < g->nodes[n].n_inputs; i++) {
            int v = g->nodes[n].inputs[i];
            if (v >= 0) readers[first[v] + at[v]++] = n;
        }
    int k = 0;
    /* two passes: first the constant-like nodes ready at the start (Constants, Shapes of graph
     * inputs, nodes over initializers) with what they make ready, then the graph's order */
    for (int pass = 0; pass < 2; pass++) {
        for (int n = 0; n < nn; n++) {
            if (done[n] || (pass == 0 && !(const_node[n] && node_ready(p, n, avail)))) continue;
            int top = 0;
            stack[top++] = n;
            while (top) {
                int m = stack[--top];
                if (done[m]) continue;
                done[m] = true;
                order[k++] = m;
                const ir_node *node = &g->nodes[m];
                for (int o = 0; o < node->n_outputs; o++) {
                    int v = node->outputs[o];
                    if (v < 0) continue;
                    avail[v] = true;
                    for (int r = first[v]; r < first[v + 1]; r++) { /* a full stack leaves it to graph order */
                        int rn = readers[r];
                        if (!done[rn] && const_node[rn] && node_ready(p, rn, avail) && top < nn) stack[top++] = rn;
                    }
                }
            }
        }
    }
out:
    free(stack);
    free(first);
    free(at);
    free(readers);
    free(const_value);
    free(avail);
    free(const_node);
    free(done);
    return order;
}

static vki_status plan_node(plan *p, int n)
{
    const ir_graph *g = p->graph;
    const ir_node *node = &g->nodes[n];
    op_ctx c = {p, node, n, p->vk, g->opset, 0};
    if (p->pattern[n] == PATTERN_INNER) { /* its pattern's last node does its work */
        p->fused_nodes++;
        return VKI_OK;
    }
    /* a pattern's last node is planned as one node of the fused op reading the pattern's inputs */
    ir_attr attrs[2] = {{.name = "approximate", .type = ATTR_STRING, .s = "none", .s_len = 4}};
    const int64_t *perm, *out_perm;
    int n_perm, n_out;
    ir_node fused = {.name = node->name, .domain = "", .n_inputs = 1, .n_outputs = 1, .n_attrs = 1,
                     .inputs = &p->pattern_in[(size_t)n * PATTERN_INPUTS], .outputs = node->outputs, .attrs = attrs};
    switch (p->pattern[n]) {
    case PATTERN_GELU_TANH: attrs[0].s = "tanh"; /* fall through */
    case PATTERN_GELU: fused.op_type = "Gelu"; break;
    case PATTERN_MISH:
        fused.op_type = "Mish";
        fused.n_attrs = 0;
        break;
    case PATTERN_SILU: /* opset 24's Swish with its default alpha of 1 */
        fused.op_type = "Swish";
        fused.n_attrs = 0;
        break;
    case PATTERN_RMS_NORM: /* without a Scale where no weight follows (match_rms_norm) */
    case PATTERN_LAYER_NORM:
        if (p->pattern[n] == PATTERN_RMS_NORM) {
            fused.op_type = "RMSNormalization";
            fused.n_inputs = p->pattern_in[(size_t)n * PATTERN_INPUTS + 1] >= 0 ? 2 : 1;
        } else {
            fused.op_type = "LayerNormalization";
            fused.n_inputs = 3;
        }
        attrs[0] = (ir_attr){.name = "axis", .type = ATTR_INT, .i = -1};
        attrs[1] = (ir_attr){.name = "epsilon", .type = ATTR_FLOAT, .f = p->pattern_eps[n]};
        fused.n_attrs = 2;
        break;
    case PATTERN_SAME: /* a view of the equal node's output (merge_same_nodes) */
        fused.op_type = "Identity";
        fused.n_attrs = 0;
        break;
    case PATTERN_SCATTER_SLICES:
        fused.domain = "vkinfer";
        fused.op_type = "ScatterSlices";
        fused.n_inputs = p->pattern_in[(size_t)n * PATTERN_INPUTS + 3] >= 0 ? 5 : 3;
        plan_scatter_slices_perms(p, n, &perm, &n_perm, &out_perm, &n_out);
        attrs[0] = (ir_attr){.name = "perm", .type = ATTR_INTS, .count = n_perm, .ints = (int64_t *)perm};
        attrs[1] = (ir_attr){.name = "out_perm", .type = ATTR_INTS, .count = n_out, .ints = (int64_t *)out_perm};
        fused.n_attrs = n_out > 0 ? 2 : 1;
        break;
    default: break;
    }
    const op_def *def = p->defs[n];
    if (fused.op_type) {
        c.node = node = &fused;
        def = p->find_op(node->domain, node->op_type);
    }
    if (!def)
        return op_error(&c, VKI_ERROR_UNSUPPORTED, "vkinfer has no implementation of op %s%s%s (see `vkinfer ops`)",
                        *node->domain ? node->domain : "", *node->domain ? "." : "", node->op_type);
    /* every op reads input 0 but those whose flags say it may be omitted (Constant, the random
     * generators, Loop's M...): refuse a node without it here rather than in each op (a hostile
     * or broken file) */
    bool optional0 = (def->flags & OP_INPUT0_OPTIONAL) || ((def->flags & OP_INPUT0_OPTIONAL_OPSET8) && g->opset < 9);
    if (!optional0 && (node->n_inputs == 0 || node->inputs[0] < 0))
        return op_error(&c, VKI_ERROR_MODEL, "input 0 is missing");
    for (int i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0 && !p->values[node->inputs[i]].shaped)
            return op_error(&c, VKI_ERROR_SHAPE, "input %d ('%s') has no known shape", i, g->values[node->inputs[i]].name);
    int first_dispatch = p->n_dispatches;
    p->current_node = n;
    bool done = false;
    VKI_TRY(seq_plan_node(&c, def, &done));
    if (done) {
        p->aliased_nodes++;
        return VKI_OK;
    }
    if (p->fused[n] == PLAN_FUSED_DONE) { /* an earlier kernel computed its output */
        p->fused_nodes++;
        return VKI_OK;
    }
    if (p->fused[n]) { /* its producer's kernel applied it: the output is that value */
        int slot = p->fused[n] - 1;
        plan_value *x = &p->values[node->inputs[slot]];
        VKI_TRY(op_set_output(&c, 0, x->dtype, x->rank, x->dims));
        p->fused_nodes++;
        return op_output_alias(&c, 0, slot);
    }
    int first_value = p->n_values;
    const void *mark = arena_mark(&p->arena);
    VKI_TRY(def->plan(&c));
    if (p->decision[n] != INT64_MIN) return VKI_OK; /* a control node: expanded, then planned again */
    if (p->probe) return VKI_OK;                    /* its size is read back; planning stops here */
    VKI_TRY(plan_finish_node(&c));
    VKI_TRY(plan_share_host_constants(p, node, first_value, mark));
    bool folded = true, aliased = false;
    for (int o = 0; o < node->n_outputs; o++) {
        int v = node->outputs[o];
        if (v < 0) continue;
        plan_value *pv = &p->values[v];
        if (!pv->shaped) return op_error(&c, VKI_ERROR_SHAPE, "internal: output %d was not given a shape", o);
        if (!pv->host) folded = false;
        if (pv->alias_of >= 0) aliased = true;
    }
    if (p->n_dispatches > first_dispatch) p->gpu_nodes++;
    else if (aliased) p->aliased_nodes++;
    else if (folded) p->folded_nodes++;
    return VKI_OK;
}

vki_status op_data_size(op_ctx *c, int size_value, int64_t max, int64_t *size, bool *known)
{
    plan *p = c->plan;
    /* a control node decided earlier in this round changes what the next round plans before
     * this node, and so the reads' order: read in the next round, after the expansion */
    if (p->expand_pending) {
        *known = false;
        *size = 0;
        p->probe = true;
        return VKI_OK;
    }
    if (p->n_reads >= PLAN_MAX_SIZES)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than %d data-dependent sizes in one graph", PLAN_MAX_SIZES);
    p->read_value[p->n_reads] = size_value;
    p->read_node[p->n_reads] = c->node_index;
    p->read_after[p->n_reads] = p->n_dispatches;
    /* a size the last run found for other input shapes may not fit these: probe again */
    *known = p->n_reads < p->n_sizes && p->sizes[p->n_reads] >= 0 && p->sizes[p->n_reads] <= max;
    *size = *known ? p->sizes[p->n_reads] : 0;
    p->n_reads++;
    if (!*known) p->probe = true;
    return VKI_OK;
}

vki_status op_read_back(op_ctx *c, int i, int64_t max, int64_t *out, bool *known)
{
    int word;
    VKI_TRY(op_temp(c, VKI_DTYPE_INT32, 1, &word));
    strided_copy s = {.rank = 1, .dims = {1}, .in_strides = {1}, .out_strides = {1}};
    VKI_TRY(copy_values(c, op_in_index(c, i), word, &s, GPU_W32)); /* a bool as a word 0 or 1 */
    return op_data_size(c, word, max, out, known);
}

/* Whether a node reads a value that has no shape yet (an output of a control node decided in
 * this round, which exists only once the graph is expanded). */
static bool reads_unshaped(const plan *p, int n)
{
    const ir_node *node = &p->graph->nodes[n];
    for (int i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0 && !p->values[node->inputs[i]].shaped) return true;
    return false;
}

/* Rounds of control-flow expansion: each inlines the control nodes decidable so far (nested
 * ones, and the rest of a Loop whose body computes its condition, one iteration a round,
 * become decidable in the next round). */
#define PLAN_MAX_EXPANSIONS 256

static vki_status plan_build(vk_context *vk, const ir_graph *g, op_finder find_op, const int *counts, const int *ranks,
                             const int64_t *dims, const void *const *data,
                       const size_t *bytes, const bool *keyed, const int64_t *sizes, int n_sizes, bool profiling,
                       bool fp16_mode, weight_cache *cache, int *wanted_input, plan **out, ir_graph *owned, int round,
                       double t0)
{
    plan *p = calloc(1, sizeof *p);
    if (!p) {
        ir_graph_free_expanded(owned);
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    p->owned_graph = owned;
    p->vk = vk;
    p->building = true; /* plan_destroy on failure below: plan_create holds the lock */
    p->graph = g;
    p->find_op = find_op;
    p->keyed = keyed;
    p->cache = cache;
    p->profiling = profiling;
    p->fp16_mode = fp16_mode;
    p->n_sizes = n_sizes < 0 ? 0 : n_sizes > PLAN_MAX_SIZES ? PLAN_MAX_SIZES : n_sizes;
    if (p->n_sizes) memcpy(p->sizes, sizes, (size_t)p->n_sizes * sizeof *sizes);
    p->wanted_input = -1;
    *wanted_input = -1;
    /* flat[i]: graph input i's first tensor in ranks, dims, data and bytes */
    int *flat = calloc((size_t)g->n_inputs + 1, sizeof *flat), n_io = 0;
    if (!flat) {
        ir_graph_free_expanded(owned);
        free(p);
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    for (int i = 0; i < g->n_inputs; i++) {
        flat[i] = n_io;
        n_io += !counts ? 1 : counts[i] > 0 ? counts[i] : 0;
    }
    for (int i = 0; i < g->n_inputs; i++)
        if (keyed[i]) p->key_bytes += bytes[flat[i]];
    p->key_values = malloc(p->key_bytes + 1);
    if (!p->key_values) {
        ir_graph_free_expanded(owned);
        free(flat);
        free(p);
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    for (size_t i = 0, o = 0; i < (size_t)g->n_inputs; i++)
        if (keyed[i]) {
            memcpy(p->key_values + o, data[flat[i]], bytes[flat[i]]);
            o += bytes[flat[i]];
        }
    p->cap_values = g->n_values + 8 * g->n_nodes + 64 + 2 * n_io + g->n_inputs; /* + inputs' elements and lists */
    p->values = calloc((size_t)p->cap_values, sizeof *p->values);
    p->converted = malloc((size_t)p->cap_values * GPU_STORAGE_COUNT * sizeof *p->converted);
    p->out_copy = malloc((size_t)p->cap_values * sizeof *p->out_copy);
    p->temp_owner = calloc((size_t)p->cap_values, sizeof(int));
    p->n_values = g->n_values;
    p->input_dims = calloc((size_t)n_io * VKI_MAX_RANK + 1, sizeof(int64_t));
    bool *live = calloc((size_t)g->n_nodes + 1, 1);
    p->decision = malloc(((size_t)g->n_nodes + 1) * sizeof *p->decision);
    p->defs = calloc((size_t)g->n_nodes + 1, sizeof *p->defs);
    vki_status st = VKI_OK;
    for (int n = 0; p->decision && n < g->n_nodes; n++) p->decision[n] = INT64_MIN;
    for (int n = 0; p->defs && n < g->n_nodes; n++) p->defs[n] = find_op(g->nodes[n].domain, g->nodes[n].op_type);
    if (!p->values || !p->temp_owner || !p->input_dims || !live || !p->converted || !p->out_copy || !p->decision ||
        !p->defs)
        st = vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int v = 0; st == VKI_OK && v < p->cap_values; v++) {
        p->out_copy[v] = -1;
        for (int k = 0; k < GPU_STORAGE_COUNT; k++) p->converted[(size_t)v * GPU_STORAGE_COUNT + k] = -1;
    }
    if (st == VKI_OK) {
        memcpy(p->input_dims, dims, (size_t)n_io * VKI_MAX_RANK * sizeof(int64_t));
        st = init_values(p, counts, n_io, ranks, dims);
        for (size_t i = 0, o = 0; st == VKI_OK && i < (size_t)g->n_inputs; i++)
            if (keyed[i]) { /* a keyed input is a constant of this plan */
                plan_value *pv = &p->values[g->inputs[i]];
                pv->host = p->key_values + o;
                pv->host_bytes = bytes[flat[i]];
                o += bytes[flat[i]];
            }
    }
    free(flat);
    if (st == VKI_OK) st = live_nodes(g, p->defs, live);
    if (st == VKI_OK) {
        p->uses = calloc((size_t)g->n_values + 1, sizeof *p->uses);
        p->shape_reads = calloc((size_t)g->n_values + 1, sizeof *p->shape_reads);
        p->reader = calloc((size_t)g->n_values + 1, sizeof *p->reader);
        p->ln_reader = calloc((size_t)g->n_values + 1, sizeof *p->ln_reader);
        p->from_dims = calloc((size_t)g->n_values + 1, sizeof *p->from_dims);
        p->fused = calloc((size_t)g->n_nodes + 1, sizeof *p->fused);
        p->pattern = calloc((size_t)g->n_nodes + 1, sizeof *p->pattern);
        p->pattern_in = calloc((size_t)g->n_nodes * PATTERN_INPUTS + 1, sizeof *p->pattern_in);
        p->pattern_eps = calloc((size_t)g->n_nodes + 1, sizeof *p->pattern_eps);
        if (!p->uses || !p->shape_reads || !p->from_dims || !p->reader || !p->ln_reader || !p->fused || !p->pattern || !p->pattern_in || !p->pattern_eps)
            st = vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        else
            st = plan_fuse_patterns(p, live);
    }
    int *order = st == VKI_OK ? plan_order(p, g, p->defs) : NULL;
    if (st == VKI_OK && !order) st = vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int k = 0; st == VKI_OK && k < g->n_nodes && !p->probe; k++) {
        int n = order[k];
        if (live[n] && !(p->expand_pending && reads_unshaped(p, n))) st = plan_node(p, n);
    }
    free(order);
    free(live);
    if (st == VKI_OK && p->expand_pending) { /* inline the decided control nodes and plan again */
        ir_graph *expanded = NULL;
        if (round >= PLAN_MAX_EXPANSIONS)
            st = vki_fail(VKI_ERROR_UNSUPPORTED, "control flow nested or chained more than %d deep", PLAN_MAX_EXPANSIONS);
        else
            st = ir_graph_expand(p->owned_graph ? p->owned_graph : (ir_graph *)g, p->decision, &expanded);
        if (st == VKI_OK) {
            p->owned_graph = NULL; /* the expanded graph holds it now */
            plan_destroy(p);
            return plan_build(vk, expanded, find_op, counts, ranks, dims, data, bytes, keyed, sizes, n_sizes, profiling,
                              fp16_mode, cache, wanted_input, out, expanded, round + 1, t0);
        }
    }
    if (st == VKI_OK && !p->probe) st = plan_outputs(p);
    if (st == VKI_OK) st = plan_memory(p);
    if (st == VKI_OK) st = plan_record(p);
    if (st != VKI_OK) {
        *wanted_input = p->wanted_input;
        plan_destroy(p);
        return st;
    }
    p->plan_ms = now_ms() - t0;
    p->building = false;
    *out = p;
    return VKI_OK;
}

/* Planning records into command buffers of the context's pool and creates pipelines: one
 * thread at a time per context (vk_context.plan_lock). */
vki_status plan_create(vk_context *vk, const ir_graph *g, op_finder find_op, const int *counts, const int *ranks,
                       const int64_t *dims, const void *const *data,
                       const size_t *bytes, const bool *keyed, const int64_t *sizes, int n_sizes, bool profiling,
                       bool fp16_mode, weight_cache *cache, int *wanted_input, plan **out)
{
    pthread_mutex_lock(&vk->plan_lock);
    vki_status st = plan_build(vk, g, find_op, counts, ranks, dims, data, bytes, keyed, sizes, n_sizes, profiling, fp16_mode,
                               cache, wanted_input, out, NULL, 0, now_ms());
    pthread_mutex_unlock(&vk->plan_lock);
    return st;
}

void plan_destroy(plan *p)
{
    if (!p) return;
    vk_context *vk = p->vk;
    bool locked = vk && vk->locks_ready && !p->building;
    if (locked) pthread_mutex_lock(&vk->plan_lock);
    if (vk && vk->device) {
        if (p->fence) vk->f.vkDestroyFence(vk->device, p->fence, NULL);
        if (p->cmd) vk->f.vkFreeCommandBuffers(vk->device, vk->command_pool, 1, &p->cmd);
        for (int k = 0; k < p->n_reads; k++)
            if (p->segments[k]) vk->f.vkFreeCommandBuffers(vk->device, vk->command_pool, 1, &p->segments[k]);
        VkCommandBuffer io[2] = {p->cmd_in, p->cmd_out};
        if (p->cmd_in) vk->f.vkFreeCommandBuffers(vk->device, p->io_pool, 2, io);
        if (p->pool) vk->f.vkDestroyDescriptorPool(vk->device, p->pool, NULL);
        for (int i = 0; i < p->n_views; i++) vk->f.vkDestroyBufferView(vk->device, p->views[i], NULL);
        if (p->queries) vk->f.vkDestroyQueryPool(vk->device, p->queries, NULL);
        for (int b = 0; b < p->n_weight_blocks; b++) vk_buffer_destroy(vk, &p->weight_blocks[b]);
        vk_buffer_destroy(vk, &p->intermediates);
        vk_buffer_destroy(vk, &p->upload);
        vk_buffer_destroy(vk, &p->download);
    }
    arena_free(&p->arena);
    free(p->weight_blocks);
    free(p->weight_block_bytes);
    free(p->same_bytes);
    free(p->host_table);
    free(p->host_hashes);
    free(p->values);
    free(p->temp_owner);
    free(p->converted);
    free(p->out_copy);
    free(p->dispatches);
    free(p->views);
    free(p->input_offsets);
    free(p->output_offsets);
    free(p->input_dims);
    free(p->io_in);
    free(p->in_first);
    free(p->in_count);
    free(p->io_out);
    free(p->out_first);
    free(p->out_count);
    free(p->key_values);
    free(p->uses);
    free(p->shape_reads);
    free(p->from_dims);
    free(p->reader);
    free(p->ln_reader);
    free(p->fused);
    free(p->pattern);
    free(p->pattern_in);
    free(p->pattern_eps);
    free(p->decision);
    free(p->defs);
    ir_graph_free_expanded(p->owned_graph);
    free(p);
    if (locked) pthread_mutex_unlock(&vk->plan_lock);
}
