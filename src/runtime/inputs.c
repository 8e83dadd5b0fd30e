/* Session inputs from the host or the device: tensors, sequences of tensors, optionals (none
 * or set), each checked against what the model declares. */
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static vki_status set_input(vki_session *s, const char *name, vki_dtype dtype, const int64_t *dims, int32_t rank,
                            const void *data, size_t bytes);
static void clear_elems(session_input *in);
static vki_status copy_tensor(session_input *in, const char *name, vki_dtype dtype, const int64_t *dims, int32_t rank,
                              const void *data, size_t bytes);

vki_status vki_session_set_input(vki_session *s, const char *name, vki_dtype dtype, const int64_t *dims, int32_t rank,
                                 const void *data, size_t bytes)
{
    if (!s) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_set_input: NULL argument");
    VKI_TRY(session_enter(s, "vki_session_set_input"));
    return session_leave(s, set_input(s, name, dtype, dims, rank, data, bytes));
}

static vki_status check_tensor(const ir_value *v, const char *name, vki_dtype dtype, const int64_t *dims, int32_t rank);

/* The index of input `name` if dtype and dims fit it (else a message listing what it takes). */
static vki_status check_input(vki_session *s, const char *name, vki_dtype dtype, const int64_t *dims, int32_t rank,
                              int *index)
{
    const ir_graph *g = &s->model->onnx.graph;
    int idx = -1;
    for (int i = 0; i < g->n_inputs; i++)
        if (!strcmp(g->values[g->inputs[i]].name, name)) idx = i;
    char sig[512];
    if (idx < 0) {
        char list[2048] = "";
        for (int i = 0; i < g->n_inputs; i++) {
            size_t l = strlen(list);
            input_signature(&g->values[g->inputs[i]], sig, sizeof sig);
            snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", sig);
        }
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "the model has no input '%s'; it expects: %s", name, list);
    }
    *index = idx;
    return check_tensor(&g->values[g->inputs[idx]], name, dtype, dims, rank);
}

/* dtype and dims fit input v (a tensor, or a sequence's or optional's element). */
static vki_status check_tensor(const ir_value *v, const char *name, vki_dtype dtype, const int64_t *dims, int32_t rank)
{
    char sig[512];
    input_signature(v, sig, sizeof sig);
    if (dtype != v->dtype)
        return vki_fail(VKI_ERROR_SHAPE, "input '%s' is %s, the model expects %s", name, vki_dtype_name(dtype), sig);
    if (rank < 0 || rank > VKI_MAX_RANK) return vki_fail(VKI_ERROR_SHAPE, "input '%s' has rank %d; vkinfer supports 0..%d", name, rank, VKI_MAX_RANK);
    char got[256];
    shape_str(dims, rank, got, sizeof got);
    if (v->rank >= 0) {
        bool ok = v->rank == rank;
        for (int d = 0; ok && d < rank; d++) ok = v->dims[d] < 0 || v->dims[d] == dims[d];
        if (!ok) return vki_fail(VKI_ERROR_SHAPE, "input '%s' has shape %s, the model expects %s", name, got, sig);
    }
    int64_t numel = 1;
    for (int d = 0; d < rank; d++) {
        if (dims[d] < 0) return vki_fail(VKI_ERROR_SHAPE, "input '%s' has a negative dimension in %s", name, got);
        if (dims[d] > 0 && numel > ((int64_t)1 << 40) / dims[d])
            return vki_fail(VKI_ERROR_SHAPE, "input '%s' of shape %s has more than 2^40 elements", name, got);
        numel *= dims[d];
    }
    return VKI_OK;
}

static vki_status set_input(vki_session *s, const char *name, vki_dtype dtype, const int64_t *dims, int32_t rank,
                            const void *data, size_t bytes)
{
    if (!s || !name || (rank > 0 && !dims) || (bytes && !data))
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_set_input: NULL argument");
    int idx;
    VKI_TRY(check_input(s, name, dtype, dims, rank, &idx));
    uint8_t kind = s->model->onnx.graph.values[s->model->onnx.graph.inputs[idx]].type_kind;
    if (kind == IR_SEQUENCE || kind == IR_OPTIONAL_SEQUENCE)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "input '%s' is a sequence: set it with vki_session_set_sequence_input",
                        name);
    clear_elems(&s->inputs[idx]);
    VKI_TRY(copy_tensor(&s->inputs[idx], name, dtype, dims, rank, data, bytes));
    s->inputs[idx].count = 1;
    if (s->inputs[idx].bound) { /* from the host again */
        s->inputs[idx].bound = NULL;
        s->binding_generation++;
    }
    return VKI_OK;
}

static void clear_elems(session_input *in)
{
    for (int e = 0; in->elems && e < in->count; e++) free(in->elems[e].data);
    free(in->elems);
    in->elems = NULL;
}

/* Copies a tensor's data into in (set). */
static vki_status copy_tensor(session_input *in, const char *name, vki_dtype dtype, const int64_t *dims, int32_t rank,
                              const void *data, size_t bytes)
{
    char got[256];
    shape_str(dims, rank, got, sizeof got);
    size_t need = (size_t)shape_numel(dims, rank) * vki_dtype_size(dtype);
    if (bytes != need)
        return vki_fail(VKI_ERROR_SHAPE, "input '%s' of shape %s and dtype %s needs %zu bytes, %zu given", name, got,
                        vki_dtype_name(dtype), need, bytes);
    if (in->bytes != bytes || !in->data) {
        void *copy = malloc(bytes ? bytes : 1);
        if (!copy) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory for input '%s'", name);
        free(in->data);
        in->data = copy;
    }
    if (bytes) memcpy(in->data, data, bytes);
    in->bytes = bytes;
    in->rank = rank;
    memset(in->dims, 0, sizeof in->dims);
    if (rank) memcpy(in->dims, dims, (size_t)rank * sizeof *dims);
    in->set = true;
    return VKI_OK;
}

static vki_status set_sequence_input(vki_session *s, const char *name, uint32_t count, vki_dtype dtype,
                                     const int32_t *ranks, const int64_t *dims, const void *const *data, const size_t *bytes)
{
    if (!name || (count && (!ranks || !dims || !data || !bytes)))
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_set_sequence_input: NULL argument");
    const ir_graph *g = &s->model->onnx.graph;
    int idx = -1;
    for (int i = 0; i < g->n_inputs; i++)
        if (!strcmp(g->values[g->inputs[i]].name, name)) idx = i;
    if (idx < 0) return check_input(s, name, dtype, NULL, 0, &idx); /* the message listing the inputs */
    const ir_value *v = &g->values[g->inputs[idx]];
    if (v->type_kind != IR_SEQUENCE && v->type_kind != IR_OPTIONAL_SEQUENCE)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "input '%s' is not a sequence: set it with vki_session_set_input", name);
    if (count > 100000) return vki_fail(VKI_ERROR_UNSUPPORTED, "input '%s': a sequence of %u tensors; at most 100000", name, count);
    session_input *elems = calloc((size_t)count + 1, sizeof *elems);
    if (!elems) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory for input '%s'", name);
    vki_status st = VKI_OK;
    for (uint32_t k = 0; st == VKI_OK && k < count; k++) {
        if (ranks[k] > 0 && !dims) st = vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_set_sequence_input: NULL dims");
        if (st == VKI_OK) st = check_tensor(v, name, dtype, dims + (size_t)k * VKI_MAX_RANK, ranks[k]);
        if (st == VKI_OK && bytes[k] && !data[k]) st = vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_set_sequence_input: NULL data");
        if (st == VKI_OK) st = copy_tensor(&elems[k], name, dtype, dims + (size_t)k * VKI_MAX_RANK, ranks[k], data[k], bytes[k]);
        if (st != VKI_OK) st = vki_fail_prefix(st, "element %u: ", k);
    }
    if (st != VKI_OK) {
        for (uint32_t k = 0; k < count; k++) free(elems[k].data);
        free(elems);
        return st;
    }
    session_input *in = &s->inputs[idx];
    clear_elems(in);
    in->elems = elems;
    in->count = (int)count;
    in->set = true;
    return VKI_OK;
}

vki_status vki_session_set_sequence_input(vki_session *s, const char *name, uint32_t count, vki_dtype dtype,
                                          const int32_t *ranks, const int64_t *dims, const void *const *data, const size_t *bytes)
{
    if (!s) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_set_sequence_input: NULL argument");
    VKI_TRY(session_enter(s, "vki_session_set_sequence_input"));
    return session_leave(s, set_sequence_input(s, name, count, dtype, ranks, dims, data, bytes));
}

static vki_status set_input_none(vki_session *s, const char *name)
{
    const ir_graph *g = &s->model->onnx.graph;
    for (int i = 0; name && i < g->n_inputs; i++) {
        const ir_value *v = &g->values[g->inputs[i]];
        if (strcmp(v->name, name)) continue;
        if (v->type_kind != IR_OPTIONAL && v->type_kind != IR_OPTIONAL_SEQUENCE)
            return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "input '%s' is not optional: it cannot be none", name);
        clear_elems(&s->inputs[i]);
        s->inputs[i].count = -1;
        s->inputs[i].set = true;
        if (s->inputs[i].bound) {
            s->inputs[i].bound = NULL;
            s->binding_generation++;
        }
        return VKI_OK;
    }
    return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_set_input_none: the model has no input '%s'", name ? name : "(NULL)");
}

vki_status vki_session_set_input_none(vki_session *s, const char *name)
{
    if (!s) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_set_input_none: NULL session");
    VKI_TRY(session_enter(s, "vki_session_set_input_none"));
    return session_leave(s, set_input_none(s, name));
}

static vki_status bind_input(vki_session *s, const char *name, vki_tensor *t)
{
    if (!name || !t) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_bind_input: NULL argument");
    if (t->ctx != s->model->ctx)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_bind_input: tensor for '%s' belongs to another context", name);
    int idx;
    VKI_TRY(check_input(s, name, t->dtype, t->dims, t->rank, &idx));
    if (s->model->onnx.graph.values[s->model->onnx.graph.inputs[idx]].type_kind != IR_TENSOR)
        return vki_fail(VKI_ERROR_UNSUPPORTED, "input '%s' is a sequence or optional: set it from the host", name);
    if (s->keyed[idx])
        return vki_fail(VKI_ERROR_UNSUPPORTED, "input '%s' is read at plan time (a shape or other value an op needs "
                        "before it runs): set it from the host with vki_session_set_input, not as a device tensor", name);
    session_input *in = &s->inputs[idx];
    free(in->data);
    in->data = NULL;
    in->bytes = 0;
    in->rank = t->rank;
    memcpy(in->dims, t->dims, sizeof in->dims);
    in->set = true;
    in->count = 1;
    in->bound = t;
    s->binding_generation++;
    return VKI_OK;
}

vki_status vki_session_bind_input(vki_session *s, const char *name, vki_tensor *t)
{
    if (!s) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_bind_input: NULL session");
    VKI_TRY(session_enter(s, "vki_session_bind_input"));
    return session_leave(s, bind_input(s, name, t));
}
