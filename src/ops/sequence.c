/* Sequences and optionals, decided at plan time like control flow (src/ops/control.c). A
 * sequence value is a plan-time list of tensor values and an optional none or one tensor or
 * sequence (src/plan/sequence.c). The ops are bookkeeping on those lists plus ordinary ops on
 * the elements: SequenceAt is a view of the element (Identity), ConcatFromSequence a Concat,
 * SplitToSequence a Split, SequenceLength a constant, SequenceMap its body inlined once per
 * element (src/onnx/expand.c). A position computed on the GPU from data is read back
 * (op_read_back); a split computed from data is refused, naming the node. */
#include "op.h"
#include "../plan/plan.h"

#include <stdlib.h>
#include <string.h>

static const char *value_name(op_ctx *c, int v)
{
    return v >= 0 && v < c->plan->graph->n_values ? c->plan->graph->values[v].name : "(an element)";
}

static bool is_seq(const plan_value *v) { return v && v->kind == PV_SEQUENCE; }

/* Plans op `op` on value indices inputs[0..n_in) into outputs[0..n_out), as part of this
 * node (its dispatches are this node's). */
static vki_status delegate(op_ctx *c, const char *op, const int *inputs, int n_in, const int *outputs, int n_out,
                           ir_attr *attrs, int n_attrs, int64_t opset)
{
    ir_node fake = *c->node;
    fake.op_type = op;
    fake.domain = "";
    fake.inputs = (int *)inputs;
    fake.n_inputs = n_in;
    fake.outputs = (int *)outputs;
    fake.n_outputs = n_out;
    fake.attrs = attrs;
    fake.n_attrs = n_attrs;
    op_ctx d = *c;
    d.node = &fake;
    if (opset) d.opset = opset;
    const op_def *def = c->plan->find_op("", op);
    if (!def) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: no op %s", op);
    VKI_TRY(def->plan(&d));
    return plan_finish_node(&d);
}

/* A new value, unshaped (an output of a delegated op). Reserve room first. */
static int fresh_value(plan *p)
{
    int v = p->n_values++;
    memset(&p->values[v], 0, sizeof p->values[v]);
    p->values[v].alias_of = -1;
    p->values[v].first_use = p->values[v].last_use = -1;
    p->temp_owner[v] = -1; /* not this node's scratch: later nodes read it */
    return v;
}

/* A new value viewing src's elements with another shape of the same count. */
static vki_status view_of(op_ctx *c, int src, int rank, const int64_t *dims, int *out)
{
    plan *p = c->plan;
    const plan_value *s = &p->values[src];
    if (s->permuted || s->view_scale != 0)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: a sequence element is a permuted or scaled view");
    int v = fresh_value(p);
    s = &p->values[src];
    plan_value *o = &p->values[v];
    o->dtype = s->dtype;
    o->rank = rank;
    if (rank) memcpy(o->dims, dims, (size_t)rank * sizeof *dims);
    o->shaped = true;
    if (s->host) {
        o->host = s->host;
        o->host_bytes = s->host_bytes;
        o->storage = s->storage;
    } else {
        o->alias_of = src;
        o->view_offset = s->view_offset;
        o->storage = p->values[plan_root(p, src)].storage;
    }
    *out = v;
    return VKI_OK;
}

/* Input i, which must be a sequence. */
static vki_status seq_input(op_ctx *c, int i, plan_value **out)
{
    plan_value *v = op_in(c, i);
    *out = NULL; /* set on failure too: gcc -O2 cannot tell that op_error never returns VKI_OK */
    if (!is_seq(v))
        return op_error(c, VKI_ERROR_MODEL, "input %d ('%s') is not a sequence", i, op_has_input(c, i) ? value_name(c, op_in_index(c, i)) : "");
    *out = v;
    return VKI_OK;
}

/* A position input in [-n, n + extra), made non-negative: a scalar known at plan time, or one
 * computed on the GPU from data, read back (op_read_back: one wait mid-run, the plan made for
 * the position found; a negative one is refused there). *known false: a probe plan, which
 * stops at this node. */
static vki_status position(op_ctx *c, int i, int n, int extra, int64_t *out, bool *known)
{
    *known = true;
    plan_value *v = op_in(c, i);
    char shape[128];
    if (shape_numel(v->dims, v->rank) != 1 || v->kind != PV_TENSOR || !dtype_is_int(v->dtype))
        return op_error(c, VKI_ERROR_MODEL, "the position (input %d) must be one integer, is %s%s", i, vki_dtype_name(v->dtype),
                        shape_str(v->dims, v->rank, shape, sizeof shape));
    if (!v->host) {
        int k = op_keyable_input(c->plan, op_in_index(c, i));
        if (k >= 0) { /* the session plans again, keyed on that input */
            c->plan->wanted_input = k;
            return op_error(c, VKI_ERROR_UNSUPPORTED, "the position ('%s') is keyed on a graph input",
                            value_name(c, op_in_index(c, i)));
        }
        if (n + extra < 1) return op_error(c, VKI_ERROR_SHAPE, "a position into an empty sequence");
        return op_read_back(c, i, (int64_t)n + extra - 1, out, known);
    }
    int64_t pos = host_read_i64(v->dtype, v->host, 0);
    if (pos < -(int64_t)n || pos >= (int64_t)n + extra)
        return op_error(c, VKI_ERROR_SHAPE, "position %lld is outside [%d, %d] for a sequence of %d", (long long)pos, -n,
                        n + extra - 1, n);
    *out = pos < 0 ? pos + n : pos;
    return VKI_OK;
}

static vki_status require_tensor(op_ctx *c, int i)
{
    plan_value *v = op_in(c, i);
    if (v && v->kind != PV_TENSOR)
        return op_error(c, VKI_ERROR_MODEL, "input %d ('%s') is a %s; a tensor is expected", i, value_name(c, op_in_index(c, i)),
                        v->kind == PV_SEQUENCE ? "sequence" : "optional");
    return VKI_OK;
}

static vki_status plan_sequence_empty(op_ctx *c)
{
    vki_dtype t = (vki_dtype)ir_attr_int(c->node, "dtype", VKI_DTYPE_FLOAT);
    return op_set_sequence(c, 0, t, NULL, 0);
}

static vki_status plan_sequence_construct(op_ctx *c)
{
    int n = op_input_count(c);
    if (n < 1) return op_error(c, VKI_ERROR_MODEL, "SequenceConstruct needs at least one input");
    vki_dtype t = op_in(c, 0) ? op_in(c, 0)->dtype : VKI_DTYPE_UNDEFINED;
    for (int i = 0; i < n; i++) {
        if (!op_has_input(c, i)) return op_error(c, VKI_ERROR_MODEL, "input %d is missing", i);
        VKI_TRY(require_tensor(c, i));
        if (op_in(c, i)->dtype != t) return op_error(c, VKI_ERROR_MODEL, "inputs have different dtypes");
    }
    return op_set_sequence(c, 0, t, c->node->inputs, n);
}

static vki_status plan_sequence_insert(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 3));
    plan_value *s;
    VKI_TRY(seq_input(c, 0, &s));
    VKI_TRY(require_tensor(c, 1));
    if (s->n_items && op_in(c, 1)->dtype != s->dtype)
        return op_error(c, VKI_ERROR_MODEL, "the tensor is %s, the sequence's elements %s", vki_dtype_name(op_in(c, 1)->dtype),
                        vki_dtype_name(s->dtype));
    int n = s->n_items;
    int64_t pos = n;
    bool known = true;
    if (op_has_input(c, 2)) VKI_TRY(position(c, 2, n, 1, &pos, &known));
    if (!known) return VKI_OK;
    int *items = malloc(((size_t)n + 2) * sizeof *items);
    if (!items) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int k = 0, j = 0; k <= n; k++) items[k] = k == pos ? op_in_index(c, 1) : s->items[j++];
    vki_status st = op_set_sequence(c, 0, op_in(c, 1)->dtype, items, n + 1);
    free(items);
    return st;
}

static vki_status plan_sequence_erase(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 2));
    plan_value *s;
    VKI_TRY(seq_input(c, 0, &s));
    int n = s->n_items;
    if (!n) return op_error(c, VKI_ERROR_SHAPE, "erasing from an empty sequence");
    int64_t pos = n - 1;
    bool known = true;
    if (op_has_input(c, 1)) VKI_TRY(position(c, 1, n, 0, &pos, &known));
    if (!known) return VKI_OK;
    int *items = malloc(((size_t)n + 1) * sizeof *items);
    if (!items) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int k = 0, j = 0; k < n; k++)
        if (k != pos) items[j++] = s->items[k];
    vki_status st = op_set_sequence(c, 0, s->dtype, items, n - 1);
    free(items);
    return st;
}

static vki_status plan_sequence_at(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    plan_value *s;
    VKI_TRY(seq_input(c, 0, &s));
    int64_t pos;
    bool known;
    VKI_TRY(position(c, 1, s->n_items, 0, &pos, &known));
    if (!known) return VKI_OK;
    int in = s->items[pos], out = op_out_index(c, 0);
    return delegate(c, "Identity", &in, 1, &out, 1, NULL, 0, 0);
}

static vki_status plan_sequence_length(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *s;
    VKI_TRY(seq_input(c, 0, &s));
    VKI_TRY(op_set_output(c, 0, VKI_DTYPE_INT64, 0, NULL));
    int64_t *o = op_output_host(c, 0);
    if (!o) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    *o = s->n_items;
    return VKI_OK;
}

static vki_status plan_split_to_sequence(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 2));
    VKI_TRY(require_tensor(c, 0));
    plan_value *x = op_in(c, 0);
    int axis;
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", 0), x->rank, &axis));
    int64_t d = x->dims[axis];
    bool keepdims = ir_attr_int(c->node, "keepdims", 1) != 0;
    int64_t *sizes = NULL;
    int n = 0;
    vki_status st = VKI_OK;
    if (op_has_input(c, 1)) { /* a scalar chunk length, or one length per piece */
        VKI_TRY(require_tensor(c, 1));
        plan_value *sp = op_in(c, 1);
        int64_t count = shape_numel(sp->dims, sp->rank);
        if (count > SEQ_MAX_ITEMS) return op_error(c, VKI_ERROR_UNSUPPORTED, "split has %lld entries", (long long)count);
        int64_t *given = malloc(((size_t)count + 1) * sizeof *given);
        if (!given) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        int got;
        st = op_const_ints(c, 1, given, (int)count, &got);
        if (st == VKI_OK && sp->rank == 0) {
            int64_t chunk = given[0];
            if (chunk <= 0) st = op_error(c, VKI_ERROR_MODEL, "split %lld: a chunk length must be positive", (long long)chunk);
            else if ((d + chunk - 1) / chunk > SEQ_MAX_ITEMS) st = op_error(c, VKI_ERROR_UNSUPPORTED, "too many pieces");
            else {
                n = (int)((d + chunk - 1) / chunk);
                sizes = malloc(((size_t)n + 1) * sizeof *sizes);
                if (!sizes) st = op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
                for (int k = 0; sizes && k < n; k++) sizes[k] = d - k * chunk < chunk ? d - k * chunk : chunk;
            }
            free(given);
        } else {
            sizes = given;
            n = got;
        }
        keepdims = true; /* keepdims applies only without split */
    } else {
        if (d > SEQ_MAX_ITEMS) return op_error(c, VKI_ERROR_UNSUPPORTED, "%lld pieces: at most %d", (long long)d, SEQ_MAX_ITEMS);
        n = (int)d;
        sizes = malloc(((size_t)n + 1) * sizeof *sizes);
        if (!sizes) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        for (int k = 0; k < n; k++) sizes[k] = 1;
    }
    if (st != VKI_OK) {
        free(sizes);
        return st;
    }
    int *pieces = malloc(((size_t)n + 1) * sizeof *pieces), *items = malloc(((size_t)n + 1) * sizeof *items);
    plan *p = c->plan;
    if (!pieces || !items) st = op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (st == VKI_OK) st = plan_reserve_values(p, 4 * n + 64);
    int split_value = -1;
    if (st == VKI_OK && n) {
        int64_t *host = op_temp_const(c, VKI_DTYPE_INT64, n, &split_value);
        if (!host) st = op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        else memcpy(host, sizes, (size_t)n * sizeof *sizes);
    }
    for (int k = 0; st == VKI_OK && k < n; k++) pieces[k] = fresh_value(p);
    ir_attr attr = {.name = "axis", .type = ATTR_INT, .i = axis};
    int ins[2] = {op_in_index(c, 0), split_value};
    if (st == VKI_OK && n) st = delegate(c, "Split", ins, 2, pieces, n, &attr, 1, 18);
    for (int k = 0; st == VKI_OK && k < n; k++) {
        items[k] = pieces[k];
        if (keepdims) continue;
        const plan_value *e = &p->values[pieces[k]];
        int64_t dims[VKI_MAX_RANK];
        int r = 0;
        for (int j = 0; j < e->rank; j++)
            if (j != axis) dims[r++] = e->dims[j];
        st = view_of(c, pieces[k], r, dims, &items[k]);
    }
    if (st == VKI_OK) st = op_set_sequence(c, 0, op_in(c, 0)->dtype, items, n);
    free(sizes);
    free(pieces);
    free(items);
    return st;
}

static vki_status plan_concat_from_sequence(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *s;
    VKI_TRY(seq_input(c, 0, &s));
    int n = s->n_items;
    if (!n) return op_error(c, VKI_ERROR_SHAPE, "the sequence is empty: nothing to concatenate");
    const ir_attr *axis_attr = ir_find_attr(c->node, "axis");
    if (!axis_attr) return op_error(c, VKI_ERROR_MODEL, "ConcatFromSequence needs the 'axis' attribute");
    bool new_axis = ir_attr_int(c->node, "new_axis", 0) != 0;
    plan *p = c->plan;
    VKI_TRY(plan_reserve_values(p, 2 * n + 64));
    s = op_in(c, 0);
    const plan_value *e0 = &p->values[s->items[0]];
    int axis;
    VKI_TRY(op_axis(c, axis_attr->i, e0->rank + (new_axis ? 1 : 0), &axis));
    int *parts = malloc(((size_t)n + 1) * sizeof *parts);
    if (!parts) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    vki_status st = VKI_OK;
    for (int k = 0; st == VKI_OK && k < n; k++) {
        int item = p->values[op_in_index(c, 0)].items[k];
        parts[k] = item;
        if (!new_axis) continue;
        const plan_value *e = &p->values[item];
        if (e->rank + 1 > VKI_MAX_RANK) {
            st = op_error(c, VKI_ERROR_UNSUPPORTED, "a new axis would make rank %d", e->rank + 1);
            break;
        }
        int64_t dims[VKI_MAX_RANK];
        for (int j = 0, r = 0; j <= e->rank; j++) dims[j] = j == axis ? 1 : e->dims[r++];
        st = view_of(c, item, e->rank + 1, dims, &parts[k]);
    }
    ir_attr attr = {.name = "axis", .type = ATTR_INT, .i = axis};
    int out = op_out_index(c, 0);
    if (st == VKI_OK) st = delegate(c, "Concat", parts, n, &out, 1, &attr, 1, 0);
    free(parts);
    return st;
}

/* Decided here, inlined by the expander (src/onnx/expand.c): decision N | mask << 32. */
static vki_status plan_sequence_map(op_ctx *c)
{
    int n_in = op_input_count(c);
    if (n_in < 1) return op_error(c, VKI_ERROR_MODEL, "SequenceMap needs at least one input");
    if (n_in > 31) return op_error(c, VKI_ERROR_UNSUPPORTED, "SequenceMap with %d inputs: at most 31", n_in);
    plan_value *s;
    VKI_TRY(seq_input(c, 0, &s));
    int64_t len = s->n_items, mask = 0;
    for (int i = 0; i < n_in; i++) {
        plan_value *v = op_in(c, i);
        if (!v) return op_error(c, VKI_ERROR_MODEL, "input %d is missing", i);
        if (v->kind == PV_OPTIONAL) return op_error(c, VKI_ERROR_MODEL, "input %d is an optional", i);
        if (v->kind != PV_SEQUENCE) continue;
        if (v->n_items != len)
            return op_error(c, VKI_ERROR_SHAPE, "input %d has %d elements, input 0 has %lld", i, v->n_items, (long long)len);
        mask |= (int64_t)1 << i;
    }
    if (!len)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "mapping an empty sequence: the outputs' element types are only known to "
                        "the body");
    c->plan->decision[c->node_index] = len | mask << 32;
    c->plan->expand_pending = true;
    return VKI_OK;
}

static vki_status plan_optional(op_ctx *c)
{
    if (op_input_count(c) > 1) return op_error(c, VKI_ERROR_MODEL, "Optional takes at most one input");
    plan_value *o = op_out(c, 0);
    if (!o) return VKI_OK;
    o->kind = PV_OPTIONAL;
    o->rank = 0;
    o->shaped = true;
    o->n_items = 0;
    if (!op_has_input(c, 0)) { /* none; the element type (attribute 'type') does not matter */
        o->dtype = VKI_DTYPE_UNDEFINED;
        return VKI_OK;
    }
    plan_value *x = op_in(c, 0);
    if (x->kind == PV_OPTIONAL) return op_error(c, VKI_ERROR_MODEL, "an optional of an optional");
    int *item = arena_alloc(&c->plan->arena, sizeof *item);
    if (!item) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    *item = op_in_index(c, 0);
    o = op_out(c, 0);
    o->dtype = x->dtype;
    o->items = item;
    o->n_items = 1;
    return VKI_OK;
}

static vki_status plan_optional_has_element(op_ctx *c)
{
    if (op_input_count(c) > 1) return op_error(c, VKI_ERROR_MODEL, "OptionalHasElement takes at most one input");
    plan_value *x = op_in(c, 0);
    bool has = x && (x->kind != PV_OPTIONAL || x->n_items > 0); /* a tensor or sequence (opset 18) has one */
    VKI_TRY(op_set_output(c, 0, VKI_DTYPE_BOOL, 0, NULL));
    uint8_t *o = op_output_host(c, 0);
    if (o) *o = has;
    return VKI_OK;
}

static vki_status plan_optional_get_element(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *x = op_in(c, 0);
    int v = op_in_index(c, 0);
    if (x->kind == PV_OPTIONAL) {
        if (!x->n_items)
            return op_error(c, VKI_ERROR_SHAPE, "the optional ('%s') is none (known at plan time): it has no element",
                            value_name(c, v));
        v = x->items[0];
    }
    if (c->plan->values[v].kind == PV_SEQUENCE) return op_copy_list(c, 0, v);
    int out = op_out_index(c, 0);
    return delegate(c, "Identity", &v, 1, &out, 1, NULL, 0, 0);
}

#define SEQ_NOTES "decided at plan time; a position computed on the GPU from data is read back (one wait a run)"
const op_def op_SequenceEmpty = {"SequenceEmpty", "", OP_DTYPES_ALL, "",
                                 plan_sequence_empty, OP_INPUT0_OPTIONAL | OP_NOT_CONSTANT};
const op_def op_SequenceConstruct = {"SequenceConstruct", "", OP_DTYPES_ALL, "",
                                     plan_sequence_construct, OP_NOT_CONSTANT};
const op_def op_SequenceInsert = {"SequenceInsert", "", OP_DTYPES_ALL, SEQ_NOTES,
                                  plan_sequence_insert, OP_TAKES_LISTS | OP_NOT_CONSTANT};
const op_def op_SequenceErase = {"SequenceErase", "", OP_DTYPES_ALL, SEQ_NOTES,
                                 plan_sequence_erase, OP_TAKES_LISTS | OP_NOT_CONSTANT};
const op_def op_SequenceAt = {"SequenceAt", "", OP_DTYPES_ALL, SEQ_NOTES,
                              plan_sequence_at, OP_TAKES_LISTS | OP_NOT_CONSTANT};
const op_def op_SequenceLength = {"SequenceLength", "", OP_DTYPES_ALL, "",
                                  plan_sequence_length, OP_TAKES_LISTS | OP_NOT_CONSTANT};
const op_def op_SplitToSequence = {"SplitToSequence", "", OP_DTYPES_ALL, "the split sizes must be known at plan time",
                                   plan_split_to_sequence};
const op_def op_ConcatFromSequence = {"ConcatFromSequence", "", OP_DTYPES_ALL, "",
                                      plan_concat_from_sequence, OP_TAKES_LISTS};
const op_def op_SequenceMap = {"SequenceMap", "", OP_DTYPES_ALL,
                               "inlined once per element at plan time; an empty sequence is not supported",
                               plan_sequence_map, OP_TAKES_LISTS | OP_NOT_CONSTANT};
const op_def op_Optional = {"Optional", "", OP_DTYPES_ALL, "decided at plan time",
                            plan_optional, OP_INPUT0_OPTIONAL | OP_TAKES_LISTS};
const op_def op_OptionalHasElement = {"OptionalHasElement", "", OP_DTYPES_ALL, "decided at plan time",
                                      plan_optional_has_element, OP_INPUT0_OPTIONAL | OP_TAKES_LISTS};
const op_def op_OptionalGetElement = {"OptionalGetElement", "", OP_DTYPES_ALL,
                                      "decided at plan time: getting the element of a none is an error then",
                                      plan_optional_get_element, OP_TAKES_LISTS};
