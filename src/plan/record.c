/* Turns a placed plan into Vulkan objects: device buffers, the one-time weight upload,
 * descriptor sets, and the command buffer that every run re-submits. Barriers are placed
 * only where a dispatch touches bytes an earlier unbarriered dispatch wrote (or writes
 * bytes it read), so independent dispatches may overlap. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

static vk_buffer *buffer_of(plan *p, const plan_value *v)
{
    switch (v->buffer) {
    case PLAN_BUF_WEIGHTS: return &p->weight_blocks[v->block];
    case PLAN_BUF_SHARED: return &p->cache->blocks[v->block];
    default: return &p->intermediates;
    }
}

/* Converts the constants that `pick` selects for block `block` into a staging buffer at their
 * offsets and copies them into `dst` (created here, `bytes` long), waiting for the copy. */
static vki_status upload_constants(plan *p, vk_buffer *dst, uint64_t bytes, bool (*pick)(const plan *, int, int), int block)
{
    vk_context *vk = p->vk;
    VKI_TRY(vk_buffer_create(vk, bytes, VK_BUFFER_DEVICE, dst));
    if (!bytes) return VKI_OK;
    vk_buffer staging;
    VKI_TRY(vk_buffer_create(vk, bytes, VK_BUFFER_UPLOAD, &staging));
    for (int v = 0; v < p->n_values; v++) {
        plan_value *pv = &p->values[v];
        if (!pick(p, v, block)) continue;
        size_t count = (size_t)shape_numel(pv->dims, pv->rank), bad = 0;
        if (!host_to_storage(pv->dtype, pv->host, pv->storage, (uint8_t *)staging.mapped + pv->offset, count, &bad)) {
            vk_buffer_destroy(vk, &staging);
            const char *name = v < p->graph->n_values ? p->graph->values[v].name : "(scratch)";
            if (!dtype_gpu_supported(pv->dtype))
                return vki_fail(VKI_ERROR_UNSUPPORTED, "constant '%s' has dtype %s, which vkinfer does not hold on the GPU",
                                name, vki_dtype_name(pv->dtype));
            char why[256];
            dtype_range_message(pv->dtype, pv->host, bad, why, sizeof why);
            return vki_fail(VKI_ERROR_UNSUPPORTED, "constant '%s' %s", name, why);
        }
    }
    vk_buffer_flush(vk, &staging);
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, vk->command_pool,
                                      VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    VkCommandBuffer cmd;
    VkResult r = vk->f.vkAllocateCommandBuffers(vk->device, &ai, &cmd);
    if (r != VK_SUCCESS) {
        vk_buffer_destroy(vk, &staging);
        return vki_fail(VKI_ERROR_VULKAN, "vkAllocateCommandBuffers failed (%s)", vk_result_str(r));
    }
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL};
    vk->f.vkBeginCommandBuffer(cmd, &bi);
    VkBufferCopy copy = {0, 0, bytes};
    vk->f.vkCmdCopyBuffer(cmd, staging.buffer, dst->buffer, 1, &copy);
    vk->f.vkEndCommandBuffer(cmd);
    VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    vki_status st = VKI_OK;
    r = vk->f.vkCreateFence(vk->device, &fi, NULL, &fence);
    if (r != VK_SUCCESS) st = vki_fail(VKI_ERROR_VULKAN, "vkCreateFence failed (%s)", vk_result_str(r));
    if (st == VKI_OK) {
        st = vk_submit_and_wait(vk, &cmd, 1, fence);
        vk->f.vkDestroyFence(vk->device, fence, NULL);
    }
    vk->f.vkFreeCommandBuffers(vk->device, vk->command_pool, 1, &cmd);
    vk_buffer_destroy(vk, &staging);
    return st;
}

static bool plan_local_constant(const plan *p, int v, int block)
{
    return p->values[v].buffer == PLAN_BUF_WEIGHTS && p->values[v].alias_of < 0 && p->values[v].block == block &&
           p->same_bytes[v] < 0;
}

/* shared initializers that this plan uploads into the cache's new block `block` */
static bool new_shared_constant(const plan *p, int v, int block)
{
    return p->values[v].buffer == PLAN_BUF_SHARED && p->cache->block_of[v] == block;
}

/* Places the plan's initializers in the session's weight cache, uploading those it lacks as
 * new blocks (one, unless they pass weight_block_limit). */
static vki_status use_weight_cache(plan *p)
{
    weight_cache *wc = p->cache;
    uint64_t used = 0, limit = weight_block_limit(p->vk);
    int first = wc->n_blocks, block = first;
    bool any = false;
    for (int v = 0; v < p->n_values; v++) {
        plan_value *pv = &p->values[v];
        if (pv->buffer != PLAN_BUF_SHARED || wc->block_of[v] >= 0) continue;
        pv->offset = wc->offset_of[v] = weight_block_place(limit, pv->bytes, &block, &used); /* where upload_constants writes */
        wc->block_of[v] = block;
        any = true;
    }
    int n_new = any ? block - first + 1 : 0;
    if (n_new) {
        vk_buffer *blocks = realloc(wc->blocks, (size_t)(wc->n_blocks + n_new) * sizeof *blocks);
        if (!blocks) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        wc->blocks = blocks;
        memset(&wc->blocks[first], 0, (size_t)n_new * sizeof *blocks);
        uint64_t total = 0;
        vki_status st = VKI_OK;
        for (int b = first; b < first + n_new && st == VKI_OK; b++) {
            uint64_t bytes = 0;
            for (int v = 0; v < p->n_values; v++)
                if (new_shared_constant(p, v, b)) {
                    uint64_t end = (wc->offset_of[v] + p->values[v].bytes + 255) / 256 * 256;
                    if (end > bytes) bytes = end;
                }
            st = upload_constants(p, &wc->blocks[b], bytes, new_shared_constant, b);
            if (st == VKI_ERROR_OUT_OF_MEMORY)
                st = vki_fail_prefix(st, "the session's shared weights (block %d of %d, %llu bytes): ", b - first + 1, n_new,
                                     (unsigned long long)bytes);
            total += bytes;
        }
        if (st != VKI_OK) { /* forget the half-made blocks */
            for (int v = 0; v < p->n_values && v < p->graph->n_values; v++)
                if (wc->block_of[v] >= first) wc->block_of[v] = -1;
            for (int b = first; b < first + n_new; b++) vk_buffer_destroy(p->vk, &wc->blocks[b]);
            return st;
        }
        wc->n_blocks += n_new;
        wc->bytes += total;
    }
    for (int v = 0; v < p->n_values; v++)
        if (p->values[v].buffer == PLAN_BUF_SHARED) {
            p->values[v].block = wc->block_of[v];
            p->values[v].offset = wc->offset_of[v];
        }
    return VKI_OK;
}

vki_status weight_cache_init(weight_cache *wc, int n_values)
{
    memset(wc, 0, sizeof *wc);
    wc->block_of = malloc(((size_t)n_values + 1) * sizeof *wc->block_of);
    wc->offset_of = calloc((size_t)n_values + 1, sizeof *wc->offset_of);
    if (!wc->block_of || !wc->offset_of) {
        free(wc->block_of);
        free(wc->offset_of);
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    for (int v = 0; v <= n_values; v++) wc->block_of[v] = -1;
    return VKI_OK;
}

void weight_cache_free(vk_context *vk, weight_cache *wc)
{
    for (int b = 0; b < wc->n_blocks; b++) vk_buffer_destroy(vk, &wc->blocks[b]);
    free(wc->blocks);
    free(wc->block_of);
    free(wc->offset_of);
    memset(wc, 0, sizeof *wc);
}

static vki_status make_descriptor_sets(plan *p, VkDescriptorSet *sets)
{
    vk_context *vk = p->vk;
    uint32_t total = 0, texels = 0;
    for (int d = 0; d < p->n_dispatches; d++) {
        total += (uint32_t)p->dispatches[d].n_bind;
        texels += (uint32_t)__builtin_popcount(p->dispatches[d].pipeline->shader->texel_bindings);
    }
    VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, total - texels ? total - texels : 1},
                                     {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, texels}};
    VkDescriptorPoolCreateInfo pi = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pi.maxSets = (uint32_t)p->n_dispatches;
    pi.poolSizeCount = texels ? 2 : 1;
    pi.pPoolSizes = sizes;
    VkResult r = vk->f.vkCreateDescriptorPool(vk->device, &pi, NULL, &p->pool);
    if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_VULKAN, "vkCreateDescriptorPool(%d sets) failed (%s)", p->n_dispatches, vk_result_str(r));
    if (texels) {
        p->views = calloc(texels, sizeof *p->views);
        if (!p->views) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    VkDescriptorBufferInfo infos[8];
    VkBufferView views[8];
    VkWriteDescriptorSet writes[8];
    const VkPhysicalDeviceLimits *lim = &vk->caps.props.limits;
    for (int d = 0; d < p->n_dispatches; d++) {
        plan_dispatch *pd = &p->dispatches[d];
        uint32_t texel_mask = pd->pipeline->shader->texel_bindings;
        VkDescriptorSetAllocateInfo ai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, p->pool, 1, &pd->pipeline->set_layout};
        r = vk->f.vkAllocateDescriptorSets(vk->device, &ai, &sets[d]);
        if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_VULKAN, "vkAllocateDescriptorSets failed (%s)", vk_result_str(r));
        for (int b = 0; b < pd->n_bind; b++) {
            plan_value *pv = &p->values[plan_root(p, pd->bind[b])];
            infos[b] = (VkDescriptorBufferInfo){buffer_of(p, pv)->buffer, pv->offset + pd->win_offset[b],
                                                pd->win_size[b] ? pd->win_size[b] : pv->bytes};
            writes[b] = (VkWriteDescriptorSet){VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
            writes[b].dstSet = sets[d];
            writes[b].dstBinding = (uint32_t)b;
            writes[b].descriptorCount = 1;
            writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            writes[b].pBufferInfo = &infos[b];
            if (!(texel_mask >> b & 1)) continue;
            /* a texel buffer of RGBA32F texels, or of R32_UINT words for a utextureBuffer: whole
             * texels, at an offset the device accepts */
            bool r32 = pd->pipeline->shader->texel_r32_bindings >> b & 1;
            VkDeviceSize texel = r32 ? 4 : 16, range = infos[b].range / texel * texel;
            if (infos[b].offset % (lim->minTexelBufferOffsetAlignment ? lim->minTexelBufferOffsetAlignment : 1) ||
                range == 0 || range / texel > lim->maxTexelBufferElements)
                return vki_fail(VKI_ERROR_UNSUPPORTED, "internal: kernel %s binding %d: a texel buffer of %llu bytes at offset %llu "
                                "(the device takes offsets in multiples of %llu and up to %u texels)",
                                pd->pipeline->shader->name, b, (unsigned long long)infos[b].range,
                                (unsigned long long)infos[b].offset, (unsigned long long)lim->minTexelBufferOffsetAlignment,
                                lim->maxTexelBufferElements);
            VkBufferViewCreateInfo vi = {VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO, NULL, 0, infos[b].buffer,
                                         r32 ? VK_FORMAT_R32_UINT : VK_FORMAT_R32G32B32A32_SFLOAT, infos[b].offset, range};
            r = vk->f.vkCreateBufferView(vk->device, &vi, NULL, &views[b]);
            if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_VULKAN, "vkCreateBufferView failed (%s)", vk_result_str(r));
            p->views[p->n_views++] = views[b];
            writes[b].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
            writes[b].pBufferInfo = NULL;
            writes[b].pTexelBufferView = &views[b];
        }
        vk->f.vkUpdateDescriptorSets(vk->device, (uint32_t)pd->n_bind, writes, 0, NULL);
    }
    return VKI_OK;
}

typedef struct touched {
    int buffer;
    uint64_t begin, end;
    bool written;
} touched;

static void barrier(vk_context *vk, VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags src_access,
                    VkPipelineStageFlags dst, VkAccessFlags dst_access)
{
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, src_access, dst_access};
    vk->f.vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* Ends segment k of the dispatches (struct plan): read k's size is copied to the download
 * buffer. */
static VkResult end_segment(plan *p, VkCommandBuffer cmd, int k)
{
    vk_context *vk = p->vk;
    const plan_value *pv = &p->values[plan_root(p, p->read_value[k])];
    barrier(vk, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT);
    VkBufferCopy copy = {pv->offset, p->read_at + 16 * (uint64_t)k, 4};
    vk->f.vkCmdCopyBuffer(cmd, buffer_of(p, pv)->buffer, p->download.buffer, 1, &copy);
    barrier(vk, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    return vk->f.vkEndCommandBuffer(cmd);
}

static vki_status record_commands(plan *p, const VkDescriptorSet *sets)
{
    vk_context *vk = p->vk;
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, vk->command_pool,
                                      VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    VkResult r = vk->f.vkAllocateCommandBuffers(vk->device, &ai, &p->cmd);
    for (int k = 0; r == VK_SUCCESS && k < p->n_reads; k++) r = vk->f.vkAllocateCommandBuffers(vk->device, &ai, &p->segments[k]);
    if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_VULKAN, "vkAllocateCommandBuffers failed (%s)", vk_result_str(r));
    int segment = 0; /* the segment being recorded; n_reads: the last, p->cmd */
    VkCommandBuffer cmd = p->n_reads ? p->segments[0] : p->cmd;
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vk->f.vkBeginCommandBuffer(cmd, &bi);
    /* the inputs were copied in by cmd_in, submitted just before (plan_record_io) */
    barrier(vk, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    if (p->queries) {
        vk->f.vkCmdResetQueryPool(cmd, p->queries, 0, (uint32_t)p->n_dispatches + 1);
        vk->f.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->queries, 0);
    }
    touched *since = malloc(((size_t)p->n_dispatches * 8 + 1) * sizeof *since);
    if (!since) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    int n_since = 0;
    for (int d = 0; d <= p->n_dispatches; d++) {
        /* a read after dispatch d - 1: end the segment there and start the next, which sees
         * everything before it (the session waited for the read in between) */
        while (segment < p->n_reads && p->read_after[segment] == d) {
            r = end_segment(p, cmd, segment);
            if (r != VK_SUCCESS) {
                free(since);
                return vki_fail(VKI_ERROR_VULKAN, "vkEndCommandBuffer failed (%s)", vk_result_str(r));
            }
            cmd = ++segment < p->n_reads ? p->segments[segment] : p->cmd;
            vk->f.vkBeginCommandBuffer(cmd, &bi);
            barrier(vk, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                    VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
            n_since = 0;
        }
        if (d == p->n_dispatches) break;
        plan_dispatch *pd = &p->dispatches[d];
        bool hazard = false;
        for (int b = 0; b < pd->n_bind && !hazard; b++) {
            plan_value *pv = &p->values[plan_root(p, pd->bind[b])];
            uint64_t begin = pv->offset + pd->win_offset[b], end = begin + (pd->win_size[b] ? pd->win_size[b] : pv->bytes);
            for (int k = 0; k < n_since && !hazard; k++)
                hazard = since[k].buffer == pv->buffer && since[k].begin < end && begin < since[k].end &&
                         (since[k].written || pd->writes[b]);
        }
        if (hazard) {
            barrier(vk, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
            n_since = 0;
        }
        for (int b = 0; b < pd->n_bind; b++) {
            plan_value *pv = &p->values[plan_root(p, pd->bind[b])];
            uint64_t begin = pv->offset + pd->win_offset[b], end = begin + (pd->win_size[b] ? pd->win_size[b] : pv->bytes);
            since[n_since++] = (touched){pv->buffer, begin, end, pd->writes[b]};
        }
        vk->f.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pd->pipeline->pipeline);
        vk->f.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pd->pipeline->layout, 0, 1, &sets[d], 0, NULL);
        if (pd->push_bytes)
            vk->f.vkCmdPushConstants(cmd, pd->pipeline->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, pd->push_bytes, pd->push);
        vk->f.vkCmdDispatch(cmd, pd->groups[0], pd->groups[1], pd->groups[2]);
        /* bottom of pipe: written once everything before it finished */
        if (p->queries) vk->f.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->queries, (uint32_t)d + 1);
    }
    free(since);
    barrier(vk, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT);
    /* the outputs are copied out by cmd_out, submitted just after */
    r = vk->f.vkEndCommandBuffer(cmd);
    if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_VULKAN, "vkEndCommandBuffer failed (%s)", vk_result_str(r));
    VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    r = vk->f.vkCreateFence(vk->device, &fi, NULL, &p->fence);
    if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_VULKAN, "vkCreateFence failed (%s)", vk_result_str(r));
    return VKI_OK;
}

vki_status plan_record_io(plan *p, VkCommandPool pool, const VkBuffer *in_src, const VkBuffer *out_dst)
{
    vk_context *vk = p->vk;
    if (!p->cmd_in) {
        VkCommandBuffer cmds[2];
        VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 2};
        VkResult r = vk->f.vkAllocateCommandBuffers(vk->device, &ai, cmds);
        if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_VULKAN, "vkAllocateCommandBuffers failed (%s)", vk_result_str(r));
        p->io_pool = pool;
        p->cmd_in = cmds[0];
        p->cmd_out = cmds[1];
    }
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vk->f.vkResetCommandBuffer(p->cmd_in, 0);
    vk->f.vkBeginCommandBuffer(p->cmd_in, &bi);
    vk_transfer_barrier(vk, p->cmd_in); /* a device tensor written by an earlier run or copy */
    for (int i = 0; i < p->n_io_in; i++) {
        plan_value *pv = &p->values[p->io_in[i]];
        uint64_t bytes = (uint64_t)shape_numel(pv->dims, pv->rank) * storage_size(pv->storage);
        if (!bytes || pv->buffer != PLAN_BUF_ARENA) continue;
        VkBufferCopy copy = {in_src[i] ? 0 : p->input_offsets[i], pv->offset, bytes};
        vk->f.vkCmdCopyBuffer(p->cmd_in, in_src[i] ? in_src[i] : p->upload.buffer, p->intermediates.buffer, 1, &copy);
    }
    VkResult r = vk->f.vkEndCommandBuffer(p->cmd_in);
    vk->f.vkResetCommandBuffer(p->cmd_out, 0);
    if (r == VK_SUCCESS) r = vk->f.vkBeginCommandBuffer(p->cmd_out, &bi);
    for (int i = 0; r == VK_SUCCESS && i < p->n_io_out && !p->probe; i++) {
        /* the output's own elements: a view may start inside its root */
        const plan_value *ov = &p->values[p->io_out[i]];
        plan_value *pv = &p->values[plan_root(p, p->io_out[i])];
        uint64_t bytes = (uint64_t)shape_numel(ov->dims, ov->rank) * storage_size(pv->storage);
        if (!bytes || pv->host) continue;
        VkBufferCopy copy = {pv->offset + ov->view_offset, out_dst[i] ? 0 : p->output_offsets[i], bytes};
        vk->f.vkCmdCopyBuffer(p->cmd_out, buffer_of(p, pv)->buffer, out_dst[i] ? out_dst[i] : p->download.buffer, 1, &copy);
    }
    if (r == VK_SUCCESS) {
        barrier(vk, p->cmd_out, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                VK_ACCESS_HOST_READ_BIT);
        r = vk->f.vkEndCommandBuffer(p->cmd_out);
    }
    if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_VULKAN, "recording the input and output copies failed (%s)", vk_result_str(r));
    return VKI_OK;
}

vki_status plan_record(plan *p)
{
    vk_context *vk = p->vk;
    for (int b = 0; b < p->n_weight_blocks; b++) {
        vki_status st = upload_constants(p, &p->weight_blocks[b], p->weight_block_bytes[b], plan_local_constant, b);
        if (st == VKI_ERROR_OUT_OF_MEMORY)
            return vki_fail_prefix(st, "the weights (block %d of %d, %llu bytes; %llu in all): ", b + 1, p->n_weight_blocks,
                                   (unsigned long long)p->weight_block_bytes[b], (unsigned long long)p->weight_bytes);
        VKI_TRY(st);
    }
    VKI_TRY(use_weight_cache(p));
    for (int v = 0; v < p->n_values; v++) /* on the bytes of an equal constant (memory.c), now placed */
        if (p->same_bytes[v] >= 0) {
            const plan_value *o = &p->values[p->same_bytes[v]];
            p->values[v].buffer = o->buffer;
            p->values[v].block = o->block;
            p->values[v].offset = o->offset;
        }
    vki_status st = vk_buffer_create(vk, p->arena_bytes, VK_BUFFER_DEVICE, &p->intermediates);
    if (st != VKI_OK)
        return vki_fail_prefix(st, "the intermediates of a plan (%llu bytes): ", (unsigned long long)p->arena_bytes);
    p->input_offsets = calloc((size_t)p->n_io_in + 1, sizeof(uint64_t));
    p->output_offsets = calloc((size_t)p->n_io_out + 1, sizeof(uint64_t));
    if (!p->input_offsets || !p->output_offsets) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    uint64_t up = 0, down = 0;
    for (int i = 0; i < p->n_io_in; i++) {
        const plan_value *pv = &p->values[p->io_in[i]];
        p->input_offsets[i] = up;
        up += ((uint64_t)shape_numel(pv->dims, pv->rank) * storage_size(pv->storage) + 15) / 16 * 16;
    }
    for (int i = 0; i < p->n_io_out && !p->probe; i++) {
        const plan_value *ov = &p->values[p->io_out[i]], *pv = &p->values[plan_root(p, p->io_out[i])];
        p->output_offsets[i] = down;
        down += ((uint64_t)shape_numel(ov->dims, ov->rank) * storage_size(pv->storage) + 15) / 16 * 16;
    }
    p->read_at = down;
    down += 16 * (uint64_t)p->n_reads;
    VKI_TRY(vk_buffer_create(vk, up, VK_BUFFER_UPLOAD, &p->upload));
    VKI_TRY(vk_buffer_create(vk, down, VK_BUFFER_DOWNLOAD, &p->download));
    if (p->profiling) {
        if (!vk->caps.timestamp_bits)
            return vki_fail(VKI_ERROR_UNSUPPORTED, "profiling: this device's compute queue has no timestamps");
        VkQueryPoolCreateInfo qi = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qi.queryCount = (uint32_t)p->n_dispatches + 1; /* sized to the plan: no fixed limit */
        VkResult r = vk->f.vkCreateQueryPool(vk->device, &qi, NULL, &p->queries);
        if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_VULKAN, "vkCreateQueryPool(%u) failed (%s)", qi.queryCount, vk_result_str(r));
    }
    VkDescriptorSet *sets = calloc((size_t)p->n_dispatches + 1, sizeof *sets);
    if (!sets) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    st = p->n_dispatches ? make_descriptor_sets(p, sets) : VKI_OK;
    if (st == VKI_OK) st = record_commands(p, sets);
    free(sets);
    return st;
}
