/* What a device offers for cooperative matrices: the KHR/NV extensions, VK_NV_cooperative_matrix2's
 * features and properties, and the shapes each reports. A developer's probe for choosing the
 * tensor-core kernels' tiles on a new device:
 *   cc bench/probes/coopmat_probe.c -o coopmat_probe -ldl && ./coopmat_probe */
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    VkStructureType sType;
    void *pNext;
    VkBool32 workgroup_scope, flexible_dimensions, reductions, conversions, per_element, tensor_addressing,
        block_loads;
} coopmat2_features;
typedef struct {
    VkStructureType sType;
    void *pNext;
    uint32_t max_workgroup_size, flexible_max_dimension, reserved_shared_memory;
} coopmat2_properties;
typedef struct {
    VkStructureType sType;
    void *pNext;
    uint32_t m_granularity, n_granularity, k_granularity;
    VkComponentTypeNV a, b, c, result;
    VkBool32 saturating;
    VkScopeNV scope;
    uint32_t workgroup_invocations;
} flexible_properties;
typedef struct {
    VkStructureType sType;
    void *pNext;
    uint32_t m, n, k;
    VkComponentTypeNV a, b, c, result;
    VkBool32 saturating;
    VkScopeNV scope;
} khr_properties;
typedef VkResult (*get_flexible_fn)(VkPhysicalDevice, uint32_t *, flexible_properties *);
typedef VkResult (*get_khr_fn)(VkPhysicalDevice, uint32_t *, khr_properties *);

int main(void)
{
    void *lib = dlopen("libvulkan.so.1", RTLD_NOW);
    if (!lib) return printf("no libvulkan.so.1\n"), 1;
    PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
    PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_3};
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkInstance inst;
    if (create(&ici, NULL, &inst) != VK_SUCCESS) return printf("vkCreateInstance failed\n"), 1;
#define LOAD(name) PFN_##name name = (PFN_##name)gipa(inst, #name)
    LOAD(vkEnumeratePhysicalDevices);
    LOAD(vkGetPhysicalDeviceProperties);
    LOAD(vkGetPhysicalDeviceFeatures2);
    LOAD(vkGetPhysicalDeviceProperties2);
    LOAD(vkEnumerateDeviceExtensionProperties);
    uint32_t n = 8;
    VkPhysicalDevice devs[8];
    vkEnumeratePhysicalDevices(inst, &n, devs);
    for (uint32_t d = 0; d < n; d++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(devs[d], &p);
        printf("device %u: %s, limits: shared %u bytes, workgroup %u\n", d, p.deviceName,
               p.limits.maxComputeSharedMemorySize, p.limits.maxComputeWorkGroupInvocations);
        uint32_t ne = 0;
        vkEnumerateDeviceExtensionProperties(devs[d], NULL, &ne, NULL);
        VkExtensionProperties *ext = calloc(ne, sizeof *ext);
        vkEnumerateDeviceExtensionProperties(devs[d], NULL, &ne, ext);
        int has2 = 0;
        for (uint32_t i = 0; i < ne; i++)
            if (strstr(ext[i].extensionName, "cooperative") || strstr(ext[i].extensionName, "bfloat16") ||
                strstr(ext[i].extensionName, "shader_float8")) {
                printf("  %s v%u\n", ext[i].extensionName, ext[i].specVersion);
                has2 |= !strcmp(ext[i].extensionName, "VK_NV_cooperative_matrix2");
            }
        free(ext);
        get_khr_fn get_khr = (get_khr_fn)gipa(inst, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
        if (get_khr) {
            uint32_t k = 0;
            get_khr(devs[d], &k, NULL);
            khr_properties *kp = calloc(k, sizeof *kp);
            for (uint32_t i = 0; i < k; i++) kp[i].sType = (VkStructureType)1000506001;
            get_khr(devs[d], &k, kp);
            for (uint32_t i = 0; i < k; i++)
                printf("  KHR %ux%ux%u A%u B%u C%u R%u scope %u\n", kp[i].m, kp[i].n, kp[i].k, kp[i].a, kp[i].b,
                       kp[i].c, kp[i].result, kp[i].scope);
            free(kp);
        }
        if (!has2) continue;
        coopmat2_features f = {(VkStructureType)1000593000};
        VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f};
        vkGetPhysicalDeviceFeatures2(devs[d], &f2);
        printf("  coopmat2 features: workgroup_scope %u flexible %u reductions %u conversions %u per_element %u "
               "tensor_addressing %u block_loads %u\n", f.workgroup_scope, f.flexible_dimensions, f.reductions,
               f.conversions, f.per_element, f.tensor_addressing, f.block_loads);
        coopmat2_properties pr = {(VkStructureType)1000593002};
        VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &pr};
        vkGetPhysicalDeviceProperties2(devs[d], &p2);
        printf("  coopmat2 properties: max workgroup %u, flexible max dim %u, reserved shared %u\n",
               pr.max_workgroup_size, pr.flexible_max_dimension, pr.reserved_shared_memory);
        get_flexible_fn get_flex = (get_flexible_fn)gipa(inst, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV");
        if (get_flex) {
            uint32_t k = 0;
            get_flex(devs[d], &k, NULL);
            flexible_properties *fp = calloc(k, sizeof *fp);
            for (uint32_t i = 0; i < k; i++) fp[i].sType = (VkStructureType)1000593001;
            get_flex(devs[d], &k, fp);
            for (uint32_t i = 0; i < k; i++)
                printf("  flexible granularity %ux%ux%u A%u B%u C%u R%u scope %u invocations %u\n", fp[i].m_granularity,
                       fp[i].n_granularity, fp[i].k_granularity, fp[i].a, fp[i].b, fp[i].c, fp[i].result, fp[i].scope,
                       fp[i].workgroup_invocations);
            free(fp);
        }
    }
    return 0;
}
