/* Models and sessions: load, bind inputs, plan per input shapes (cached), run, read outputs. */
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vki_status vki_model_load(vki_context *ctx, const char *path, vki_model **out)
{
    if (!ctx || !path || !out) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_model_load: NULL argument");
    *out = NULL;
    vki_model *m = calloc(1, sizeof *m);
    if (!m) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    m->ctx = ctx;
    const char *slash = strrchr(path, '/');
    snprintf(m->name, sizeof m->name, "%s", slash ? slash + 1 : path);
    vki_status st = onnx_model_load(path, &m->onnx);
    if (st != VKI_OK) {
        free(m);
        return st;
    }
    /* every op must be known now, so that a model that cannot run fails at load */
    const ir_graph *g = &m->onnx.graph;
    char missing[1024] = "";
    int n_missing = 0;
    for (int n = 0; n < g->n_nodes; n++) {
        const ir_node *node = &g->nodes[n];
        if (op_find(node->domain, node->op_type)) continue;
        if (n_missing++ < 8) {
            size_t l = strlen(missing);
            snprintf(missing + l, sizeof missing - l, "%snode '%s' (%s%s%s)", l ? ", " : "", node->name,
                     node->domain, *node->domain ? "." : "", node->op_type);
        }
    }
    for (int i = 0; i < g->n_inputs && !n_missing; i++) {
        const ir_value *v = &g->values[g->inputs[i]];
        if (!dtype_gpu_supported(v->dtype)) {
            vki_fail(VKI_ERROR_UNSUPPORTED, "%s: input '%s' has dtype %s, which vkinfer does not run", path, v->name,
                     vki_dtype_name(v->dtype));
            vki_model_destroy(m); /* after the message: it names the model's strings */
            return VKI_ERROR_UNSUPPORTED;
        }
    }
    if (n_missing) {
        vki_model_destroy(m);
        return vki_fail(VKI_ERROR_UNSUPPORTED, "%s: %d node(s) use ops vkinfer does not implement: %s%s (see `vkinfer ops`)",
                        path, n_missing, missing, n_missing > 8 ? ", ..." : "");
    }
    *out = m;
    return VKI_OK;
}

void vki_model_destroy(vki_model *m)
{
    if (!m) return;
    onnx_model_free(&m->onnx);
    free(m);
}

uint32_t vki_model_input_count(const vki_model *m) { return m ? (uint32_t)m->onnx.graph.n_inputs : 0; }
uint32_t vki_model_output_count(const vki_model *m) { return m ? (uint32_t)m->onnx.graph.n_outputs : 0; }

static void describe_value(const ir_value *v, vki_tensor_info *out)
{
    memset(out, 0, sizeof *out);
    out->name = v->name;
    out->dtype = v->dtype;
    out->rank = v->rank < 0 ? 0 : v->rank;
    for (int d = 0; d < out->rank; d++) {
        out->dims[d] = v->dims[d];
        out->dim_names[d] = v->dim_names[d];
    }
    if (v->rank < 0) out->rank = -1;
    out->kind = v->type_kind;
}

vki_status vki_model_input_info(const vki_model *m, uint32_t i, vki_tensor_info *out)
{
    if (!m || !out || i >= (uint32_t)m->onnx.graph.n_inputs)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_model_input_info: index %u out of range", i);
    describe_value(&m->onnx.graph.values[m->onnx.graph.inputs[i]], out);
    return VKI_OK;
}

vki_status vki_model_output_info(const vki_model *m, uint32_t i, vki_tensor_info *out)
{
    if (!m || !out || i >= (uint32_t)m->onnx.graph.n_outputs)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_model_output_info: index %u out of range", i);
    describe_value(&m->onnx.graph.values[m->onnx.graph.outputs[i]], out);
    return VKI_OK;
}

static vki_status find_plan(vki_session *s, bool eager, plan **out);

vki_status vki_session_create(vki_model *m, vki_session **out) { return vki_session_create_with_options(m, NULL, out); }

vki_status vki_session_create_with_options(vki_model *m, const vki_session_options *opts, vki_session **out)
{
    if (!m || !out) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_create: NULL argument");
    *out = NULL;
    VKI_TRY(vk_check_lost(&m->ctx->vk));
    vki_precision precision = opts ? opts->precision : VKI_PRECISION_DEFAULT;
    if (precision != VKI_PRECISION_DEFAULT && precision != VKI_PRECISION_FP16)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_create: unknown precision %d", (int)precision);
    vki_session *s = calloc(1, sizeof *s);
    const ir_graph *g = &m->onnx.graph;
    if (s) {
        s->model = m;
        s->fp16_mode = precision == VKI_PRECISION_FP16;
        s->inputs = calloc((size_t)g->n_inputs + 1, sizeof *s->inputs);
        s->keyed = calloc((size_t)g->n_inputs + 1, sizeof *s->keyed);
        s->outputs = calloc((size_t)g->n_outputs + 1, sizeof *s->outputs);
        s->output_bytes = calloc((size_t)g->n_outputs + 1, sizeof *s->output_bytes);
        s->n_output_buffers = g->n_outputs;
        s->bound_outputs = calloc((size_t)g->n_outputs + 1, sizeof *s->bound_outputs);
        s->binding_generation = 1;
    }
    if (!s || !s->inputs || !s->keyed || !s->outputs || !s->output_bytes || !s->bound_outputs ||
        weight_cache_init(&s->weights, g->n_values)) {
        vki_session_destroy(s);
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    vk_context *vk = &m->ctx->vk;
    VkCommandPoolCreateInfo pci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = vk->queue_family;
    VkResult r = vk->f.vkCreateCommandPool(vk->device, &pci, NULL, &s->io_pool);
    if (r != VK_SUCCESS) {
        vki_session_destroy(s);
        return vki_fail(VKI_ERROR_VULKAN, "vkCreateCommandPool failed (%s)", vk_result_str(r));
    }
    /* inputs with fully declared shapes: plan now, so that what cannot run (an op's dtype,
     * shape or attribute) fails here, before any data, naming the node */
    bool all_static = true;
    for (int i = 0; i < g->n_inputs; i++) { /* optionals start as none; sequences are not set yet */
        uint8_t kind = g->values[g->inputs[i]].type_kind;
        s->inputs[i].count = kind == IR_TENSOR ? 1 : kind == IR_SEQUENCE ? 0 : -1;
        s->inputs[i].set = kind == IR_OPTIONAL || kind == IR_OPTIONAL_SEQUENCE;
    }
    for (int i = 0; i < g->n_inputs && all_static; i++) {
        const ir_value *v = &g->values[g->inputs[i]];
        all_static = v->rank >= 0 && v->type_kind == IR_TENSOR;
        for (int d = 0; all_static && d < v->rank; d++) all_static = v->dims[d] >= 0;
    }
    if (all_static && g->n_inputs <= 256) {
        for (int i = 0; i < g->n_inputs; i++) {
            const ir_value *v = &g->values[g->inputs[i]];
            s->inputs[i].rank = v->rank;
            memcpy(s->inputs[i].dims, v->dims, sizeof s->inputs[i].dims);
        }
        plan *p = NULL;
        vki_status st = find_plan(s, true, &p);
        if (st == VKI_OK) st = vk_check_validation(&m->ctx->vk);
        if (st != VKI_OK) {
            vki_session_destroy(s);
            return st;
        }
    }
    *out = s;
    return VKI_OK;
}

void vki_session_destroy(vki_session *s)
{
    if (!s) return;
    for (int i = 0; i < s->n_plans; i++) plan_destroy(s->plans[i]);
    if (s->model) weight_cache_free(&s->model->ctx->vk, &s->weights);
    if (s->model && s->io_pool) s->model->ctx->vk.f.vkDestroyCommandPool(s->model->ctx->vk.device, s->io_pool, NULL);
    if (s->model) {
        const ir_graph *g = &s->model->onnx.graph;
        for (int i = 0; s->inputs && i < g->n_inputs; i++) {
            free(s->inputs[i].data);
            for (int e = 0; s->inputs[i].elems && e < s->inputs[i].count; e++) free(s->inputs[i].elems[e].data);
            free(s->inputs[i].elems);
        }
        for (int i = 0; s->outputs && i < s->n_output_buffers; i++) free(s->outputs[i]);
    }
    free(s->inputs);
    free(s->keyed);
    free(s->dispatch_ms);
    free(s->outputs);
    free(s->output_bytes);
    free(s->bound_outputs);
    free(s);
}

void input_signature(const ir_value *v, char *buf, size_t size)
{
    char shape[256];
    static const char *const kinds[] = {"", "sequence of ", "optional ", "optional sequence of "};
    size_t o = (size_t)snprintf(buf, size, "'%s' %s%s", v->name, kinds[v->type_kind & 3], vki_dtype_name(v->dtype));
    if (v->rank < 0) {
        snprintf(buf + o, size - o, " (any shape)");
        return;
    }
    shape_str(v->dims, v->rank, shape, sizeof shape);
    snprintf(buf + o, size - o, "%s", shape);
}

/* One session is one thread's at a time (include/vkinfer.h, "Threads"): a call that changes
 * it while another thread is inside one is refused rather than left to corrupt it. */
vki_status session_enter(vki_session *s, const char *fn)
{
    if (atomic_exchange(&s->busy, 1))
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "%s: the session is in use by another thread (a session is one "
                        "thread's at a time; give each thread its own session)", fn);
    return VKI_OK;
}

vki_status session_leave(vki_session *s, vki_status st)
{
    atomic_store(&s->busy, 0);
    return st;
}

vki_status vki_session_bind_output(vki_session *s, uint32_t index, vki_tensor *t)
{
    if (!s) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_bind_output: NULL session");
    const ir_graph *g = &s->model->onnx.graph;
    if (index >= (uint32_t)g->n_outputs)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_bind_output: output %u out of range (%d outputs)", index, g->n_outputs);
    const ir_value *v = &g->values[g->outputs[index]];
    if (t && t->ctx != s->model->ctx)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_bind_output: tensor for '%s' belongs to another context", v->name);
    if (t && v->type_kind != IR_TENSOR)
        return vki_fail(VKI_ERROR_UNSUPPORTED, "vki_session_bind_output: output '%s' is a sequence or optional; only tensor "
                        "outputs can be bound", v->name);
    if (t && v->dtype != VKI_DTYPE_UNDEFINED && t->dtype != v->dtype)
        return vki_fail(VKI_ERROR_SHAPE, "vki_session_bind_output: output '%s' is %s, the tensor %s", v->name,
                        vki_dtype_name(v->dtype), vki_dtype_name(t->dtype));
    VKI_TRY(session_enter(s, "vki_session_bind_output"));
    s->bound_outputs[index] = t;
    s->binding_generation++;
    return session_leave(s, VKI_OK);
}

/* The plan for the inputs' current shapes (and keyed values), made if needed. `eager`: plan
 * before any data is set (from declared shapes); if a plan needs an input's values, stop
 * with *out = NULL and no error: the first run plans then. */
/* The tensor e of input i (a sequence's element, or the input itself). */
static const session_input *input_tensor(const vki_session *s, int i, int e)
{
    return s->inputs[i].elems ? &s->inputs[i].elems[e] : &s->inputs[i];
}

/* The number of tensors the inputs hold now. */
static int input_tensor_count(const vki_session *s)
{
    const ir_graph *g = &s->model->onnx.graph;
    int n = 0;
    for (int i = 0; i < g->n_inputs; i++) n += s->inputs[i].count > 0 ? s->inputs[i].count : 0;
    return n;
}

static vki_status find_plan(vki_session *s, bool eager, plan **out)
{
    const ir_graph *g = &s->model->onnx.graph;
    if (g->n_inputs > 256) return vki_fail(VKI_ERROR_UNSUPPORTED, "models with more than 256 inputs are not supported");
    int n_io = input_tensor_count(s), counts[256];
    int *ranks = calloc((size_t)n_io + 1, sizeof *ranks);
    int64_t *dims = calloc((size_t)n_io * VKI_MAX_RANK + 1, sizeof *dims);
    if (!dims || !ranks) {
        free(dims);
        free(ranks);
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    for (int i = 0, k = 0; i < g->n_inputs; i++) {
        counts[i] = s->inputs[i].count;
        for (int e = 0; e < s->inputs[i].count; e++, k++) {
            const session_input *t = input_tensor(s, i, e);
            ranks[k] = t->rank;
            memcpy(dims + (size_t)k * VKI_MAX_RANK, t->dims, sizeof t->dims);
        }
    }
    size_t key = (size_t)n_io * VKI_MAX_RANK * sizeof *dims;
    for (int k = 0; k < s->n_plans; k++) {
        plan *c = s->plans[k];
        if (c->n_io_in != n_io || memcmp(c->in_count, counts, (size_t)g->n_inputs * sizeof *counts) ||
            memcmp(c->input_dims, dims, key))
            continue;
        if (c->n_sizes != s->n_sizes || memcmp(c->sizes, s->sizes, (size_t)s->n_sizes * sizeof *s->sizes)) continue;
        bool same = true; /* keyed inputs must hold the values the plan was made for */
        for (size_t i = 0, o = 0; same && i < (size_t)g->n_inputs; i++)
            if (s->keyed[i]) {
                same = o + s->inputs[i].bytes <= c->key_bytes && !memcmp(c->key_values + o, s->inputs[i].data, s->inputs[i].bytes);
                o += s->inputs[i].bytes;
            }
        if (same) {
            free(dims);
            free(ranks);
            *out = c;
            return VKI_OK;
        }
    }
    const void **data = calloc((size_t)n_io + 1, sizeof *data);
    size_t *bytes = calloc((size_t)n_io + 1, sizeof *bytes);
    vki_status st = data && bytes ? VKI_OK : vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int i = 0, k = 0; st == VKI_OK && i < g->n_inputs; i++)
        for (int e = 0; e < s->inputs[i].count; e++, k++) {
            data[k] = input_tensor(s, i, e)->data;
            bytes[k] = input_tensor(s, i, e)->bytes;
        }
    plan *p = NULL;
    /* an op that needs the value of a graph input (a shape fed as an input) keys the session
     * on that input's values, and planning starts again: at most once per input */
    for (int attempt = 0; st == VKI_OK && attempt <= g->n_inputs; attempt++) {
        int wanted = -1;
        st = plan_create(&s->model->ctx->vk, g, op_find, counts, ranks, dims, data, bytes, s->keyed, s->sizes, s->n_sizes,
                         s->profiling,
                         s->fp16_mode, &s->weights, &wanted, &p);
        if (st == VKI_ERROR_OUT_OF_MEMORY) st = vki_fail_prefix(st, "model '%s': ", s->model->name);
        if (st == VKI_OK || wanted < 0 || s->keyed[wanted]) break;
        if (s->inputs[wanted].bound) {
            st = vki_fail(VKI_ERROR_UNSUPPORTED, "input '%s' is read at plan time (a shape or other value an op needs before "
                          "it runs): set it from the host with vki_session_set_input, not as a device tensor",
                          g->values[g->inputs[wanted]].name);
            break;
        }
        s->keyed[wanted] = true;
        if (eager) {
            vki_clear_error();
            free(data);
            free(bytes);
            free(dims);
            free(ranks);
            *out = NULL;
            return VKI_OK;
        }
        st = VKI_OK;
        /* plans made before the key changed no longer match: drop them */
        for (int k = 0; k < s->n_plans; k++) plan_destroy(s->plans[k]);
        s->n_plans = 0;
        s->last = s->prepared = NULL;
    }
    free(data);
    free(bytes);
    free(dims);
    free(ranks);
    if (st != VKI_OK) return st;
    if (eager && p->probe) { /* sizes computed from data: the first run plans */
        plan_destroy(p);
        *out = NULL;
        return VKI_OK;
    }
    if (s->n_plans == SESSION_MAX_PLANS) { /* drop the oldest */
        if (s->last == s->plans[0]) s->last = NULL;
        if (s->prepared == s->plans[0]) s->prepared = NULL;
        plan_destroy(s->plans[0]);
        memmove(s->plans, s->plans + 1, (SESSION_MAX_PLANS - 1) * sizeof *s->plans);
        s->n_plans--;
    }
    s->plans[s->n_plans++] = p;
    *out = p;
    return VKI_OK;
}

static vki_status read_timestamps(vki_session *s, const plan *p)
{
    vk_context *vk = &s->model->ctx->vk;
    uint32_t n = (uint32_t)p->n_dispatches + 1;
    uint64_t *ticks = malloc(n * sizeof *ticks);
    double *ms = realloc(s->dispatch_ms, n * sizeof *ms);
    if (!ticks || !ms) {
        free(ticks);
        if (ms) s->dispatch_ms = ms;
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    s->dispatch_ms = ms;
    VkResult r = vk->f.vkGetQueryPoolResults(vk->device, p->queries, 0, n, n * sizeof *ticks, ticks, sizeof *ticks,
                                             VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) {
        free(ticks);
        return vk_fail_result(vk, r, "reading GPU timestamps");
    }
    uint64_t mask = vk->caps.timestamp_bits >= 64 ? ~0ull : (1ull << vk->caps.timestamp_bits) - 1;
    for (uint32_t d = 0; d + 1 < n; d++)
        ms[d] = (double)((ticks[d + 1] - ticks[d]) & mask) * vk->caps.timestamp_period / 1e6;
    s->n_dispatch_ms = (int)n - 1;
    free(ticks);
    return VKI_OK;
}

vki_status vki_session_set_profiling(vki_session *s, int enabled)
{
    if (!s) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_set_profiling: NULL session");
    VKI_TRY(session_enter(s, "vki_session_set_profiling"));
    if (s->profiling == (enabled != 0)) return session_leave(s, VKI_OK);
    s->profiling = enabled != 0;
    for (int k = 0; k < s->n_plans; k++) plan_destroy(s->plans[k]);
    s->n_plans = 0;
    s->last = s->prepared = NULL;
    s->n_dispatch_ms = 0;
    return session_leave(s, VKI_OK);
}

vki_status vki_session_profile(const vki_session *s, vki_dispatch_profile *out, uint32_t capacity, uint32_t *count)
{
    if (!s || !count || (capacity && !out)) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_profile: NULL argument");
    const plan *p = s->last;
    if (!p || !p->queries || s->n_dispatch_ms != p->n_dispatches)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "no profile: turn profiling on with vki_session_set_profiling, then run");
    const ir_graph *g = p->graph;
    for (int d = 0; d < p->n_dispatches && (uint32_t)d < capacity; d++) {
        const plan_dispatch *pd = &p->dispatches[d];
        const ir_node *node = &g->nodes[pd->node];
        double bytes = 0;
        for (int i = 0; i < pd->n_bind; i++) {
            int root = plan_root(p, pd->bind[i]);
            uint64_t size = pd->win_size[i] ? pd->win_size[i] : plan_value_bytes(&p->values[root]) - pd->win_offset[i];
            bool seen = false; /* a value bound twice (binding 2 repeating A) counts once */
            for (int j = 0; j < i && !seen; j++)
                seen = plan_root(p, pd->bind[j]) == root && pd->win_offset[j] == pd->win_offset[i] &&
                       pd->win_size[j] == pd->win_size[i];
            if (!seen) bytes += (double)size;
        }
        out[d] = (vki_dispatch_profile){node->name, node->op_type, pd->pipeline->shader->name, s->dispatch_ms[d], pd->flops,
                                        bytes};
    }
    *count = (uint32_t)p->n_dispatches;
    return VKI_OK;
}

static vki_status session_run(vki_session *s);

static vki_status check_inputs_set(vki_session *s)
{
    const ir_graph *g = &s->model->onnx.graph;
    for (int i = 0; i < g->n_inputs; i++)
        if (!s->inputs[i].set) {
            char sig[512];
            input_signature(&g->values[g->inputs[i]], sig, sizeof sig);
            return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "input %s was not set", sig);
        }
    return VKI_OK;
}

vki_status vki_session_prepare(vki_session *s)
{
    if (!s) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_prepare: NULL session");
    VKI_TRY(session_enter(s, "vki_session_prepare"));
    vki_status st = vk_check_lost(&s->model->ctx->vk); /* a lost device plans nothing */
    if (st == VKI_OK) st = check_inputs_set(s);
    plan *p = NULL;
    if (st == VKI_OK) st = find_plan(s, false, &p);
    if (st == VKI_OK) st = vk_check_validation(&s->model->ctx->vk);
    if (st == VKI_OK) s->prepared = p;
    return session_leave(s, st);
}

vki_status vki_session_output_info(const vki_session *s, uint32_t index, vki_tensor_info *out)
{
    if (!s || !out) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_output_info: NULL argument");
    const ir_graph *g = &s->model->onnx.graph;
    if (!s->prepared) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_output_info: no plan yet (prepare or run first)");
    if (s->prepared->probe)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_output_info: the output shapes depend on sizes computed from "
                        "the data (NonZero, Compress, Unique, NonMaxSuppression): known after a run");
    if (index >= (uint32_t)g->n_outputs)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "output %u out of range (%d outputs)", index, g->n_outputs);
    const plan_value *pv = &s->prepared->values[g->outputs[index]];
    memset(out, 0, sizeof *out);
    out->name = g->values[g->outputs[index]].name;
    out->dtype = pv->dtype;
    out->rank = pv->rank;
    memcpy(out->dims, pv->dims, sizeof out->dims);
    out->kind = g->values[g->outputs[index]].type_kind;
    return VKI_OK;
}

vki_status vki_session_run(vki_session *s)
{
    if (!s) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_run: NULL session");
    VKI_TRY(session_enter(s, "vki_session_run"));
    return session_leave(s, session_run(s));
}

/* Submits the plan's segments (struct plan), reading each data-dependent size after its own:
 * *resized when one differs from the size the plan was made for, or when p is a probe (the
 * session's sizes then hold what was read, and the caller plans again). */
static vki_status submit_segments(vki_session *s, plan *p, bool *resized)
{
    vk_context *vk = &s->model->ctx->vk;
    *resized = false;
    if (!p->n_reads) {
        VkCommandBuffer cmds[3] = {p->cmd_in, p->cmd, p->cmd_out};
        return vk_submit_and_wait(vk, cmds, 3, p->fence);
    }
    for (int k = 0; k < p->n_reads; k++) {
        VkCommandBuffer cmds[2] = {p->cmd_in, p->segments[k]};
        VKI_TRY(vk_submit_and_wait(vk, k ? cmds + 1 : cmds, k ? 1 : 2, p->fence));
        vk_buffer_invalidate(vk, &p->download);
        int32_t size;
        memcpy(&size, (const uint8_t *)p->download.mapped + p->read_at + 16 * (uint64_t)k, sizeof size);
        if (k < p->n_sizes && size == p->sizes[k]) continue;
        s->sizes[k] = size;
        s->n_sizes = k + 1;
        *resized = true;
        return VKI_OK;
    }
    VkCommandBuffer cmds[2] = {p->cmd, p->cmd_out};
    return vk_submit_and_wait(vk, cmds, 2, p->fence);
}

/* Runs through probe plans and plans for new sizes until one runs whole: each round either
 * learns one more size or replaces one, so PLAN_MAX_SIZES rounds per size bound it. */
#define SESSION_MAX_RESIZES (4 * PLAN_MAX_SIZES)

static vki_status session_run_once(vki_session *s, bool *resized);

static vki_status session_run(vki_session *s)
{
    VKI_TRY(check_inputs_set(s));
    for (int round = 0; round < SESSION_MAX_RESIZES; round++) {
        bool resized;
        VKI_TRY(session_run_once(s, &resized));
        if (!resized) return VKI_OK;
    }
    return vki_fail(VKI_ERROR_UNSUPPORTED, "the data-dependent sizes (NonZero, Compress, Unique, NonMaxSuppression) did not "
                    "settle after %d plans", SESSION_MAX_RESIZES);
}

static vki_status session_run_once(vki_session *s, bool *resized)
{
    const ir_graph *g = &s->model->onnx.graph;
    vk_context *vk = &s->model->ctx->vk;
    VKI_TRY(vk_check_lost(vk)); /* a lost device plans and submits nothing */
    plan *p = NULL;
    *resized = false;
    vki_status st = find_plan(s, false, &p);
    if (st == VKI_OK) st = vk_check_validation(vk);
    if (st != VKI_OK) return st;
    s->prepared = p;
    /* device tensors bound as outputs must have the outputs' dtypes and shapes, and none may
     * also be read by this run */
    for (int i = 0; i < g->n_outputs && !p->probe; i++) {
        const vki_tensor *t = s->bound_outputs[i];
        if (!t) continue;
        if (p->out_count[i] != 1 || p->values[g->outputs[i]].kind != PV_TENSOR)
            return vki_fail(VKI_ERROR_UNSUPPORTED, "output '%s' is a sequence or optional: it cannot be bound to a device tensor",
                            g->values[g->outputs[i]].name);
        const plan_value *pv = &p->values[g->outputs[i]];
        char want[256], got[256];
        if (t->dtype != pv->dtype || t->rank != pv->rank || memcmp(t->dims, pv->dims, (size_t)pv->rank * sizeof *pv->dims))
            return vki_fail(VKI_ERROR_SHAPE, "output '%s' is %s%s, the device tensor bound to it %s%s", g->values[g->outputs[i]].name,
                            vki_dtype_name(pv->dtype), shape_str(pv->dims, pv->rank, want, sizeof want),
                            vki_dtype_name(t->dtype), shape_str(t->dims, t->rank, got, sizeof got));
        for (int k = 0; k < i; k++)
            if (s->bound_outputs[k] == t)
                return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "one device tensor is bound to outputs '%s' and '%s'; "
                                "each output needs its own", g->values[g->outputs[k]].name, g->values[g->outputs[i]].name);
        for (int k = 0; k < g->n_inputs; k++)
            if (s->inputs[k].bound == t)
                return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "one device tensor is bound as input '%s' and output '%s' of the same "
                                "run; use two and swap them between runs", g->values[g->inputs[k]].name,
                                g->values[g->outputs[i]].name);
    }
    if (p->io_generation != s->binding_generation) { /* bindings changed: re-record the copies */
        VkBuffer *in_src = calloc((size_t)p->n_io_in + 1, sizeof *in_src);
        VkBuffer *out_dst = calloc((size_t)p->n_io_out + 1, sizeof *out_dst);
        if (!in_src || !out_dst) {
            free(in_src);
            free(out_dst);
            return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        }
        for (int i = 0; i < g->n_inputs; i++)
            if (s->inputs[i].bound) in_src[p->in_first[i]] = s->inputs[i].bound->buffer.buffer;
        for (int i = 0; i < g->n_outputs && !p->probe; i++)
            if (s->bound_outputs[i]) out_dst[p->out_first[i]] = s->bound_outputs[i]->buffer.buffer;
        st = plan_record_io(p, s->io_pool, in_src, out_dst);
        free(in_src);
        free(out_dst);
        if (st != VKI_OK) return st;
        p->io_generation = s->binding_generation;
    }
    double t0 = now_ms();
    for (int i = 0; i < g->n_inputs; i++)
        for (int e = 0; e < s->inputs[i].count; e++) {
            int k = p->in_first[i] + e;
            const plan_value *pv = &p->values[p->io_in[k]];
            const session_input *in = input_tensor(s, i, e);
            if (pv->buffer != PLAN_BUF_ARENA || in->bound) continue;
            size_t count = (size_t)shape_numel(pv->dims, pv->rank), bad = 0;
            if (!host_to_storage_parallel(pv->dtype, in->data, pv->storage, (uint8_t *)p->upload.mapped + p->input_offsets[k],
                                          count, &bad)) {
                char why[256];
                dtype_range_message(pv->dtype, in->data, bad, why, sizeof why);
                return vki_fail(VKI_ERROR_UNSUPPORTED, "input '%s' %s", g->values[g->inputs[i]].name, why);
            }
        }
    vk_buffer_flush(vk, &p->upload);
    VKI_TRY(submit_segments(s, p, resized));
    if (*resized) return vk_check_validation(vk);
    if (p->probe) { /* its last read matched the size it stopped for, which its node refused */
        int k = p->n_reads - 1;
        const ir_node *nd = k >= 0 ? &p->graph->nodes[p->read_node[k]] : NULL;
        return vki_fail(VKI_ERROR_UNSUPPORTED, "node '%s' (%s): a value it reads back from the GPU (a size, or a Loop's trip "
                        "count or condition) is %lld, outside the range the node takes (0 to its limit)",
                        nd ? nd->name : "?", nd ? nd->op_type : "?", (long long)(k >= 0 && k < PLAN_MAX_SIZES ? s->sizes[k] : -1));
    }
    vk_buffer_invalidate(vk, &p->download);
    if (p->n_io_out > s->n_output_buffers) {
        void **outs = realloc(s->outputs, ((size_t)p->n_io_out + 1) * sizeof *outs);
        if (outs) s->outputs = outs;
        size_t *ob = realloc(s->output_bytes, ((size_t)p->n_io_out + 1) * sizeof *ob);
        if (ob) s->output_bytes = ob;
        if (!outs || !ob) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        for (int k = s->n_output_buffers; k < p->n_io_out; k++) {
            s->outputs[k] = NULL;
            s->output_bytes[k] = 0;
        }
        s->n_output_buffers = p->n_io_out;
    }
    for (int i = 0; i < p->n_io_out; i++) {
        const plan_value *pv = &p->values[p->io_out[i]];
        const plan_value *root = &p->values[plan_root(p, p->io_out[i])];
        int o = 0; /* the graph output it belongs to */
        while (o + 1 < g->n_outputs && p->out_first[o + 1] <= i) o++;
        if (s->bound_outputs[o]) { /* written on the GPU; a constant output is written now */
            if (root->host) VKI_TRY(vki_tensor_write(s->bound_outputs[o], root->host, root->host_bytes));
            continue;
        }
        size_t count = (size_t)shape_numel(pv->dims, pv->rank);
        size_t bytes = count * vki_dtype_size(pv->dtype);
        if (s->output_bytes[i] != bytes || !s->outputs[i]) {
            void *buf = malloc(bytes ? bytes : 1);
            if (!buf) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory for output '%s'", g->values[g->outputs[o]].name);
            free(s->outputs[i]);
            s->outputs[i] = buf;
            s->output_bytes[i] = bytes;
        }
        if (root->host) /* known at plan time, in any dtype */
            memcpy(s->outputs[i], root->host, bytes);
        else
            storage_to_host_parallel(pv->dtype, root->storage, (const uint8_t *)p->download.mapped + p->output_offsets[i],
                                     s->outputs[i], count);
    }
    s->last_run_ms = now_ms() - t0;
    s->last = p;
    if (p->queries) VKI_TRY(read_timestamps(s, p));
    return vk_check_validation(vk);
}

static vki_status get_output(vki_session *s, uint32_t index, vki_tensor_info *info, const void **data, size_t *bytes);

/* Under the busy flag like the calls that change the session: a run in another thread rewrites
 * s->last and the output buffers (found by ThreadSanitizer, make tsan). */
vki_status vki_session_get_output(vki_session *s, uint32_t index, vki_tensor_info *info, const void **data, size_t *bytes)
{
    if (!s) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_get_output: no run yet");
    VKI_TRY(session_enter(s, "vki_session_get_output"));
    return session_leave(s, get_output(s, index, info, data, bytes));
}

static vki_status get_element(vki_session *s, uint32_t index, int element, vki_tensor_info *info, const void **data,
                              size_t *bytes)
{
    if (!s->last) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_get_output: no run yet");
    const ir_graph *g = &s->model->onnx.graph;
    const plan *p = s->last;
    if (index >= (uint32_t)g->n_outputs) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "output %u out of range (%d outputs)", index, g->n_outputs);
    const char *name = g->values[g->outputs[index]].name;
    int count = p->out_count[index];
    if (element < 0) { /* vki_session_get_output: a tensor, or an optional holding one */
        if (count < 0)
            return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "output '%s' is an optional that is none in this run "
                            "(vki_session_get_output_count gives -1)", name);
        const plan_value *ov = &p->values[g->outputs[index]];
        if (ov->kind == PV_SEQUENCE || (ov->kind == PV_OPTIONAL && p->values[ov->items[0]].kind == PV_SEQUENCE))
            return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "output '%s' is a sequence of %d tensors: read them with "
                            "vki_session_get_output_element", name, count);
        element = 0;
    }
    if (element >= count)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "output '%s' holds %d tensor(s); element %d is out of range", name,
                        count < 0 ? 0 : count, element);
    int k = p->out_first[index] + element;
    const plan_value *pv = &p->values[p->io_out[k]];
    if (s->bound_outputs[index])
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "output '%s' is bound to a device tensor: the run wrote it there "
                        "(vki_tensor_read brings it to the host)", name);
    if (info) {
        memset(info, 0, sizeof *info);
        info->name = name;
        info->dtype = pv->dtype;
        info->rank = pv->rank;
        memcpy(info->dims, pv->dims, sizeof info->dims);
        info->kind = g->values[g->outputs[index]].type_kind;
    }
    if (data) *data = s->outputs[k];
    if (bytes) *bytes = s->output_bytes[k];
    return VKI_OK;
}

static vki_status get_output(vki_session *s, uint32_t index, vki_tensor_info *info, const void **data, size_t *bytes)
{
    return get_element(s, index, -1, info, data, bytes);
}

vki_status vki_session_get_output_element(vki_session *s, uint32_t index, uint32_t element, vki_tensor_info *info,
                                          const void **data, size_t *bytes)
{
    if (!s) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_get_output_element: no run yet");
    if (element > 100000) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_get_output_element: element %u out of range", element);
    VKI_TRY(session_enter(s, "vki_session_get_output_element"));
    return session_leave(s, get_element(s, index, (int)element, info, data, bytes));
}

vki_status vki_session_get_output_count(vki_session *s, uint32_t index, int32_t *count)
{
    if (!s || !count) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_get_output_count: NULL argument");
    VKI_TRY(session_enter(s, "vki_session_get_output_count"));
    vki_status st = VKI_OK;
    const ir_graph *g = &s->model->onnx.graph;
    if (!s->last) st = vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_get_output_count: no run yet");
    else if (index >= (uint32_t)g->n_outputs)
        st = vki_fail(VKI_ERROR_INVALID_ARGUMENT, "output %u out of range (%d outputs)", index, g->n_outputs);
    else *count = s->last->out_count[index];
    return session_leave(s, st);
}

vki_status vki_session_stats_get(const vki_session *s, vki_session_stats *out)
{
    if (!s || !out) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_session_stats_get: NULL argument");
    memset(out, 0, sizeof *out);
    out->plans_cached = (uint32_t)s->n_plans;
    out->last_run_ms = s->last_run_ms;
    const plan *p = s->last;
    if (!p) return VKI_OK;
    out->plan_ms = p->plan_ms;
    out->dispatch_count = (uint32_t)p->n_dispatches;
    out->gpu_node_count = p->gpu_nodes;
    out->folded_node_count = p->folded_nodes;
    out->aliased_node_count = p->aliased_nodes;
    out->fused_node_count = p->fused_nodes;
    out->weight_bytes = s->weights.bytes; /* shared initializers + every cached plan's own constants */
    for (int k = 0; k < s->n_plans; k++) out->weight_bytes += s->plans[k]->weight_bytes;
    out->intermediate_bytes = p->arena_bytes;
    out->intermediate_unshared_bytes = p->unshared_bytes;
    return VKI_OK;
}
