/* VKINFER_LIMITS=android-baseline-2022: the context reports the profile's limits and features,
 * and a kernel past them (a workgroup over 128 invocations, shared memory over 16 KiB) is
 * refused before it reaches the driver, naming the kernel and the limit. An unknown profile
 * is refused when the context is made. */
#include "vkinfer.h"
#include "runtime/runtime.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

int main(void)
{
    vki_context *ctx = NULL;
    setenv("VKINFER_LIMITS", "android-baseline-2021", 1);
    vki_status st = vki_context_create(NULL, &ctx);
    CHECK(st == VKI_ERROR_INVALID_ARGUMENT && strstr(vki_last_error(), "VKINFER_LIMITS"), "unknown profile: %d '%s'", st,
          vki_last_error());
    if (ctx) vki_context_destroy(ctx);
    ctx = NULL;
    setenv("VKINFER_LIMITS", "android-baseline-2022", 1);
    if (vki_context_create(NULL, &ctx) != VKI_OK) {
        printf("FAIL: no context: %s\n0 passed, 1 failed\n", vki_last_error());
        return 1;
    }
    vki_device_info info;
    CHECK(vki_context_device_info(ctx, &info) == VKI_OK, "%s", vki_last_error());
    CHECK(info.max_storage_buffer_range <= (128u << 20) && info.max_workgroup_invocations <= 128 &&
              info.max_shared_memory_bytes <= 16384 && !info.fp16_arithmetic && !info.storage_16bit && !info.storage_8bit &&
              !info.cooperative_matrix && info.subgroup_size == 1,
          "device info: range %llu, invocations %u, shared %u, fp16 %d, s16 %d, s8 %d, coopmat %d, subgroup %u",
          (unsigned long long)info.max_storage_buffer_range, info.max_workgroup_invocations, info.max_shared_memory_bytes,
          info.fp16_arithmetic, info.storage_16bit, info.storage_8bit, info.cooperative_matrix, info.subgroup_size);
    vk_context *vk = &ctx->vk;
    const VkPhysicalDeviceLimits *l = &vk->caps.props.limits;
    CHECK(l->maxPerStageDescriptorStorageBuffers <= 4 && l->maxPushConstantsSize <= 128 && l->maxBoundDescriptorSets <= 4 &&
              vk->caps.min_storage_offset_alignment >= 256 && l->maxComputeWorkGroupSize[2] <= 64,
          "limits: %u buffers, %u push bytes, %u sets, alignment %u", l->maxPerStageDescriptorStorageBuffers,
          l->maxPushConstantsSize, l->maxBoundDescriptorSets, vk->caps.min_storage_offset_alignment);

    /* softmax's workgroup size is spec constant 0: 128 fits, 256 does not */
    const vk_shader *softmax = vk_shader_find("softmax");
    uint32_t spec[4] = {128, 0, 0, 0};
    CHECK(softmax && vk_shader_check_limits(vk, softmax, spec, 1) == VKI_OK, "softmax at 128: %s", vki_last_error());
    spec[0] = 256;
    st = softmax ? vk_shader_check_limits(vk, softmax, spec, 1) : VKI_OK;
    CHECK(st == VKI_ERROR_UNSUPPORTED && strstr(vki_last_error(), "softmax") &&
              strstr(vki_last_error(), "maxComputeWorkGroupInvocations") && strstr(vki_last_error(), "android-baseline-2022"),
          "softmax at 256: %d '%s'", st, vki_last_error());
    /* topk_bitonic holds 8 bytes per element of SIZE (spec constant 3) in shared memory */
    const vk_shader *topk = vk_shader_find("topk_bitonic");
    uint32_t topk_spec[4] = {128, 0, 1, 2048};
    CHECK(topk && vk_shader_check_limits(vk, topk, topk_spec, 4) == VKI_OK, "topk_bitonic of 2048: %s", vki_last_error());
    topk_spec[3] = 4096;
    st = topk ? vk_shader_check_limits(vk, topk, topk_spec, 4) : VKI_OK;
    CHECK(st == VKI_ERROR_UNSUPPORTED && strstr(vki_last_error(), "32768 bytes of shared memory") &&
              strstr(vki_last_error(), "maxComputeSharedMemorySize"),
          "topk_bitonic of 4096: %d '%s'", st, vki_last_error());
    /* through vk_pipeline_get too: nothing is created, the validation layer hears nothing */
    vk_pipeline *p = NULL;
    CHECK(vk_pipeline_get(vk, topk, topk_spec, 4, &p) == VKI_ERROR_UNSUPPORTED && !p, "pipeline of topk_bitonic 4096");
    CHECK(vk_check_validation(vk) == VKI_OK, "%s", vki_last_error());
    vki_context_destroy(ctx);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
