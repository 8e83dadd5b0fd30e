/* The op contract's dispatch side (op_api.h): grids, dtype codes and binding limits, the
 * storage a kernel takes its values in and its shader variant, and recording dispatches with
 * each binding converted to the storage its kernel reads (an output written through a scratch
 * copy is converted back at the node's end, plan_finish_node). */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool op_cpu_kernels(const op_ctx *c, int force)
{
    if (force == OPT_KERNELS_GPU) return false;
    if (force == OPT_KERNELS_CPU) return true;
    return c->vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
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
vki_status plan_record_convert(op_ctx *c, int src, gpu_storage from, int dst, gpu_storage to, int64_t numel)
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
        VKI_TRY(plan_record_convert(c, from, rv->storage, t, want, numel));
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
        VKI_TRY(plan_record_convert(c, t, p->values[t].storage, v, p->values[v].storage,
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
