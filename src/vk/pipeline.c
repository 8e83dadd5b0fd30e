/* Compute pipelines, deduplicated by (shader, specialization constants), and the on-disk
 * pipeline cache keyed by device, driver and pipeline-cache UUID. */
#include "vk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0755);
            *p = '/';
        }
    mkdir(path, 0755);
}

vki_status vk_pipeline_cache_open(vk_context *vk)
{
    char dir[900] = "";
    const vki_options *o = &vk->opts;
    snprintf(dir, sizeof dir, "%s", o->cache_dir.set ? o->cache_dir.s : o->home_cache_dir);
    void *data = NULL;
    size_t size = 0;
    vk->cache_path[0] = 0;
    if (dir[0]) {
        mkdirs(dir);
        const vk_caps *c = &vk->caps;
        char uuid[2 * VK_UUID_SIZE + 1];
        for (unsigned i = 0; i < VK_UUID_SIZE; i++) snprintf(uuid + 2 * i, 3, "%02x", c->pipeline_cache_uuid[i]);
        snprintf(vk->cache_path, sizeof vk->cache_path, "%s/pipelines-%04x-%04x-%08x-%s.bin", dir, c->props.vendorID,
                 c->props.deviceID, c->props.driverVersion, uuid);
        FILE *f = fopen(vk->cache_path, "rb");
        if (f) {
            fseek(f, 0, SEEK_END);
            long n = ftell(f);
            fseek(f, 0, SEEK_SET);
            /* the header (VkPipelineCacheHeaderVersionOne) must name this device, else ignore */
            if (n >= 32 && n < (1L << 30) && (data = malloc((size_t)n)) && fread(data, 1, (size_t)n, f) == (size_t)n) {
                const uint8_t *h = data;
                uint32_t vendor, device;
                memcpy(&vendor, h + 8, 4);
                memcpy(&device, h + 12, 4);
                if (vendor == c->props.vendorID && device == c->props.deviceID && !memcmp(h + 16, c->pipeline_cache_uuid, VK_UUID_SIZE))
                    size = (size_t)n;
            }
            fclose(f);
        }
    }
    VkPipelineCacheCreateInfo ci = {VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    ci.initialDataSize = size;
    ci.pInitialData = size ? data : NULL;
    VkResult r = vk->f.vkCreatePipelineCache(vk->device, &ci, NULL, &vk->pipeline_cache);
    if (r != VK_SUCCESS && size) { /* a corrupt cache is ignored */
        ci.initialDataSize = 0;
        ci.pInitialData = NULL;
        r = vk->f.vkCreatePipelineCache(vk->device, &ci, NULL, &vk->pipeline_cache);
    }
    free(data);
    if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_VULKAN, "vkCreatePipelineCache failed (%s)", vk_result_str(r));
    return VKI_OK;
}

void vk_pipeline_cache_save(vk_context *vk)
{
    if (!vk->cache_path[0] || !vk->pipeline_cache) return;
    size_t size = 0;
    if (vk->f.vkGetPipelineCacheData(vk->device, vk->pipeline_cache, &size, NULL) != VK_SUCCESS || !size) return;
    void *data = malloc(size);
    if (!data) return;
    if (vk->f.vkGetPipelineCacheData(vk->device, vk->pipeline_cache, &size, data) == VK_SUCCESS) {
        char tmp[1100];
        snprintf(tmp, sizeof tmp, "%s.%d.tmp", vk->cache_path, (int)getpid());
        FILE *f = fopen(tmp, "wb");
        if (f) {
            bool ok = fwrite(data, 1, size, f) == size;
            ok &= fclose(f) == 0;
            if (!ok || rename(tmp, vk->cache_path) != 0) unlink(tmp);
        }
    }
    free(data);
}

vki_status vk_pipeline_get(vk_context *vk, const vk_shader *shader, const uint32_t *spec, uint32_t n_spec, vk_pipeline **out)
{
    if (n_spec > VK_MAX_SPEC) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "too many specialization constants for %s", shader->name);
    for (vk_pipeline *p = vk->pipelines; p; p = p->next)
        if (p->shader == shader && p->n_spec == n_spec && !memcmp(p->spec, spec, n_spec * sizeof *spec)) {
            *out = p;
            return VKI_OK;
        }
    VKI_TRY(vk_shader_check_limits(vk, shader, spec, n_spec));
    vk_pipeline *p = calloc(1, sizeof *p);
    if (!p) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    p->shader = shader;
    p->n_spec = n_spec;
    memcpy(p->spec, spec, n_spec * sizeof *spec);
    VkDescriptorSetLayoutBinding b[16];
    for (uint32_t i = 0; i < shader->bindings; i++) {
        VkDescriptorType type = shader->texel_bindings >> i & 1 ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                                                : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        b[i] = (VkDescriptorSetLayoutBinding){i, type, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    }
    VkDescriptorSetLayoutCreateInfo dl = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dl.bindingCount = shader->bindings;
    dl.pBindings = b;
    VkPushConstantRange pc = {VK_SHADER_STAGE_COMPUTE_BIT, 0, VK_PUSH_BYTES};
    VkPipelineLayoutCreateInfo pl = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.setLayoutCount = 1;
    pl.pushConstantRangeCount = 1;
    pl.pPushConstantRanges = &pc;
    VkShaderModuleCreateInfo sm = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    sm.codeSize = shader->size;
    sm.pCode = shader->code;
    VkShaderModule module = VK_NULL_HANDLE;
    VkResult r = vk->f.vkCreateDescriptorSetLayout(vk->device, &dl, NULL, &p->set_layout);
    if (r == VK_SUCCESS) {
        pl.pSetLayouts = &p->set_layout;
        r = vk->f.vkCreatePipelineLayout(vk->device, &pl, NULL, &p->layout);
    }
    if (r == VK_SUCCESS) r = vk->f.vkCreateShaderModule(vk->device, &sm, NULL, &module);
    if (r == VK_SUCCESS) {
        VkSpecializationMapEntry entries[VK_MAX_SPEC];
        for (uint32_t i = 0; i < n_spec; i++) entries[i] = (VkSpecializationMapEntry){i, i * 4, 4};
        VkSpecializationInfo si = {n_spec, entries, n_spec * 4, p->spec};
        VkComputePipelineCreateInfo ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        ci.stage = (VkPipelineShaderStageCreateInfo){VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        ci.stage.module = module;
        ci.stage.pName = "main";
        ci.stage.pSpecializationInfo = n_spec ? &si : NULL;
        ci.layout = p->layout;
        r = vk->f.vkCreateComputePipelines(vk->device, vk->pipeline_cache, 1, &ci, NULL, &p->pipeline);
        vk->f.vkDestroyShaderModule(vk->device, module, NULL);
    }
    if (r != VK_SUCCESS) {
        if (p->layout) vk->f.vkDestroyPipelineLayout(vk->device, p->layout, NULL);
        if (p->set_layout) vk->f.vkDestroyDescriptorSetLayout(vk->device, p->set_layout, NULL);
        free(p);
        return vki_fail(VKI_ERROR_VULKAN, "cannot create the pipeline of shader %s (%s)", shader->name, vk_result_str(r));
    }
    p->next = vk->pipelines;
    vk->pipelines = p;
    *out = p;
    return VKI_OK;
}

void vk_pipelines_destroy(vk_context *vk)
{
    for (vk_pipeline *p = vk->pipelines; p;) {
        vk_pipeline *next = p->next;
        vk->f.vkDestroyPipeline(vk->device, p->pipeline, NULL);
        vk->f.vkDestroyPipelineLayout(vk->device, p->layout, NULL);
        vk->f.vkDestroyDescriptorSetLayout(vk->device, p->set_layout, NULL);
        free(p);
        p = next;
    }
    vk->pipelines = NULL;
    if (vk->pipeline_cache) vk->f.vkDestroyPipelineCache(vk->device, vk->pipeline_cache, NULL);
    vk->pipeline_cache = VK_NULL_HANDLE;
}
