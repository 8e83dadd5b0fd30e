#define _GNU_SOURCE
/* Memory placement: constants packed into weight blocks (weight_block_limit bytes each), every other device value
 * placed in one intermediate arena by liveness (first-fit over lifetimes), so values whose
 * lifetimes do not overlap share bytes. Time 0 is the input upload, dispatch i is time i+1,
 * the output download is time n+1. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#define PLAN_ALIGN 256

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

uint64_t weight_block_limit(const vk_context *vk)
{
    uint64_t limit = (uint64_t)1 << 30; /* smaller staging buffers, and room between allocations */
    if (vk->caps.max_allocation_bytes && limit > vk->caps.max_allocation_bytes) limit = vk->caps.max_allocation_bytes;
    return limit;
}

uint64_t weight_block_place(uint64_t limit, uint64_t bytes, int *block, uint64_t *used)
{
    if (*used && *used + bytes > limit) {
        ++*block;
        *used = 0;
    }
    uint64_t at = *used;
    *used = align_up(at + bytes, PLAN_ALIGN);
    return at;
}

static size_t host_size(const plan_value *pv)
{
    return pv->host_bytes ? pv->host_bytes : (size_t)shape_numel(pv->dims, pv->rank) * vki_dtype_size(pv->dtype);
}

static uint64_t hash_constant(const plan_value *pv)
{
    size_t n = host_size(pv);
    const unsigned char *d = pv->host;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)pv->dtype << 56) ^ ((uint64_t)pv->storage << 48) ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, d + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    for (; i < n; i++) h = (h ^ d[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static uint64_t hash_pointer(const void *host)
{
    uint64_t h = (uint64_t)(uintptr_t)host * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 31) ^ 0x5bd1e995ull;
}

static bool same_kind(const plan_value *a, const plan_value *b)
{
    return a->dtype == b->dtype && a->storage == b->storage && a->bytes == b->bytes && host_size(a) == host_size(b);
}

/* An open-addressing table of cap slots (a power of two), every slot -1, and its hashes. */
static vki_status table_alloc(size_t cap, int **table, uint64_t **hashes)
{
    *table = malloc(cap * sizeof **table);
    *hashes = malloc(cap * sizeof **hashes);
    if (!*table || !*hashes) {
        free(*table);
        free(*hashes);
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    for (size_t i = 0; i < cap; i++) (*table)[i] = -1;
    return VKI_OK;
}

/* Constants of the plan with the same dtype, storage and bytes share one copy on the device
 * (p->same_bytes): an exporter that repeats a folded subgraph per step of an unrolled loop
 * (a VLA's denoising steps each transposing the expert's weights), the same weight repacked
 * for each of its products, or an Identity of an initializer (TorchScript's exporter writes one
 * for each repeated layer) make equal constants that would otherwise each take device memory.
 * A constant whose host data is a shared initializer's is placed on that initializer's bytes
 * (record.c); the others are compared by content among themselves. State that kernels update
 * (op_temp_state) keeps its own. Hash tables keep this linear in the constants' bytes. */
static vki_status share_equal_constants(plan *p)
{
    int n = 0, n_shared = 0;
    for (int v = 0; v < p->n_values; v++) {
        p->same_bytes[v] = -1;
        const plan_value *pv = &p->values[v];
        if (!pv->on_gpu || pv->alias_of >= 0 || pv->kernel_state) continue;
        if (pv->buffer == PLAN_BUF_WEIGHTS) n++;
        if (pv->buffer == PLAN_BUF_SHARED) n_shared++;
    }
    if (n == 0 || n + n_shared < 2) return VKI_OK;
    size_t cap = 4;
    while (cap < (size_t)(n + n_shared) * 2) cap *= 2;
    int *table;
    uint64_t *hashes;
    VKI_TRY(table_alloc(cap, &table, &hashes));
    for (int v = 0; v < p->n_values; v++) { /* shared initializers, by where their data lies */
        const plan_value *pv = &p->values[v];
        if (!pv->on_gpu || pv->alias_of >= 0 || pv->buffer != PLAN_BUF_SHARED) continue;
        uint64_t h = hash_pointer(pv->host);
        size_t at = (size_t)h & (cap - 1);
        while (table[at] >= 0) at = (at + 1) & (cap - 1);
        table[at] = v;
        hashes[at] = h;
    }
    for (int v = 0; v < p->n_values; v++) {
        const plan_value *pv = &p->values[v];
        if (!pv->on_gpu || pv->alias_of >= 0 || pv->buffer != PLAN_BUF_WEIGHTS || pv->kernel_state) continue;
        uint64_t h = hash_pointer(pv->host);
        size_t at = (size_t)h & (cap - 1);
        for (; table[at] >= 0; at = (at + 1) & (cap - 1)) {
            const plan_value *o = &p->values[table[at]];
            if (hashes[at] == h && o->buffer == PLAN_BUF_SHARED && o->host == pv->host && same_kind(o, pv)) break;
        }
        if (table[at] >= 0) {
            p->same_bytes[v] = table[at];
            continue;
        }
        h = hash_constant(pv);
        at = (size_t)h & (cap - 1);
        for (; table[at] >= 0; at = (at + 1) & (cap - 1)) {
            const plan_value *o = &p->values[table[at]];
            if (hashes[at] == h && o->buffer == PLAN_BUF_WEIGHTS && same_kind(o, pv) && !memcmp(o->host, pv->host, host_size(pv)))
                break;
        }
        if (table[at] >= 0) {
            p->same_bytes[v] = table[at];
        } else {
            table[at] = v;
            hashes[at] = h;
        }
    }
    free(table);
    free(hashes);
    return VKI_OK;
}

/* The values a node made: its outputs, then the values from first_value on (its temporaries);
 * k from 0 to made_count - 1, -1 for an absent output. */
static int made_count(const plan *p, const ir_node *node, int first_value)
{
    return node->n_outputs + p->n_values - first_value;
}

static int made_value(const ir_node *node, int first_value, int k)
{
    return k < node->n_outputs ? node->outputs[k] : first_value + k - node->n_outputs;
}

/* Points every value this node made whose host data lies in [from, from + bytes) at `to`. */
static void redirect_host(plan *p, const ir_node *node, int first_value, const uint8_t *from, size_t bytes,
                          const uint8_t *to)
{
    for (int k = 0; k < made_count(p, node, first_value); k++) {
        int v = made_value(node, first_value, k);
        if (v < 0) continue;
        plan_value *pv = &p->values[v];
        const uint8_t *h = pv->host;
        if (h && h >= from && h < from + bytes) pv->host = to + (h - from);
    }
}

static vki_status grow_host_table(plan *p)
{
    size_t cap = p->host_cap ? 2 * p->host_cap : 64;
    int *table;
    uint64_t *hashes;
    VKI_TRY(table_alloc(cap, &table, &hashes));
    for (size_t i = 0; i < p->host_cap; i++) {
        if (p->host_table[i] < 0) continue;
        size_t at = (size_t)p->host_hashes[i] & (cap - 1);
        while (table[at] >= 0) at = (at + 1) & (cap - 1);
        table[at] = p->host_table[i];
        hashes[at] = p->host_hashes[i];
    }
    free(p->host_table);
    free(p->host_hashes);
    p->host_table = table;
    p->host_hashes = hashes;
    p->host_cap = cap;
    return VKI_OK;
}

/* A CPU device's MatMul packs its constant B on the host per node, and an exporter that unrolls
 * a loop (a VLA's 32 denoising steps) repeats each weight's products and folded Transposes per
 * step: equal host copies that share_equal_constants merges on the device only at the end of
 * planning, by which time evo1's 30 action-head weights had taken 15 GB of host memory (32
 * fp32 copies each; 2.5 GB once). Merged here as each node makes them, the host keeps one. */
vki_status plan_share_host_constants(plan *p, const ir_node *node, int first_value, const void *mark)
{
    for (int k = 0; k < made_count(p, node, first_value); k++) {
        int v = made_value(node, first_value, k);
        if (v < 0) continue;
        plan_value *pv = &p->values[v];
        size_t n = pv->host && !pv->kernel_state && pv->alias_of < 0 ? host_size(pv) : 0;
        if (n <= 65536) continue; /* smaller ones are not worth a hash, nor freed alone */
        if (2 * (p->host_count + 1) > p->host_cap) VKI_TRY(grow_host_table(p));
        uint64_t h = hash_constant(pv);
        size_t at = (size_t)h & (p->host_cap - 1);
        for (; p->host_table[at] >= 0; at = (at + 1) & (p->host_cap - 1)) {
            const plan_value *o = &p->values[p->host_table[at]];
            if (p->host_hashes[at] == h && o->dtype == pv->dtype && host_size(o) == n &&
                (o->host == pv->host || !memcmp(o->host, pv->host, n)))
                break;
        }
        if (p->host_table[at] < 0) {
            p->host_table[at] = v;
            p->host_hashes[at] = h;
            p->host_count++;
            continue;
        }
        const plan_value *o = &p->values[p->host_table[at]];
        uint8_t *mine = (uint8_t *)pv->host;
        if (o->host != mine && arena_release(&p->arena, mark, mine, n))
            redirect_host(p, node, first_value, mine, n, o->host);
    }
    return VKI_OK;
}

uint64_t plan_value_bytes(const plan_value *v)
{
    uint64_t n = ((uint64_t)shape_numel(v->dims, v->rank) * storage_size(v->storage) + 3) / 4 * 4;
    return n < 16 ? 16 : n;
}

static void touch(plan *p, int v, int time)
{
    plan_value *pv = &p->values[plan_root(p, v)];
    pv->on_gpu = true;
    if (pv->first_use < 0 || time < pv->first_use) pv->first_use = time;
    if (time > pv->last_use) pv->last_use = time;
}

typedef struct placed {
    uint64_t offset, size;
    int last_use;
} placed;

static int by_first_use(const void *a, const void *b, void *ctx)
{
    const plan *p = ctx;
    const plan_value *x = &p->values[*(const int *)a], *y = &p->values[*(const int *)b];
    if (x->first_use != y->first_use) return x->first_use < y->first_use ? -1 : 1;
    return *(const int *)a - *(const int *)b;
}

vki_status plan_memory(plan *p)
{
    const ir_graph *g = p->graph;
    int end = p->n_dispatches + 1;
    for (int k = 0; k < p->n_io_in; k++) touch(p, p->io_in[k], 0);
    for (int d = 0; d < p->n_dispatches; d++)
        for (int b = 0; b < p->dispatches[d].n_bind; b++) touch(p, p->dispatches[d].bind[b], d + 1);
    for (int k = 0; k < p->n_io_out && !p->probe; k++) /* outputs known at plan time are returned from the host */
        if (!p->values[plan_root(p, p->io_out[k])].host) touch(p, p->io_out[k], end);

    /* constants: packed one after another */
    int *order = malloc(((size_t)p->n_values + 1) * sizeof *order);
    placed *active = malloc(((size_t)p->n_values + 1) * sizeof *active);
    if (!order || !active) {
        free(order);
        free(active);
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    int n_order = 0;
    p->unshared_bytes = 0;
    for (int v = 0; v < p->n_values; v++) {
        plan_value *pv = &p->values[v];
        if (!pv->on_gpu || pv->alias_of >= 0) continue;
        pv->bytes = plan_value_bytes(pv);
        const ir_value *iv = v < g->n_values ? &g->values[v] : NULL;
        if (pv->host && iv && iv->kind == VALUE_INITIALIZER && pv->host == iv->init.data) {
            pv->buffer = PLAN_BUF_SHARED; /* placed by the session's weight cache (record.c) */
        } else if (pv->host) {
            pv->buffer = PLAN_BUF_WEIGHTS;
        } else {
            pv->buffer = PLAN_BUF_ARENA;
            order[n_order++] = v;
            p->unshared_bytes += align_up(pv->bytes, PLAN_ALIGN);
        }
    }
    p->same_bytes = malloc(((size_t)p->n_values + 1) * sizeof *p->same_bytes);
    vki_status st = p->same_bytes ? share_equal_constants(p) : vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (st != VKI_OK) {
        free(order);
        free(active);
        return st;
    }
    uint64_t used = 0, limit = weight_block_limit(p->vk);
    int block = 0;
    bool any_constant = false;
    for (int v = 0; v < p->n_values; v++) {
        plan_value *pv = &p->values[v];
        if (!pv->on_gpu || pv->alias_of >= 0 || pv->buffer != PLAN_BUF_WEIGHTS || p->same_bytes[v] >= 0) continue;
        pv->offset = weight_block_place(limit, pv->bytes, &block, &used);
        pv->block = block;
        any_constant = true;
    }
    p->n_weight_blocks = any_constant ? block + 1 : 0;
    p->weight_blocks = calloc((size_t)p->n_weight_blocks + 1, sizeof *p->weight_blocks);
    p->weight_block_bytes = calloc((size_t)p->n_weight_blocks + 1, sizeof *p->weight_block_bytes);
    if (!p->weight_blocks || !p->weight_block_bytes) {
        free(order);
        free(active);
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    for (int v = 0; v < p->n_values; v++) {
        const plan_value *pv = &p->values[v];
        if (pv->buffer == PLAN_BUF_WEIGHTS && pv->on_gpu && pv->alias_of < 0 && p->same_bytes[v] < 0) {
            uint64_t end = align_up(pv->offset + pv->bytes, PLAN_ALIGN);
            if (end > p->weight_block_bytes[pv->block]) p->weight_block_bytes[pv->block] = end;
        }
    }
    p->weight_bytes = 0;
    for (int b = 0; b < p->n_weight_blocks; b++) p->weight_bytes += p->weight_block_bytes[b];
    qsort_r(order, (size_t)n_order, sizeof *order, by_first_use, p);

    /* first-fit by liveness; `active` is kept sorted by offset */
    int n_active = 0;
    uint64_t top = 0;
    for (int k = 0; k < n_order; k++) {
        plan_value *pv = &p->values[order[k]];
        int w = 0;
        for (int a = 0; a < n_active; a++)
            if (active[a].last_use >= pv->first_use) active[w++] = active[a];
        n_active = w;
        uint64_t size = align_up(pv->bytes, PLAN_ALIGN), at = 0;
        int pos = 0;
        for (; pos < n_active; pos++) {
            if (active[pos].offset >= at + size) break;
            at = active[pos].offset + active[pos].size;
        }
        memmove(&active[pos + 1], &active[pos], (size_t)(n_active - pos) * sizeof *active);
        active[pos] = (placed){at, size, pv->last_use};
        n_active++;
        pv->offset = at;
        if (at + size > top) top = at + size;
    }
    p->arena_bytes = top;
    free(order);
    free(active);

    /* every binding must fit the device's per-binding range */
    uint64_t range = p->vk->caps.max_storage_buffer_range;
    for (int d = 0; d < p->n_dispatches; d++)
        for (int b = 0; b < p->dispatches[d].n_bind; b++) {
            const plan_dispatch *pd = &p->dispatches[d];
            plan_value *pv = &p->values[plan_root(p, pd->bind[b])];
            uint64_t size = pd->win_size[b] ? pd->win_size[b] : pv->bytes;
            if (pd->win_offset[b] + size > pv->bytes) {
                const ir_node *node = &g->nodes[pd->node];
                return vki_fail(VKI_ERROR_UNSUPPORTED, "node '%s' (%s): internal: binding %d window passes the end of its tensor",
                                node->name, node->op_type, b);
            }
            if (size > range) {
                const ir_node *node = &g->nodes[p->dispatches[d].node];
                char shape[256];
                return vki_fail(VKI_ERROR_UNSUPPORTED,
                                "node '%s' (%s): a %s of shape %s needs %llu bytes in one binding, more than this "
                                "device's maxStorageBufferRange (%llu); %s",
                                node->name, node->op_type, pv->host ? "constant (weights)" : "tensor",
                                shape_str(pv->dims, pv->rank, shape, sizeof shape), (unsigned long long)size,
                                (unsigned long long)range,
                                pv->host ? "constants are bound whole" : "this op does not split its work into windows yet");
            }
        }
    return VKI_OK;
}
