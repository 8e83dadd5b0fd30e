/* VKINFER_LIMITS=android-baseline-2022: the context reports the profile's limits and features,
 * and a kernel past them (a workgroup over 128 invocations, shared memory over 16 KiB) is
 * refused before it reaches the driver, naming the kernel and the limit. An unknown profile
 * is refused when the context is made. */
#include "vkinfer.h"
#include "runtime/runtime.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

extern vk_shader vk_shader_table[];
extern const unsigned vk_shader_table_count;

/* Whether SPIR-V module s declares a sampled image (OpTypeSampledImage) of a Dim Buffer image:
 * SPIR-V 1.6 forbids it and Mesa 25's lavapipe warns of it through the debug messenger (which
 * fails every validated run), so the kernels read texel buffers without a sampler
 * (textureBuffer, GL_EXT_samplerless_texture_functions). */
static bool sampled_buffer_image(const vk_shader *s)
{
    const uint32_t *w = s->code;
    size_t n = s->size / 4;
    for (size_t i = 5; i < n;) {
        uint32_t op = w[i] & 0xffff, len = w[i] >> 16;
        if (len == 0 || i + len > n) break;
        if (op == 27 && len >= 3) /* OpTypeSampledImage: find its image type */
            for (size_t j = 5; j < n;) {
                uint32_t op2 = w[j] & 0xffff, len2 = w[j] >> 16;
                if (len2 == 0 || j + len2 > n) break;
                if (op2 == 25 && len2 >= 4 && w[j + 1] == w[i + 2] && w[j + 3] == 5) return true;
                j += len2;
            }
        i += len;
    }
    return false;
}

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

    /* no kernel reads a texel buffer through a sampler; the reflection still finds the texel
     * buffers declared without one (matmul_cpu's A and B: RGBA32F; pool2d_cpu's X: words) */
    int sampled = 0;
    for (unsigned i = 0; i < vk_shader_table_count; i++)
        if (sampled_buffer_image(&vk_shader_table[i])) {
            printf("  %s reads a texel buffer through a sampler (OpTypeSampledImage of Dim Buffer)\n", vk_shader_table[i].name);
            sampled++;
        }
    CHECK(vk_shader_table_count > 100 && sampled == 0, "%d of %u kernels declare a sampled buffer image", sampled,
          vk_shader_table_count);
    const vk_shader *mm = vk_shader_find("matmul_cpu"), *pool = vk_shader_find("pool2d_cpu");
    CHECK(mm && mm->texel_bindings == 3u && mm->texel_r32_bindings == 0u, "matmul_cpu's texel bindings %#x (r32 %#x)",
          mm ? mm->texel_bindings : 0u, mm ? mm->texel_r32_bindings : 0u);
    CHECK(pool && pool->texel_bindings == 1u && pool->texel_r32_bindings == 1u, "pool2d_cpu's texel bindings %#x (r32 %#x)",
          pool ? pool->texel_bindings : 0u, pool ? pool->texel_r32_bindings : 0u);

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
