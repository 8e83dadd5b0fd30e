/* Buffers: device-local for weights and intermediates, host-visible for staging. */
#include "vk.h"

#include <sched.h>
#include <string.h>

static int find_memory_type(vk_context *vk, uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid)
{
    for (uint32_t i = 0; i < vk->mem_props.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = vk->mem_props.memoryTypes[i].propertyFlags;
        if ((bits & (1u << i)) && (f & want) == want && !(f & avoid)) return (int)i;
    }
    return -1;
}

vki_status vk_buffer_create(vk_context *vk, VkDeviceSize size, enum vk_buffer_use use, vk_buffer *out)
{
    memset(out, 0, sizeof *out);
    if (size == 0) size = 16;
    if (vk->caps.max_allocation_bytes && size > vk->caps.max_allocation_bytes)
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "a buffer of %llu bytes exceeds the device's largest allocation (%llu bytes)",
                        (unsigned long long)size, (unsigned long long)vk->caps.max_allocation_bytes);
    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (use == VK_BUFFER_DEVICE) bci.usage |= VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkResult r = vk->f.vkCreateBuffer(vk->device, &bci, NULL, &out->buffer);
    if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_VULKAN, "vkCreateBuffer(%llu bytes) failed (%s)", (unsigned long long)size, vk_result_str(r));
    VkMemoryRequirements req;
    vk->f.vkGetBufferMemoryRequirements(vk->device, out->buffer, &req);
    int type;
    if (use == VK_BUFFER_DEVICE) {
        type = find_memory_type(vk, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    } else {
        VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        if (use == VK_BUFFER_DOWNLOAD) {
            type = find_memory_type(vk, req.memoryTypeBits, want | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0);
            if (type < 0) type = find_memory_type(vk, req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0);
        } else {
            type = find_memory_type(vk, req.memoryTypeBits, want, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        }
        if (type < 0) type = find_memory_type(vk, req.memoryTypeBits, want, 0);
        if (type < 0) type = find_memory_type(vk, req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, 0);
    }
    if (type < 0) type = find_memory_type(vk, req.memoryTypeBits, 0, 0);
    /* the cap is checked and the bytes reserved in one step, so that threads sharing the
     * context cannot pass it together */
    _Atomic uint64_t *counter = use == VK_BUFFER_DEVICE ? &vk->allocated_bytes : &vk->staging_bytes;
    uint64_t held = atomic_load(counter);
    do {
        if (use == VK_BUFFER_DEVICE && vk->max_memory && held + req.size > vk->max_memory) {
            vk->f.vkDestroyBuffer(vk->device, out->buffer, NULL);
            out->buffer = VK_NULL_HANDLE;
            return vki_fail(VKI_ERROR_OUT_OF_MEMORY,
                            "%llu bytes of device memory do not fit under VKINFER_MAX_MEMORY=%llu (%llu bytes held)",
                            (unsigned long long)req.size, (unsigned long long)vk->max_memory, (unsigned long long)held);
        }
    } while (!atomic_compare_exchange_weak(counter, &held, held + req.size));
    out->use = use;
    out->counted = req.size;
    VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = (uint32_t)type;
    r = vk->f.vkAllocateMemory(vk->device, &mai, NULL, &out->memory);
    if (r != VK_SUCCESS) {
        vk->f.vkDestroyBuffer(vk->device, out->buffer, NULL);
        out->buffer = VK_NULL_HANDLE;
        atomic_fetch_sub(counter, req.size);
        out->counted = 0;
        return vki_fail(r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? VKI_ERROR_OUT_OF_MEMORY : VKI_ERROR_VULKAN,
                        "cannot allocate %llu bytes of %s memory (%s)", (unsigned long long)req.size,
                        use == VK_BUFFER_DEVICE ? "device" : "host-visible", vk_result_str(r));
    }
    vk->f.vkBindBufferMemory(vk->device, out->buffer, out->memory, 0);
    out->size = size;
    if (use != VK_BUFFER_DEVICE) {
        out->coherent = vk->mem_props.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        r = vk->f.vkMapMemory(vk->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped);
        if (r != VK_SUCCESS) {
            vk_buffer_destroy(vk, out);
            return vki_fail(VKI_ERROR_VULKAN, "vkMapMemory failed (%s)", vk_result_str(r));
        }
    }
    return VKI_OK;
}

void vk_buffer_destroy(vk_context *vk, vk_buffer *b)
{
    if (b->buffer) vk->f.vkDestroyBuffer(vk->device, b->buffer, NULL);
    if (b->memory) vk->f.vkFreeMemory(vk->device, b->memory, NULL);
    if (b->counted) atomic_fetch_sub(b->use == VK_BUFFER_DEVICE ? &vk->allocated_bytes : &vk->staging_bytes, b->counted);
    memset(b, 0, sizeof *b);
}

void vk_buffer_flush(vk_context *vk, vk_buffer *b)
{
    if (b->coherent || !b->mapped) return;
    VkMappedMemoryRange range = {VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, NULL, b->memory, 0, VK_WHOLE_SIZE};
    vk->f.vkFlushMappedMemoryRanges(vk->device, 1, &range);
}

void vk_buffer_invalidate(vk_context *vk, vk_buffer *b)
{
    if (b->coherent || !b->mapped) return;
    VkMappedMemoryRange range = {VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, NULL, b->memory, 0, VK_WHOLE_SIZE};
    vk->f.vkInvalidateMappedMemoryRanges(vk->device, 1, &range);
}

vki_status vk_submit_and_wait(vk_context *vk, const VkCommandBuffer *cmds, uint32_t n, VkFence fence)
{
    VKI_TRY(vk_check_lost(vk));
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = n;
    si.pCommandBuffers = cmds;
    VkResult r = vk->f.vkResetFences(vk->device, 1, &fence);
    if (r == VK_SUCCESS) {
        pthread_mutex_lock(&vk->queue_lock);
        /* checked again under the lock: a thread that lost the device before us stops us here,
         * so that nothing is submitted after a loss */
        if (atomic_load(&vk->lost)) r = VK_ERROR_DEVICE_LOST;
        else if (++vk->submit_count == vk->fault_lost_at) r = VK_ERROR_DEVICE_LOST; /* injected */
        else r = vk->f.vkQueueSubmit(vk->queue, 1, &si, fence);
        pthread_mutex_unlock(&vk->queue_lock);
    }
    if (r == VK_SUCCESS && vk->spin_us) { /* poll first (vk_context.spin_us), then block */
        /* on a CPU device each poll yields: the thread that runs the work (lavapipe's queue
         * thread, woken by the submit) may be waiting for this core, and a poll that kept it
         * would hold the work back until the spin ends (vk_context.spin_yield) */
        double until = now_ms() + vk->spin_us / 1e3;
        do {
            r = vk->f.vkGetFenceStatus(vk->device, fence);
            if (r != VK_NOT_READY) break;
            if (vk->spin_yield) sched_yield();
        } while (now_ms() < until);
        if (r == VK_NOT_READY) r = VK_SUCCESS;
    }
    if (r == VK_SUCCESS) r = vk->f.vkWaitForFences(vk->device, 1, &fence, VK_TRUE, UINT64_MAX);
    if (r != VK_SUCCESS) return vk_fail_result(vk, r, "GPU submission");
    return VKI_OK;
}

void vk_transfer_barrier(vk_context *vk, VkCommandBuffer cmd)
{
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                          VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    vk->f.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                               VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

vki_status vk_copy_and_wait(vk_context *vk, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst, VkDeviceSize dst_offset,
                            VkDeviceSize size)
{
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, vk->command_pool,
                                      VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    VkCommandBuffer cmd;
    VkFence fence = VK_NULL_HANDLE;
    VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    pthread_mutex_lock(&vk->plan_lock); /* the context's command pool */
    VkResult r = vk->f.vkAllocateCommandBuffers(vk->device, &ai, &cmd);
    if (r != VK_SUCCESS) {
        pthread_mutex_unlock(&vk->plan_lock);
        return vki_fail(VKI_ERROR_VULKAN, "vkAllocateCommandBuffers failed (%s)", vk_result_str(r));
    }
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL};
    vk->f.vkBeginCommandBuffer(cmd, &bi);
    vk_transfer_barrier(vk, cmd); /* after whatever wrote src or read dst before */
    VkBufferCopy copy = {src_offset, dst_offset, size};
    if (size) vk->f.vkCmdCopyBuffer(cmd, src, dst, 1, &copy);
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT};
    vk->f.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    r = vk->f.vkEndCommandBuffer(cmd);
    pthread_mutex_unlock(&vk->plan_lock);
    vki_status st = VKI_OK;
    if (r == VK_SUCCESS) r = vk->f.vkCreateFence(vk->device, &fi, NULL, &fence);
    if (r != VK_SUCCESS) st = vki_fail(VKI_ERROR_VULKAN, "recording a copy failed (%s)", vk_result_str(r));
    if (st == VKI_OK) st = vk_submit_and_wait(vk, &cmd, 1, fence);
    if (fence) vk->f.vkDestroyFence(vk->device, fence, NULL);
    pthread_mutex_lock(&vk->plan_lock);
    vk->f.vkFreeCommandBuffers(vk->device, vk->command_pool, 1, &cmd);
    pthread_mutex_unlock(&vk->plan_lock);
    return st;
}
