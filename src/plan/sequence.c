/* Sequences and optionals as plan values (plan_value.kind): a sequence is a plan-time list of
 * tensor values (PV_SEQUENCE, items), its length and every element's shape known when
 * planning, with no device storage of its own; an optional is none or one tensor or sequence
 * (PV_OPTIONAL). Here: making and copying such lists, refusing them where an op takes tensors,
 * and the tensors a graph output holds. The ops on them are src/ops/sequence.c. */
#include "plan.h"

#include <string.h>

static const char *value_name(op_ctx *c, int v)
{
    return v >= 0 && v < c->plan->graph->n_values ? c->plan->graph->values[v].name : "(an element)";
}

vki_status op_set_sequence(op_ctx *c, int out, vki_dtype dtype, const int *items, int n)
{
    if (!op_has_output(c, out)) return VKI_OK;
    if (n > SEQ_MAX_ITEMS) return op_error(c, VKI_ERROR_UNSUPPORTED, "a sequence of %d elements; at most %d", n, SEQ_MAX_ITEMS);
    int *copy = arena_alloc(&c->plan->arena, ((size_t)n + 1) * sizeof *copy);
    if (!copy) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (n) memcpy(copy, items, (size_t)n * sizeof *copy);
    plan_value *o = op_out(c, out);
    o->kind = PV_SEQUENCE;
    o->dtype = dtype;
    o->rank = 0;
    o->shaped = true;
    o->items = copy;
    o->n_items = n;
    return VKI_OK;
}

vki_status op_copy_list(op_ctx *c, int out, int v)
{
    plan_value *o = op_out(c, out), *x = &c->plan->values[v];
    if (!o) return VKI_OK;
    o->kind = x->kind;
    o->dtype = x->dtype;
    o->rank = 0;
    o->shaped = true;
    o->items = x->items;
    o->n_items = x->n_items;
    return VKI_OK;
}

vki_status seq_plan_node(op_ctx *c, const op_def *def, bool *done)
{
    *done = false;
    const ir_node *n = c->node;
    bool lists = false;
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] >= 0 && c->plan->values[n->inputs[i]].kind != PV_TENSOR) lists = true;
    if (!lists) return VKI_OK;
    if (!(def->flags & OP_TAKES_LISTS))
        for (int i = 0; i < n->n_inputs; i++) {
            plan_value *v = op_in(c, i);
            if (v && v->kind != PV_TENSOR)
                return op_error(c, VKI_ERROR_UNSUPPORTED, "input %d ('%s') is a %s; %s takes tensors", i,
                                value_name(c, n->inputs[i]), v->kind == PV_SEQUENCE ? "sequence" : "optional", n->op_type);
        }
    if (def->flags & OP_PASSES_LISTS) { /* a sequence or optional passed on */
        *done = true;
        return op_copy_list(c, 0, n->inputs[0]);
    }
    return VKI_OK;
}

vki_status seq_flatten(plan *p, int v, int *list, int *count)
{
    const plan_value *pv = &p->values[v];
    if (pv->kind == PV_OPTIONAL) {
        if (!pv->n_items) {
            *count = -1;
            return VKI_OK;
        }
        v = pv->items[0];
        pv = &p->values[v];
    }
    if (pv->kind == PV_TENSOR) {
        if (list) list[0] = v;
        *count = 1;
        return VKI_OK;
    }
    for (int k = 0; k < pv->n_items; k++) {
        if (p->values[pv->items[k]].kind != PV_TENSOR)
            return vki_fail(VKI_ERROR_UNSUPPORTED, "a sequence whose elements are not tensors");
        if (list) list[k] = pv->items[k];
    }
    *count = pv->n_items;
    return VKI_OK;
}
