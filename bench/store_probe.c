/* How much a store costs in a compute shader on a CPU Vulkan driver (lavapipe), by the form it
 * takes: a storage-buffer uvec4 store (what every vkinfer kernel does today) against an
 * imageStore to a storage texel buffer of RGBA32UI texels (a uimageBuffer). llvmpipe issues the
 * first as one loop over the SIMD lanes per component, each iteration with its own branch;
 * whether the image store is cheaper is what this measures. Each invocation stores 64 texels,
 * 16 bytes each, `stride` texels apart (1: an invocation's texels adjacent; 64: adjacent
 * invocations' texels adjacent, as the kernels' lanes mostly store), into a 64 MiB buffer, 8
 * invocations a workgroup; medians of 9 timed submissions after 2.
 *   glslc --target-env=vulkan1.1 -O -DIMAGE=0 -fshader-stage=compute -o ssbo.spv bench/store_probe.comp
 *   glslc --target-env=vulkan1.1 -O -DIMAGE=1 -fshader-stage=compute -o image.spv bench/store_probe.comp
 *   cc -O2 bench/store_probe.c -o store_probe -ldl && ./store_probe ssbo.spv image.spv */
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#include "probe_file.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static PFN_vkGetInstanceProcAddr gipa;
#define IFN(name) PFN_##name name = (PFN_##name)gipa(inst, #name)
#define DFN(name) PFN_##name name = (PFN_##name)gdpa(dev, #name)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { TEXELS = 4 << 20, PER_INVOCATION = 64, LOCAL = 8 };

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s SSBO.spv IMAGE.spv\n", argv[0]);
        return 2;
    }
    void *lib = dlopen("libvulkan.so.1", RTLD_NOW);
    if (!lib) return fprintf(stderr, "no libvulkan.so.1\n"), 1;
    gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
    VkInstance inst = NULL;
    PFN_vkCreateInstance vkCreateInstance = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "store_probe", 1, "store_probe", 1, VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app};
    if (vkCreateInstance(&ici, NULL, &inst) != VK_SUCCESS) return fprintf(stderr, "vkCreateInstance failed\n"), 1;
    IFN(vkEnumeratePhysicalDevices);
    IFN(vkCreateDevice);
    IFN(vkGetDeviceProcAddr);
    IFN(vkGetPhysicalDeviceMemoryProperties);
    IFN(vkGetPhysicalDeviceProperties);
    uint32_t n = 8;
    VkPhysicalDevice pds[8];
    vkEnumeratePhysicalDevices(inst, &n, pds);
    if (!n) return fprintf(stderr, "no device\n"), 1;
    VkPhysicalDevice pd = pds[0];
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    float prio = 1;
    VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, 0, 1, &prio};
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &qci};
    VkDevice dev;
    if (vkCreateDevice(pd, &dci, NULL, &dev) != VK_SUCCESS) return fprintf(stderr, "vkCreateDevice failed\n"), 1;
    PFN_vkGetDeviceProcAddr gdpa = vkGetDeviceProcAddr;
    DFN(vkGetDeviceQueue);
    DFN(vkCreateBuffer);
    DFN(vkGetBufferMemoryRequirements);
    DFN(vkAllocateMemory);
    DFN(vkBindBufferMemory);
    DFN(vkCreateBufferView);
    DFN(vkCreateShaderModule);
    DFN(vkCreateDescriptorSetLayout);
    DFN(vkCreatePipelineLayout);
    DFN(vkCreateComputePipelines);
    DFN(vkCreateDescriptorPool);
    DFN(vkAllocateDescriptorSets);
    DFN(vkUpdateDescriptorSets);
    DFN(vkCreateCommandPool);
    DFN(vkAllocateCommandBuffers);
    DFN(vkBeginCommandBuffer);
    DFN(vkEndCommandBuffer);
    DFN(vkCmdBindPipeline);
    DFN(vkCmdBindDescriptorSets);
    DFN(vkCmdPushConstants);
    DFN(vkCmdDispatch);
    DFN(vkQueueSubmit);
    DFN(vkQueueWaitIdle);
    VkQueue queue;
    vkGetDeviceQueue(dev, 0, 0, &queue);

    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, (VkDeviceSize)TEXELS * 16,
                              VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT};
    VkBuffer buf;
    vkCreateBuffer(dev, &bci, NULL, &buf);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, buf, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    uint32_t type = 0;
    while (type < mp.memoryTypeCount && !(req.memoryTypeBits >> type & 1)) type++;
    VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, type};
    VkDeviceMemory mem;
    if (vkAllocateMemory(dev, &mai, NULL, &mem) != VK_SUCCESS) return fprintf(stderr, "out of memory\n"), 1;
    vkBindBufferMemory(dev, buf, mem, 0);
    VkBufferViewCreateInfo vci = {VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO, NULL, 0, buf, VK_FORMAT_R32G32B32A32_UINT, 0,
                                  VK_WHOLE_SIZE};
    VkBufferView view;
    if (vkCreateBufferView(dev, &vci, NULL, &view) != VK_SUCCESS) return fprintf(stderr, "vkCreateBufferView failed\n"), 1;

    VkCommandPoolCreateInfo cpci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL, 0, 0};
    VkCommandPool pool;
    vkCreateCommandPool(dev, &cpci, NULL, &pool);
    printf("device: %s; %d texels of 16 bytes stored, %d an invocation, %d invocations a workgroup\n",
           props.deviceName, TEXELS, PER_INVOCATION, LOCAL);
    for (int k = 0; k < 2; k++) {
        size_t size;
        uint32_t *code = read_file(argv[1 + k], &size);
        if (!code) return fprintf(stderr, "cannot read %s\n", argv[1 + k]), 1;
        VkShaderModuleCreateInfo smci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, size, code};
        VkShaderModule sm;
        vkCreateShaderModule(dev, &smci, NULL, &sm);
        VkDescriptorType dt = k ? VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        VkDescriptorSetLayoutBinding lb = {0, dt, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
        VkDescriptorSetLayoutCreateInfo dlci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL, 0, 1, &lb};
        VkDescriptorSetLayout dsl;
        vkCreateDescriptorSetLayout(dev, &dlci, NULL, &dsl);
        VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
        VkPipelineLayoutCreateInfo plci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1, &dsl, 1, &pcr};
        VkPipelineLayout pl;
        vkCreatePipelineLayout(dev, &plci, NULL, &pl);
        VkComputePipelineCreateInfo cci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, NULL, 0,
                                           {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
                                            VK_SHADER_STAGE_COMPUTE_BIT, sm, "main", NULL},
                                           pl, VK_NULL_HANDLE, 0};
        VkPipeline pipe;
        if (vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cci, NULL, &pipe) != VK_SUCCESS)
            return fprintf(stderr, "pipeline %d failed\n", k), 1;
        VkDescriptorPoolSize ps = {dt, 1};
        VkDescriptorPoolCreateInfo dpci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL, 0, 1, 1, &ps};
        VkDescriptorPool dp;
        vkCreateDescriptorPool(dev, &dpci, NULL, &dp);
        VkDescriptorSetAllocateInfo dsai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, dp, 1, &dsl};
        VkDescriptorSet set;
        vkAllocateDescriptorSets(dev, &dsai, &set);
        VkDescriptorBufferInfo dbi = {buf, 0, VK_WHOLE_SIZE};
        VkWriteDescriptorSet w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 0, 0, 1, dt};
        if (k) w.pTexelBufferView = &view;
        else w.pBufferInfo = &dbi;
        vkUpdateDescriptorSets(dev, 1, &w, 0, NULL);
        for (uint32_t stride = 1; stride <= 64; stride *= 64) {
            VkCommandBufferAllocateInfo cbai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, pool,
                                                VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
            VkCommandBuffer cmd;
            vkAllocateCommandBuffers(dev, &cbai, &cmd);
            VkCommandBufferBeginInfo cbbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            vkBeginCommandBuffer(cmd, &cbbi);
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
            vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, &set, 0, NULL);
            vkCmdPushConstants(cmd, pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &stride);
            vkCmdDispatch(cmd, TEXELS / PER_INVOCATION / LOCAL, 1, 1);
            vkEndCommandBuffer(cmd);
            VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cmd};
            double t[11];
            for (int r = 0; r < 11; r++) {
                double t0 = now_ms();
                vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE);
                vkQueueWaitIdle(queue);
                t[r] = now_ms() - t0;
            }
            qsort(t + 2, 9, sizeof *t, cmp_double);
            printf("%-6s stride %2u: %8.2f ms, %.2f ns a texel\n", k ? "image" : "ssbo", stride, t[6], t[6] * 1e6 / TEXELS);
        }
    }
    return 0;
}
