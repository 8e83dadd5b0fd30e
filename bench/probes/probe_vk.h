/* The Vulkan set-up bench's standalone probes (store_probe.c, load_probe.c) share: the loader
 * opened with dlopen, the first device and its queue, buffers, a compute pipeline from a SPIR-V
 * file with its descriptor set, and the median time of a dispatch. Header-only, so that each
 * probe is still built with one `cc` command; errors print a line and return 0 / NULL. */
#ifndef VKI_BENCH_PROBE_VK_H
#define VKI_BENCH_PROBE_VK_H
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#include "probe_file.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct probe {
    VkInstance inst;
    VkPhysicalDevice pd;
    VkDevice dev;
    VkQueue queue;
    VkCommandPool pool;
    VkPhysicalDeviceProperties props;
    PFN_vkGetPhysicalDeviceMemoryProperties vkGetPhysicalDeviceMemoryProperties;
#define PROBE_DEVICE_FNS(X) \
    X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) \
    X(vkBindBufferMemory) X(vkCreateBufferView) X(vkCreateShaderModule) X(vkCreateDescriptorSetLayout) \
    X(vkCreatePipelineLayout) X(vkCreateComputePipelines) X(vkCreateDescriptorPool) X(vkAllocateDescriptorSets) \
    X(vkUpdateDescriptorSets) X(vkCreateCommandPool) X(vkAllocateCommandBuffers) X(vkBeginCommandBuffer) \
    X(vkEndCommandBuffer) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch) \
    X(vkQueueSubmit) X(vkQueueWaitIdle)
#define PROBE_FIELD(name) PFN_##name name;
    PROBE_DEVICE_FNS(PROBE_FIELD)
} probe;

/* A compute pipeline and what binds it. */
typedef struct probe_pipe {
    VkPipeline pipe;
    VkPipelineLayout layout;
    VkDescriptorSet set;
} probe_pipe;

static double probe_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int probe_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The first device of the loader's default driver; 0 on failure. */
static int probe_open(probe *p, const char *app_name)
{
    void *lib = dlopen("libvulkan.so.1", RTLD_NOW);
    if (!lib) return fprintf(stderr, "no libvulkan.so.1\n"), 0;
    PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
    PFN_vkCreateInstance create_instance = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, app_name, 1, app_name, 1, VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app};
    if (create_instance(&ici, NULL, &p->inst) != VK_SUCCESS) return fprintf(stderr, "vkCreateInstance failed\n"), 0;
    PFN_vkEnumeratePhysicalDevices enumerate = (PFN_vkEnumeratePhysicalDevices)gipa(p->inst, "vkEnumeratePhysicalDevices");
    PFN_vkCreateDevice create_device = (PFN_vkCreateDevice)gipa(p->inst, "vkCreateDevice");
    PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)gipa(p->inst, "vkGetDeviceProcAddr");
    PFN_vkGetPhysicalDeviceProperties get_props = (PFN_vkGetPhysicalDeviceProperties)gipa(p->inst, "vkGetPhysicalDeviceProperties");
    p->vkGetPhysicalDeviceMemoryProperties =
        (PFN_vkGetPhysicalDeviceMemoryProperties)gipa(p->inst, "vkGetPhysicalDeviceMemoryProperties");
    uint32_t n = 8;
    VkPhysicalDevice pds[8];
    enumerate(p->inst, &n, pds);
    if (!n) return fprintf(stderr, "no device\n"), 0;
    p->pd = pds[0];
    get_props(p->pd, &p->props);
    float prio = 1;
    VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, 0, 1, &prio};
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &qci};
    if (create_device(p->pd, &dci, NULL, &p->dev) != VK_SUCCESS) return fprintf(stderr, "vkCreateDevice failed\n"), 0;
#define PROBE_LOAD(name) p->name = (PFN_##name)gdpa(p->dev, #name);
    PROBE_DEVICE_FNS(PROBE_LOAD)
    p->vkGetDeviceQueue(p->dev, 0, 0, &p->queue);
    VkCommandPoolCreateInfo cpci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL, 0, 0};
    return p->vkCreateCommandPool(p->dev, &cpci, NULL, &p->pool) == VK_SUCCESS;
}

/* A buffer of `bytes` with memory bound (the first memory type it allows); NULL on failure. */
static VkBuffer probe_buffer(probe *p, VkDeviceSize bytes, VkBufferUsageFlags usage)
{
    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, bytes, usage};
    VkBuffer buf;
    if (p->vkCreateBuffer(p->dev, &bci, NULL, &buf) != VK_SUCCESS) return fprintf(stderr, "vkCreateBuffer failed\n"), NULL;
    VkMemoryRequirements req;
    p->vkGetBufferMemoryRequirements(p->dev, buf, &req);
    VkPhysicalDeviceMemoryProperties mp;
    p->vkGetPhysicalDeviceMemoryProperties(p->pd, &mp);
    uint32_t type = 0;
    while (type < mp.memoryTypeCount && !(req.memoryTypeBits >> type & 1)) type++;
    VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, type};
    VkDeviceMemory mem;
    if (p->vkAllocateMemory(p->dev, &mai, NULL, &mem) != VK_SUCCESS) return fprintf(stderr, "out of memory\n"), NULL;
    p->vkBindBufferMemory(p->dev, buf, mem, 0);
    return buf;
}

/* A view of the whole buffer as texels of `format`; NULL on failure. */
static VkBufferView probe_view(probe *p, VkBuffer buf, VkFormat format)
{
    VkBufferViewCreateInfo vci = {VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO, NULL, 0, buf, format, 0, VK_WHOLE_SIZE};
    VkBufferView view;
    if (p->vkCreateBufferView(p->dev, &vci, NULL, &view) != VK_SUCCESS)
        return fprintf(stderr, "vkCreateBufferView failed\n"), NULL;
    return view;
}

/* The pipeline of the SPIR-V file at `path` (main, with specialization constant 0 = spec0
 * where has_spec), `n` bindings of `types` bound to `bufs` (whole) or, for texel buffers,
 * `views`; `push_bytes` of push constants. pipe.pipe is NULL on failure. */
static probe_pipe probe_pipeline(probe *p, const char *path, uint32_t n, const VkDescriptorType *types,
                                 const VkBuffer *bufs, const VkBufferView *views, int has_spec, uint32_t spec0,
                                 uint32_t push_bytes)
{
    probe_pipe r = {0};
    size_t size;
    uint32_t *code = read_file(path, &size);
    if (!code) return fprintf(stderr, "cannot read %s\n", path), r;
    VkShaderModuleCreateInfo smci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, size, code};
    VkShaderModule sm;
    p->vkCreateShaderModule(p->dev, &smci, NULL, &sm);
    free(code);
    VkDescriptorSetLayoutBinding lb[8];
    VkDescriptorPoolSize ps[8];
    for (uint32_t i = 0; i < n && i < 8; i++) {
        lb[i] = (VkDescriptorSetLayoutBinding){i, types[i], 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
        ps[i] = (VkDescriptorPoolSize){types[i], 1};
    }
    VkDescriptorSetLayoutCreateInfo dlci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL, 0, n, lb};
    VkDescriptorSetLayout dsl;
    p->vkCreateDescriptorSetLayout(p->dev, &dlci, NULL, &dsl);
    VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo plci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1, &dsl, push_bytes ? 1 : 0,
                                       &pcr};
    p->vkCreatePipelineLayout(p->dev, &plci, NULL, &r.layout);
    VkSpecializationMapEntry entry = {0, 0, 4};
    VkSpecializationInfo si = {1, &entry, 4, &spec0};
    VkComputePipelineCreateInfo cci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, NULL, 0,
                                       {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
                                        VK_SHADER_STAGE_COMPUTE_BIT, sm, "main", has_spec ? &si : NULL},
                                       r.layout, VK_NULL_HANDLE, 0};
    if (p->vkCreateComputePipelines(p->dev, VK_NULL_HANDLE, 1, &cci, NULL, &r.pipe) != VK_SUCCESS) {
        fprintf(stderr, "the pipeline of %s failed\n", path);
        r.pipe = NULL;
        return r;
    }
    VkDescriptorPoolCreateInfo dpci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL, 0, 1, n, ps};
    VkDescriptorPool dp;
    p->vkCreateDescriptorPool(p->dev, &dpci, NULL, &dp);
    VkDescriptorSetAllocateInfo dsai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, dp, 1, &dsl};
    p->vkAllocateDescriptorSets(p->dev, &dsai, &r.set);
    for (uint32_t i = 0; i < n; i++) {
        VkDescriptorBufferInfo dbi = {bufs[i], 0, VK_WHOLE_SIZE};
        VkWriteDescriptorSet w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, r.set, i, 0, 1, types[i]};
        if (types[i] == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER || types[i] == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER)
            w.pTexelBufferView = &views[i];
        else
            w.pBufferInfo = &dbi;
        p->vkUpdateDescriptorSets(p->dev, 1, &w, 0, NULL);
    }
    return r;
}

/* The median ms of 9 submissions (after 2) of one dispatch of `groups` workgroups. */
static double probe_time(probe *p, const probe_pipe *pp, const void *push, uint32_t push_bytes, uint32_t groups)
{
    VkCommandBufferAllocateInfo cbai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, p->pool,
                                        VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    VkCommandBuffer cmd;
    p->vkAllocateCommandBuffers(p->dev, &cbai, &cmd);
    VkCommandBufferBeginInfo cbbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    p->vkBeginCommandBuffer(cmd, &cbbi);
    p->vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pp->pipe);
    p->vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pp->layout, 0, 1, &pp->set, 0, NULL);
    if (push_bytes) p->vkCmdPushConstants(cmd, pp->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
    p->vkCmdDispatch(cmd, groups, 1, 1);
    p->vkEndCommandBuffer(cmd);
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cmd};
    double t[11];
    for (int r = 0; r < 11; r++) {
        double t0 = probe_now_ms();
        p->vkQueueSubmit(p->queue, 1, &si, VK_NULL_HANDLE);
        p->vkQueueWaitIdle(p->queue);
        t[r] = probe_now_ms() - t0;
    }
    qsort(t + 2, 9, sizeof *t, probe_cmp_double);
    return t[6];
}
#endif
