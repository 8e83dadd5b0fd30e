/* What a driver says about one compiled compute pipeline, through
 * VK_KHR_pipeline_executable_properties: its statistics (registers, shared memory, spills, as
 * the driver names them) and, with --ir DIR, its internal representations written to files.
 * A developer's probe for kernel work on a device one cannot profile otherwise (the H200 has no
 * Nsight here):
 *   cc bench/probes/pipeline_stats.c -o pipeline_stats -ldl
 *   glslc --target-env=vulkan1.1 -O -I shaders -o sgemm.spv build/shaders/variants/matmul_sgemm.comp
 *   ./pipeline_stats sgemm.spv --bindings 4 256 0 0 1 0 0 128 0 0 128 8 7 1
 * The numbers after the file are the specialization constants 0, 1, 2... (32-bit unsigned
 * values, as src/ops/matmul_record.c passes them). Every core feature of Vulkan 1.1-1.3 the
 * device has is enabled, no other extension: enough for the float32 kernels, not for the
 * tensor-core ones. */
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#include "probe_file.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPEC 32

static PFN_vkGetInstanceProcAddr gipa;
#define IFN(name) PFN_##name name = (PFN_##name)gipa(inst, #name)

static void print_stat(const VkPipelineExecutableStatisticKHR *s)
{
    printf("  %-40s ", s->name);
    switch (s->format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: printf("%s", s->value.b32 ? "true" : "false"); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: printf("%lld", (long long)s->value.i64); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: printf("%llu", (unsigned long long)s->value.u64); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: printf("%g", s->value.f64); break;
    default: printf("?");
    }
    printf("   (%s)\n", s->description);
}

int main(int argc, char **argv)
{
    const char *spv_path = NULL, *ir_dir = NULL;
    uint32_t spec[MAX_SPEC], n_spec = 0, bindings = 4;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bindings") && i + 1 < argc) bindings = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ir") && i + 1 < argc) ir_dir = argv[++i];
        else if (!spv_path) spv_path = argv[i];
        else if (n_spec < MAX_SPEC) spec[n_spec++] = (uint32_t)strtoul(argv[i], NULL, 0);
    }
    if (!spv_path || bindings < 1 || bindings > 16) {
        fprintf(stderr, "usage: %s SHADER.spv [--bindings N] [--ir DIR] [SPEC0 SPEC1 ...]\n", argv[0]);
        return 2;
    }
    size_t size;
    uint32_t *code = read_file(spv_path, &size);
    if (!code) {
        fprintf(stderr, "cannot read %s\n", spv_path);
        return 1;
    }
    void *lib = dlopen("libvulkan.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "no Vulkan loader: %s\n", dlerror());
        return 1;
    }
    gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
    VkInstance inst = NULL;
    PFN_vkCreateInstance create_instance = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_3};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    if (create_instance(&ici, NULL, &inst) != VK_SUCCESS) {
        fprintf(stderr, "vkCreateInstance failed\n");
        return 1;
    }
    IFN(vkEnumeratePhysicalDevices);
    IFN(vkGetPhysicalDeviceProperties);
    IFN(vkGetPhysicalDeviceFeatures2);
    IFN(vkEnumerateDeviceExtensionProperties);
    IFN(vkCreateDevice);
    IFN(vkGetDeviceProcAddr);
    uint32_t n = 8;
    VkPhysicalDevice pds[8];
    vkEnumeratePhysicalDevices(inst, &n, pds);
    const char *pick = getenv("VKINFER_DEVICE");
    uint32_t which = pick ? (uint32_t)atoi(pick) : 0;
    if (n == 0 || which >= n) {
        fprintf(stderr, "no such Vulkan device (%u found)\n", n);
        return 1;
    }
    VkPhysicalDevice pd = pds[which];
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    printf("device: %s (driver %u.%u.%u, packed 0x%x)\n", props.deviceName, VK_API_VERSION_MAJOR(props.driverVersion),
           VK_API_VERSION_MINOR(props.driverVersion), VK_API_VERSION_PATCH(props.driverVersion), props.driverVersion);
    uint32_t n_ext = 0;
    vkEnumerateDeviceExtensionProperties(pd, NULL, &n_ext, NULL);
    VkExtensionProperties *exts = calloc(n_ext, sizeof *exts);
    vkEnumerateDeviceExtensionProperties(pd, NULL, &n_ext, exts);
    int has = 0;
    for (uint32_t i = 0; i < n_ext; i++) has |= !strcmp(exts[i].extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    free(exts);
    if (!has) {
        printf("the device has no %s\n", VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
        return 1;
    }
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    VkPhysicalDeviceVulkan13Features f13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, .pNext = &pe};
    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &f13};
    VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
    if (props.apiVersion < VK_API_VERSION_1_3) f12.pNext = &pe; /* no 1.3 struct to chain */
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    if (!pe.pipelineExecutableInfo) {
        printf("pipelineExecutableInfo is not offered\n");
        return 1;
    }
    f2.features.robustBufferAccess = VK_FALSE; /* as the library creates its device: no bounds checks compiled in */
    float prio = 1;
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = 0, .queueCount = 1,
                                 .pQueuePriorities = &prio};
    const char *ext = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f2, .queueCreateInfoCount = 1, .pQueueCreateInfos = &q,
                              .enabledExtensionCount = 1, .ppEnabledExtensionNames = &ext};
    VkDevice dev;
    VkResult r = vkCreateDevice(pd, &dci, NULL, &dev);
    if (r != VK_SUCCESS) {
        fprintf(stderr, "vkCreateDevice failed (%d)\n", r);
        return 1;
    }
#define DFN(name) PFN_##name name = (PFN_##name)vkGetDeviceProcAddr(dev, #name)
    DFN(vkCreateShaderModule);
    DFN(vkCreateDescriptorSetLayout);
    DFN(vkCreatePipelineLayout);
    DFN(vkCreateComputePipelines);
    DFN(vkGetPipelineExecutablePropertiesKHR);
    DFN(vkGetPipelineExecutableStatisticsKHR);
    DFN(vkGetPipelineExecutableInternalRepresentationsKHR);
    VkDescriptorSetLayoutBinding b[16];
    for (uint32_t i = 0; i < bindings; i++)
        b[i] = (VkDescriptorSetLayoutBinding){i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo dl = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, .bindingCount = bindings,
                                          .pBindings = b};
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkShaderModule module;
    VkPushConstantRange pc = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 128};
    VkPipelineLayoutCreateInfo pl = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                     .pSetLayouts = &set_layout, .pushConstantRangeCount = 1, .pPushConstantRanges = &pc};
    VkShaderModuleCreateInfo sm = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = size, .pCode = code};
    if (vkCreateDescriptorSetLayout(dev, &dl, NULL, &set_layout) != VK_SUCCESS ||
        vkCreatePipelineLayout(dev, &pl, NULL, &layout) != VK_SUCCESS ||
        vkCreateShaderModule(dev, &sm, NULL, &module) != VK_SUCCESS) {
        fprintf(stderr, "cannot create the layouts or the shader module\n");
        return 1;
    }
    VkSpecializationMapEntry entries[MAX_SPEC];
    for (uint32_t i = 0; i < n_spec; i++) entries[i] = (VkSpecializationMapEntry){i, i * 4, 4};
    VkSpecializationInfo si = {n_spec, entries, n_spec * 4u, spec};
    VkComputePipelineCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR |
               (ir_dir ? VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR : 0);
    ci.stage = (VkPipelineShaderStageCreateInfo){.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                                                 .module = module, .pName = "main", .pSpecializationInfo = n_spec ? &si : NULL};
    ci.layout = layout;
    VkPipeline pipe;
    r = vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &ci, NULL, &pipe);
    if (r != VK_SUCCESS) {
        fprintf(stderr, "vkCreateComputePipelines failed (%d)\n", r);
        return 1;
    }
    VkPipelineInfoKHR pinfo = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipe};
    uint32_t n_exec = 0;
    vkGetPipelineExecutablePropertiesKHR(dev, &pinfo, &n_exec, NULL);
    VkPipelineExecutablePropertiesKHR *execs = calloc(n_exec ? n_exec : 1, sizeof *execs);
    for (uint32_t i = 0; i < n_exec; i++) execs[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR;
    vkGetPipelineExecutablePropertiesKHR(dev, &pinfo, &n_exec, execs);
    printf("%s: %u specialization constants, %u executable(s)\n", spv_path, n_spec, n_exec);
    for (uint32_t e = 0; e < n_exec; e++) {
        printf("executable %u: %s, subgroup size %u: %s\n", e, execs[e].name, execs[e].subgroupSize, execs[e].description);
        VkPipelineExecutableInfoKHR xi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = pipe, .executableIndex = e};
        uint32_t n_stat = 0;
        vkGetPipelineExecutableStatisticsKHR(dev, &xi, &n_stat, NULL);
        VkPipelineExecutableStatisticKHR *stats = calloc(n_stat ? n_stat : 1, sizeof *stats);
        for (uint32_t i = 0; i < n_stat; i++) stats[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
        vkGetPipelineExecutableStatisticsKHR(dev, &xi, &n_stat, stats);
        for (uint32_t i = 0; i < n_stat; i++) print_stat(&stats[i]);
        free(stats);
        if (!ir_dir) continue;
        uint32_t n_ir = 0;
        vkGetPipelineExecutableInternalRepresentationsKHR(dev, &xi, &n_ir, NULL);
        VkPipelineExecutableInternalRepresentationKHR *irs = calloc(n_ir ? n_ir : 1, sizeof *irs);
        for (uint32_t i = 0; i < n_ir; i++) irs[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR;
        vkGetPipelineExecutableInternalRepresentationsKHR(dev, &xi, &n_ir, irs);
        for (uint32_t i = 0; i < n_ir; i++) irs[i].pData = calloc(1, irs[i].dataSize + 1);
        vkGetPipelineExecutableInternalRepresentationsKHR(dev, &xi, &n_ir, irs);
        for (uint32_t i = 0; i < n_ir; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/exec%u_ir%u.%s", ir_dir, e, i, irs[i].isText ? "txt" : "bin");
            FILE *f = fopen(path, "wb");
            if (f) {
                fwrite(irs[i].pData, 1, irs[i].dataSize, f);
                fclose(f);
            }
            printf("  representation %u: %s (%zu bytes%s) -> %s%s\n", i, irs[i].name, irs[i].dataSize,
                   irs[i].isText ? ", text" : "", path, f ? "" : strerror(errno));
            free(irs[i].pData);
        }
        free(irs);
    }
    free(execs);
    return 0;
}
