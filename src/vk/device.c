#define _GNU_SOURCE
/* libvulkan opened at run time, instance and device creation, device choice and caps. */
#include "vk.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *vk_result_str(VkResult r)
{
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    default: return "VkResult error";
    }
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)severity;
    (void)types;
    vk_context *vk = user;
    if (atomic_fetch_add(&vk->validation_messages, 1) == 0)
        snprintf(vk->first_validation_message, sizeof vk->first_validation_message, "%s",
                 data && data->pMessage ? data->pMessage : "(no text)");
    return VK_FALSE;
}

vki_status vk_check_lost(vk_context *vk)
{
    if (!atomic_load(&vk->lost)) return VKI_OK;
    return vki_fail(VKI_ERROR_DEVICE_LOST, "the Vulkan device '%s' was lost (VK_ERROR_DEVICE_LOST%s): this context can no "
                    "longer run anything; destroy its sessions, tensors and models, then the context, and create a new "
                    "context to go on", vk->caps.props.deviceName,
                    vk->fault_lost_at ? ", or injected by VKINFER_FAULT_DEVICE_LOST" : "");
}

vki_status vk_fail_result(vk_context *vk, VkResult r, const char *what)
{
    if (r == VK_ERROR_DEVICE_LOST) {
        atomic_store(&vk->lost, true);
        return vk_check_lost(vk);
    }
    return vki_fail(VKI_ERROR_VULKAN, "%s failed (%s)", what, vk_result_str(r));
}

vki_status vk_check_validation(vk_context *vk)
{
    if (!atomic_load(&vk->validation_messages)) return VKI_OK;
    int n = atomic_exchange(&vk->validation_messages, 0);
    return vki_fail(VKI_ERROR_VALIDATION, "Vulkan validation layer reported %d message(s); first: %s", n,
                    vk->first_validation_message);
}

static bool has_layer(vk_context *vk, const char *name)
{
    uint32_t n = 0;
    if (vk->f.vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || !n) return false;
    VkLayerProperties *props = calloc(n, sizeof *props);
    if (!props) return false;
    bool found = false;
    if (vk->f.vkEnumerateInstanceLayerProperties(&n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++) found |= !strcmp(props[i].layerName, name);
    free(props);
    return found;
}

vki_status vk_instance_create(vk_context *vk)
{
    /* VKINFER_VULKAN_LIBRARY names another loader (and lets tests simulate a machine without one) */
    const char *lib = vk->opts.vulkan_library.s;
    if (!*lib) lib = "libvulkan.so.1";
    bool validation = vk->opts.validation != OPT_VALIDATION_OFF;
    vk->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!vk->lib) return vki_fail(VKI_ERROR_NO_VULKAN, "no Vulkan: cannot open %s (%s)", lib, dlerror());
    vk->f.vkGetInstanceProcAddr = (PFN_vkGetInstanceProcAddr)dlsym(vk->lib, "vkGetInstanceProcAddr");
    if (!vk->f.vkGetInstanceProcAddr) return vki_fail(VKI_ERROR_NO_VULKAN, "no Vulkan: libvulkan.so.1 lacks vkGetInstanceProcAddr");
#define VK_LOAD_GLOBAL(name) vk->f.name = (PFN_##name)vk->f.vkGetInstanceProcAddr(NULL, #name);
    VK_FUNCS_GLOBAL(VK_LOAD_GLOBAL)
#undef VK_LOAD_GLOBAL
    if (!vk->f.vkCreateInstance || !vk->f.vkEnumerateInstanceLayerProperties)
        return vki_fail(VKI_ERROR_NO_VULKAN, "no Vulkan: the loader lacks vkCreateInstance");
    uint32_t api = VK_API_VERSION_1_1;
    if (vk->f.vkEnumerateInstanceVersion) {
        uint32_t v = 0;
        if (vk->f.vkEnumerateInstanceVersion(&v) == VK_SUCCESS && v >= VK_API_VERSION_1_2)
            api = v >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;
    }
    vk->instance_api = api;
    if (validation && !has_layer(vk, "VK_LAYER_KHRONOS_validation"))
        return vki_fail(VKI_ERROR_NO_VULKAN, "validation asked for, but VK_LAYER_KHRONOS_validation is not installed "
                        "(Debian: vulkan-validationlayers)");
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "vkinfer", 1, "vkinfer", 1, api};
    const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
    const char *exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
    VkInstanceCreateInfo ci = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ci.pApplicationInfo = &app;
    /* VKINFER_VALIDATION=sync adds the layer's synchronization validation (hazards between
     * dispatches, copies and the host that barriers do not order): slower, for tests */
    VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features = {VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = &sync;
    if (validation) {
        ci.enabledLayerCount = 1;
        ci.ppEnabledLayerNames = layers;
        ci.enabledExtensionCount = 1;
        ci.ppEnabledExtensionNames = exts;
        if (vk->opts.validation == OPT_VALIDATION_SYNC) { /* the extension comes with the layer */
            ci.pNext = &features;
            ci.enabledExtensionCount = 2;
        }
    }
    VkResult r = vk->f.vkCreateInstance(&ci, NULL, &vk->instance);
    if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_NO_VULKAN, "no Vulkan: vkCreateInstance failed (%s)", vk_result_str(r));
#define VK_LOAD_INSTANCE(name) vk->f.name = (PFN_##name)vk->f.vkGetInstanceProcAddr(vk->instance, #name);
    VK_FUNCS_INSTANCE(VK_LOAD_INSTANCE)
#undef VK_LOAD_INSTANCE
    if (!vk->f.vkGetPhysicalDeviceProperties2 || !vk->f.vkGetPhysicalDeviceFeatures2)
        return vki_fail(VKI_ERROR_NO_VULKAN, "the Vulkan loader lacks Vulkan 1.1 entry points");
    if (validation && vk->f.vkCreateDebugUtilsMessengerEXT) {
        VkDebugUtilsMessengerCreateInfoEXT mi = {VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
        mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
        mi.pfnUserCallback = on_validation_message;
        mi.pUserData = vk;
        r = vk->f.vkCreateDebugUtilsMessengerEXT(vk->instance, &mi, NULL, &vk->messenger);
        if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_VULKAN, "cannot create the validation messenger (%s)", vk_result_str(r));
    }
    return VKI_OK;
}

static int type_rank(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
    }
}

static const char *type_name(VkPhysicalDeviceType t)
{
    static const char *names[] = {"discrete", "integrated", "virtual", "cpu", "other"};
    return names[type_rank(t)];
}

static bool has_compute_queue(vk_context *vk, VkPhysicalDevice phys, uint32_t *family)
{
    uint32_t n = 0;
    vk->f.vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, NULL);
    VkQueueFamilyProperties props[32];
    if (n > 32) n = 32;
    vk->f.vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, props);
    /* prefer a queue with compute and graphics (the "universal" queue has timestamps) */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < n; i++) {
            bool compute = props[i].queueFlags & VK_QUEUE_COMPUTE_BIT;
            bool graphics = props[i].queueFlags & VK_QUEUE_GRAPHICS_BIT;
            if (compute && (graphics || pass == 1)) {
                *family = i;
                return true;
            }
        }
    return false;
}

vki_status vk_list_devices(vk_context *vk, VkPhysicalDevice **out, uint32_t *count, uint32_t *best)
{
    uint32_t n = 0;
    VkResult r = vk->f.vkEnumeratePhysicalDevices(vk->instance, &n, NULL);
    if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_NO_VULKAN, "vkEnumeratePhysicalDevices failed (%s)", vk_result_str(r));
    if (n == 0) return vki_fail(VKI_ERROR_NO_VULKAN, "no Vulkan device found (Debian: mesa-vulkan-drivers gives lavapipe)");
    VkPhysicalDevice *devs = calloc(n, sizeof *devs);
    if (!devs) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    r = vk->f.vkEnumeratePhysicalDevices(vk->instance, &n, devs);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(devs);
        return vki_fail(VKI_ERROR_NO_VULKAN, "vkEnumeratePhysicalDevices failed (%s)", vk_result_str(r));
    }
    int best_rank = 99;
    *best = 0;
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceProperties p;
        uint32_t fam;
        vk->f.vkGetPhysicalDeviceProperties(devs[i], &p);
        int rank = type_rank(p.deviceType);
        if (rank < best_rank && has_compute_queue(vk, devs[i], &fam)) {
            best_rank = rank;
            *best = i;
        }
    }
    *out = devs;
    *count = n;
    return VKI_OK;
}

static bool has_device_ext(vk_context *vk, VkPhysicalDevice phys, const char *name)
{
    uint32_t n = 0;
    if (vk->f.vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL) != VK_SUCCESS || !n) return false;
    VkExtensionProperties *props = calloc(n, sizeof *props);
    if (!props) return false;
    bool found = false;
    if (vk->f.vkEnumerateDeviceExtensionProperties(phys, NULL, &n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++) found |= !strcmp(props[i].extensionName, name);
    free(props);
    return found;
}

/* Whether any of the three cooperative-matrix paths is on, and all of them off (a feature
 * masked, a profile without them, a memory model that cannot hold them). */
static bool any_coopmat(const vk_caps *c) { return c->cooperative_matrix || c->cooperative_matrix_khr || c->cooperative_matrix2; }
static void coopmat_off(vk_caps *c)
{
    c->cooperative_matrix = c->cooperative_matrix_khr = c->cooperative_matrix2 = c->cooperative_matrix2_bf16 = false;
}

/* Whether VK_NV_cooperative_matrix is there with its feature and offers the one shape our
 * kernels use: A, B fp16 16x16 (K=16), C and D fp32, subgroup scope. */
static bool has_nv_coopmat_f16(vk_context *vk, VkPhysicalDevice phys)
{
    if (!has_device_ext(vk, phys, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME)) return false;
    /* glslang declares the Vulkan memory model in every cooperative-matrix shader */
    VkPhysicalDeviceCooperativeMatrixFeaturesNV feat = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceVulkanMemoryModelFeatures model = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &feat;
    feat.pNext = &model;
    vk->f.vkGetPhysicalDeviceFeatures2(phys, &f2);
    PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV get_props = (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)
        vk->f.vkGetInstanceProcAddr(vk->instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
    if (!feat.cooperativeMatrix || !model.vulkanMemoryModel || !get_props) return false;
    uint32_t n = 0;
    if (get_props(phys, &n, NULL) != VK_SUCCESS || !n) return false;
    VkCooperativeMatrixPropertiesNV *props = calloc(n, sizeof *props);
    if (!props) return false;
    for (uint32_t i = 0; i < n; i++) props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
    bool found = false;
    if (get_props(phys, &n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++) {
            const VkCooperativeMatrixPropertiesNV *p = &props[i];
            found |= p->MSize == 16 && p->NSize == 16 && p->KSize == 16 && p->AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                     p->BType == VK_COMPONENT_TYPE_FLOAT16_NV && p->CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                     p->DType == VK_COMPONENT_TYPE_FLOAT32_NV && p->scope == VK_SCOPE_SUBGROUP_NV;
        }
    free(props);
    return found;
}

/* The same for VK_KHR_cooperative_matrix (matmul_coopmat_khr_f16 from
 * shaders/matmul_coopmat_aligned.glsl, compiled by a newer glslang than the build's: see
 * scripts/build-khr-shaders.sh). */
static bool has_khr_coopmat_f16(vk_context *vk, VkPhysicalDevice phys)
{
    if (!has_device_ext(vk, phys, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME)) return false;
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR feat = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
    VkPhysicalDeviceVulkanMemoryModelFeatures model = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &feat;
    feat.pNext = &model;
    vk->f.vkGetPhysicalDeviceFeatures2(phys, &f2);
    PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR get_props = (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)
        vk->f.vkGetInstanceProcAddr(vk->instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
    if (!feat.cooperativeMatrix || !model.vulkanMemoryModel || !get_props) return false;
    uint32_t n = 0;
    if (get_props(phys, &n, NULL) != VK_SUCCESS || !n) return false;
    VkCooperativeMatrixPropertiesKHR *props = calloc(n, sizeof *props);
    if (!props) return false;
    for (uint32_t i = 0; i < n; i++) props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
    bool found = false;
    if (get_props(phys, &n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++) {
            const VkCooperativeMatrixPropertiesKHR *p = &props[i];
            found |= p->MSize == 16 && p->NSize == 16 && p->KSize == 16 && p->AType == VK_COMPONENT_TYPE_FLOAT16_KHR &&
                     p->BType == VK_COMPONENT_TYPE_FLOAT16_KHR && p->CType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
                     p->ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR && p->scope == VK_SCOPE_SUBGROUP_KHR;
        }
    free(props);
    return found;
}

/* VK_NV_cooperative_matrix2 as shaders/matmul_coopmat2.glsl uses it: workgroup scope,
 * flexible dimensions, tensor addressing and per-element operations, fp16 products with fp32
 * sums at workgroup scope; records the workgroup sizes offered and their granularity. It
 * builds on VK_KHR_cooperative_matrix, which must offer the 16x16x16 shape too. Its shaders
 * are SPIR-V 1.6, so the device must speak Vulkan 1.3. */
static bool has_nv_coopmat2_f16(vk_context *vk, VkPhysicalDevice phys, vk_caps *caps)
{
    if (caps->props.apiVersion < VK_API_VERSION_1_3 || vk->instance_api < VK_API_VERSION_1_3 || !has_khr_coopmat_f16(vk, phys) ||
        !has_device_ext(vk, phys, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME))
        return false;
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV feat = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &feat};
    vk->f.vkGetPhysicalDeviceFeatures2(phys, &f2);
    if (!feat.cooperativeMatrixWorkgroupScope || !feat.cooperativeMatrixFlexibleDimensions ||
        !feat.cooperativeMatrixTensorAddressing || !feat.cooperativeMatrixPerElementOperations)
        return false;
    PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV get_props =
        (PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV)vk->f.vkGetInstanceProcAddr(
            vk->instance, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV");
    uint32_t n = 0;
    if (!get_props || get_props(phys, &n, NULL) != VK_SUCCESS || !n) return false;
    VkCooperativeMatrixFlexibleDimensionsPropertiesNV *props = calloc(n, sizeof *props);
    if (!props) return false;
    for (uint32_t i = 0; i < n; i++) props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV;
    int found = 0;
    if (get_props(phys, &n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && found < 4; i++) {
            const VkCooperativeMatrixFlexibleDimensionsPropertiesNV *p = &props[i];
            if (p->scope != VKI_SCOPE_WORKGROUP || p->AType != VK_COMPONENT_TYPE_FLOAT16_KHR ||
                p->BType != VK_COMPONENT_TYPE_FLOAT16_KHR || p->CType != VK_COMPONENT_TYPE_FLOAT32_KHR ||
                p->ResultType != VK_COMPONENT_TYPE_FLOAT32_KHR || p->KGranularity > 16 || !p->workgroupInvocations)
                continue;
            caps->coopmat2_local[found] = p->workgroupInvocations;
            caps->coopmat2_gran_m[found] = p->MGranularity;
            caps->coopmat2_gran_n[found] = p->NGranularity;
            found++;
        }
    /* bfloat16 operands (VK_KHR_shader_bfloat16) at each workgroup size found for fp16 */
    VkPhysicalDeviceShaderBfloat16FeaturesKHR bf = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 fb = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &bf};
    if (found && has_device_ext(vk, phys, VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME)) {
        vk->f.vkGetPhysicalDeviceFeatures2(phys, &fb);
        int same = 0;
        for (int k = 0; k < found && bf.shaderBFloat16Type && bf.shaderBFloat16CooperativeMatrix; k++)
            for (uint32_t i = 0; i < n; i++) {
                const VkCooperativeMatrixFlexibleDimensionsPropertiesNV *p = &props[i];
                if (p->scope == VKI_SCOPE_WORKGROUP && p->AType == VK_COMPONENT_TYPE_BFLOAT16_KHR &&
                    p->BType == VK_COMPONENT_TYPE_BFLOAT16_KHR && p->CType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
                    p->ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR && p->KGranularity <= 16 &&
                    p->workgroupInvocations == caps->coopmat2_local[k] && caps->coopmat2_gran_m[k] % p->MGranularity == 0 &&
                    caps->coopmat2_gran_n[k] % p->NGranularity == 0) {
                    same++;
                    break;
                }
            }
        caps->cooperative_matrix2_bf16 = same == found;
    }
    free(props);
    return found > 0;
}

static void read_caps(vk_context *vk, VkPhysicalDevice phys, vk_caps *caps)
{
    memset(caps, 0, sizeof *caps);
    VkPhysicalDeviceDriverProperties driver = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceSubgroupProperties subgroup = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceMaintenance3Properties maint3 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    vk->f.vkGetPhysicalDeviceProperties(phys, &p2.properties);
    bool v12 = p2.properties.apiVersion >= VK_API_VERSION_1_2;
    p2.pNext = &subgroup;
    subgroup.pNext = &maint3;
    if (v12) maint3.pNext = &driver;
    vk->f.vkGetPhysicalDeviceProperties2(phys, &p2);
    caps->props = p2.properties;
    if (v12) {
        snprintf(caps->driver_name, sizeof caps->driver_name, "%s", driver.driverName);
        snprintf(caps->driver_info, sizeof caps->driver_info, "%s", driver.driverInfo);
        int major = 0;
        if (driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE && sscanf(driver.driverInfo, "Mesa %d", &major) == 1 && major > 0)
            caps->llvmpipe_mesa_major = major;
    } else {
        snprintf(caps->driver_name, sizeof caps->driver_name, "driver %u", p2.properties.driverVersion);
    }
    caps->subgroup_size = subgroup.subgroupSize;
    caps->subgroup_arithmetic = (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                                (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && subgroup.subgroupSize >= 4 &&
                                subgroup.subgroupSize <= 128;
    caps->subgroup_shuffle = (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) &&
                             (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && subgroup.subgroupSize >= 4;
    caps->max_allocation_bytes = maint3.maxMemoryAllocationSize;
    caps->max_storage_buffer_range = p2.properties.limits.maxStorageBufferRange;
    caps->min_storage_offset_alignment = (uint32_t)p2.properties.limits.minStorageBufferOffsetAlignment;
    memcpy(caps->pipeline_cache_uuid, p2.properties.pipelineCacheUUID, VK_UUID_SIZE);
    VkPhysicalDevice16BitStorageFeatures s16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    VkPhysicalDevice8BitStorageFeatures s8 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &s16;
    if (v12) {
        s16.pNext = &f16;
        f16.pNext = &s8;
    }
    vk->f.vkGetPhysicalDeviceFeatures2(phys, &f2);
    caps->storage_16bit = s16.storageBuffer16BitAccess;
    caps->fp16_arithmetic = f16.shaderFloat16;
    caps->storage_8bit = s8.storageBuffer8BitAccess;
    caps->shader_float64 = f2.features.shaderFloat64;
    bool coopmat_ok = caps->fp16_arithmetic && caps->storage_16bit && caps->subgroup_size == 32;
    caps->cooperative_matrix = coopmat_ok && has_nv_coopmat_f16(vk, phys);
    caps->cooperative_matrix_khr = coopmat_ok && has_khr_coopmat_f16(vk, phys);
    caps->cooperative_matrix2 = coopmat_ok && has_nv_coopmat2_f16(vk, phys, caps);
    VkPhysicalDeviceMemoryProperties mp;
    vk->f.vkGetPhysicalDeviceMemoryProperties(phys, &mp);
    for (uint32_t i = 0; i < mp.memoryHeapCount; i++)
        if ((mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) && mp.memoryHeaps[i].size > caps->device_local_bytes)
            caps->device_local_bytes = mp.memoryHeaps[i].size;
}

/* VKINFER_LIMITS=android-baseline-2022: behave as a device with only the Vulkan Android
 * Baseline 2022 profile's limits and features, so that a desktop (or lavapipe) shows what a
 * small phone GPU would refuse. Limits are lowered, never raised; the alignment is raised. */
static void apply_limits_profile(vk_caps *caps, int profile)
{
    if (profile != OPT_LIMITS_ANDROID_BASELINE_2022) return;
    VkPhysicalDeviceLimits *l = &caps->props.limits;
#define CLAMP(field, value) \
    if (field > (value)) field = (value)
    CLAMP(caps->max_storage_buffer_range, 128ull << 20);
    CLAMP(l->maxStorageBufferRange, 128u << 20);
    CLAMP(l->maxComputeSharedMemorySize, 16384u);
    CLAMP(l->maxComputeWorkGroupInvocations, 128u);
    CLAMP(l->maxComputeWorkGroupSize[0], 128u);
    CLAMP(l->maxComputeWorkGroupSize[1], 128u);
    CLAMP(l->maxComputeWorkGroupSize[2], 64u);
    CLAMP(l->maxPerStageDescriptorStorageBuffers, 4u);
    CLAMP(l->maxBoundDescriptorSets, 4u);
    CLAMP(l->maxPushConstantsSize, 128u);
    CLAMP(l->maxTexelBufferElements, 65536u); /* Vulkan's required minimums */
    CLAMP(l->maxPerStageDescriptorSampledImages, 16u);
#undef CLAMP
    if (caps->min_storage_offset_alignment < 256) caps->min_storage_offset_alignment = 256;
    if (l->minStorageBufferOffsetAlignment < 256) l->minStorageBufferOffsetAlignment = 256;
    caps->storage_16bit = caps->storage_8bit = caps->fp16_arithmetic = false;
    caps->shader_float64 = false; /* not in the profile: float64 is computed in fp32 */
    caps->subgroup_size = 1; /* no subgroup operations: kernels that need them are not chosen */
    caps->subgroup_arithmetic = false;
    caps->subgroup_shuffle = false;
    coopmat_off(caps);
}

vki_status vk_describe_device(vk_context *vk, VkPhysicalDevice phys, uint32_t index, vki_device_info *out)
{
    vk_caps caps;
    read_caps(vk, phys, &caps);
    apply_limits_profile(&caps, vk->opts.limits);
    memset(out, 0, sizeof *out);
    out->index = index;
    snprintf(out->name, sizeof out->name, "%s", caps.props.deviceName);
    out->type = type_name(caps.props.deviceType);
    snprintf(out->driver_name, sizeof out->driver_name, "%s", caps.driver_name);
    snprintf(out->driver_info, sizeof out->driver_info, "%s", caps.driver_info);
    out->vendor_id = caps.props.vendorID;
    out->device_id = caps.props.deviceID;
    out->api_version = caps.props.apiVersion;
    out->device_local_bytes = caps.device_local_bytes;
    out->max_storage_buffer_range = caps.max_storage_buffer_range;
    out->max_workgroup_invocations = caps.props.limits.maxComputeWorkGroupInvocations;
    out->max_shared_memory_bytes = caps.props.limits.maxComputeSharedMemorySize;
    out->subgroup_size = caps.subgroup_size;
    out->fp16_arithmetic = caps.fp16_arithmetic;
    out->storage_16bit = caps.storage_16bit;
    out->storage_8bit = caps.storage_8bit;
    out->cooperative_matrix = any_coopmat(&caps);
    out->shader_float64 = caps.shader_float64;
    return VKI_OK;
}

vki_status vk_pipeline_cache_open(vk_context *vk);

vki_status vk_device_open(vk_context *vk)
{
    const vki_options *o = &vk->opts;
    const char *spec = o->device.s;
    VkPhysicalDevice *devs;
    uint32_t n, best;
    VKI_TRY(vk_list_devices(vk, &devs, &n, &best));
    uint32_t chosen = best;
    if (*spec) {
        char *end;
        unsigned long idx = strtoul(spec, &end, 10);
        if (*end == 0) {
            if (idx >= n) {
                free(devs);
                return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "device %lu does not exist: there are %u Vulkan devices (see `vkinfer devices`)", idx, n);
            }
            chosen = (uint32_t)idx;
        } else {
            chosen = UINT32_MAX;
            for (uint32_t i = 0; i < n && chosen == UINT32_MAX; i++) {
                VkPhysicalDeviceProperties p;
                vk->f.vkGetPhysicalDeviceProperties(devs[i], &p);
                if (strcasestr(p.deviceName, spec)) chosen = i;
            }
            if (chosen == UINT32_MAX) {
                free(devs);
                return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "no Vulkan device name contains '%s' (see `vkinfer devices`)", spec);
            }
        }
    }
    vk->phys = devs[chosen];
    vk->device_index = chosen;
    free(devs);
    read_caps(vk, vk->phys, &vk->caps);
    apply_limits_profile(&vk->caps, o->limits);
    /* VKINFER_MAX_MEMORY caps the bytes of device buffers this context holds (tests of
     * memory exhaustion; a budget on a shared GPU) */
    vk->max_memory = (uint64_t)o->max_memory;
    /* VKINFER_MAX_ALLOCATION lowers the device's maxMemoryAllocationSize (tests of models whose
     * weights or intermediates pass one allocation, on any device) */
    if (o->max_allocation && (!vk->caps.max_allocation_bytes || (uint64_t)o->max_allocation < vk->caps.max_allocation_bytes))
        vk->caps.max_allocation_bytes = (uint64_t)o->max_allocation;
    /* VKINFER_SPIN_US: how long a wait polls its fence first (vk_context.spin_us). GPUs poll
     * 20 ms: a blocking wait there wakes 80-270 us after the GPU is done (H200, alternating
     * runs: vit_b_16 batch 1 2.98 / 3.01 ms polling 1 ms, 2.90 / 2.90 polling 30 ms; BERT-base
     * batch 1 1.94 -> 1.87; resnet50 batch 32 fp16 8.16 -> 7.87), as CUDA's default schedule
     * spins where it has cores; runs longer than that block (the wake-up under 1.5% of them),
     * so one host thread is busy up to 20 ms a run, VKINFER_SPIN_US lowers it. A CPU device
     * polls only where it runs without its own worker threads (lavapipe with LP_NUM_THREADS=0,
     * as `--cpu-threads 0` sets it): its queue thread then runs the work and the core a poll
     * takes is otherwise idle, while with workers a poll would take one of theirs. Measured on
     * the 2-core VM, the MLP policy inline: 0.120 / 0.156 / 0.124 ms blocking, 0.102 / 0.076 /
     * 0.092 polling 200 us (alternating runs of 200). It polls 2 ms since session 20: runs just
     * past 200 us paid the blocking wait's wake-up (median / p90 of 400 runs, two rounds: the
     * transformer policy 0.435 / 0.544 and 0.558 / 0.797 ms polling 200 us, 0.331 / 0.394 and
     * 0.443 / 0.475 polling 2 ms; the 1-D U-Net policy 0.271 / 0.316, 0.246 / 0.298 against
     * 0.241 / 0.270, 0.213 / 0.285; the MLP policy 0.114 / 0.078 against 0.120 / 0.060). */
    bool inline_cpu = vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && o->lavapipe_inline;
    vk->spin_us = o->spin_us != OPT_AUTO                                         ? (uint32_t)o->spin_us
                  : vk->caps.props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU ? 20000
                  : inline_cpu                                               ? 2000
                                                                             : 0;
    /* Measured on the 2-core VM with --cpu-threads 0 (percentiles of 300 runs): 16 chained
     * Softmax dispatches, polling 200 us without yielding, took 0.09 or 0.30 ms (bimodal: the
     * queue thread woken by the submit sat on the polling core until the spin ended), blocking
     * 0.106-0.108 (median), polling with sched_yield 0.101-0.127; the MLP policy 0.078-0.095
     * polling, 0.118-0.180 blocking, 0.088-0.091 yielding. */
    vk->spin_yield = vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    /* VKINFER_FAULT_DEVICE_LOST=N: the context's Nth queue submission reports
     * VK_ERROR_DEVICE_LOST instead of running (tests of device loss) */
    vk->fault_lost_at = (uint64_t)o->fault_device_lost;
    /* VKINFER_MAX_BINDING_BYTES lowers the per-binding limit (tests of windowed dispatches) */
    if (o->max_binding_bytes != OPT_AUTO && (uint64_t)o->max_binding_bytes < vk->caps.max_storage_buffer_range)
        vk->caps.max_storage_buffer_range = (uint64_t)o->max_binding_bytes;
    /* VKINFER_DISABLE_FEATURES=storage16,storage8,fp16,float64,coopmat,coopmat2 masks features
     * off, so that tests run the paths of devices without them (packed storage through
     * conversions; coopmat2 leaves VK_NV_cooperative_matrix2 alone off, so that a device with it
     * runs the tensor-core kernels of devices without) */
    unsigned disable = o->disable_features;
    if (disable & OPT_DISABLE_STORAGE16) vk->caps.storage_16bit = false;
    if (disable & OPT_DISABLE_STORAGE8) vk->caps.storage_8bit = false;
    if (disable & OPT_DISABLE_FP16) vk->caps.fp16_arithmetic = false;
    if (disable & OPT_DISABLE_FLOAT64) vk->caps.shader_float64 = false;
    if (disable & OPT_DISABLE_COOPMAT) coopmat_off(&vk->caps);
    if (disable & OPT_DISABLE_COOPMAT2) vk->caps.cooperative_matrix2 = vk->caps.cooperative_matrix2_bf16 = false;
    /* the cooperative-matrix kernels declare fp16 buffers and shared arrays */
    if (!vk->caps.storage_16bit || !vk->caps.fp16_arithmetic)
        coopmat_off(&vk->caps);
    /* Where the device has both, the KHR extension stays off unless VKINFER_COOPMAT=khr asks for
     * it: on the H200 (driver 580) the KHR kernel runs no faster than the NV one, and Debian 12's
     * validation layer (1.3.239) predates the KHR extension and rejects its feature struct. */
    if (vk->caps.cooperative_matrix && o->coopmat != OPT_COOPMAT_KHR) vk->caps.cooperative_matrix_khr = false;
    /* VK_NV_cooperative_matrix2 where the device has it, unless VKINFER_COOPMAT=nv or =khr asks
     * for the subgroup-scope kernels; also off under validation, whose Debian 12 layer
     * (1.3.239) predates it and the KHR extension it needs */
    if (o->coopmat != OPT_AUTO) vk->caps.cooperative_matrix2 = false;
    if (vk->messenger != VK_NULL_HANDLE) vk->caps.cooperative_matrix2 = false;
    vk->f.vkGetPhysicalDeviceMemoryProperties(vk->phys, &vk->mem_props);
    if (!has_compute_queue(vk, vk->phys, &vk->queue_family))
        return vki_fail(VKI_ERROR_NO_VULKAN, "device '%s' has no compute queue", vk->caps.props.deviceName);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = vk->queue_family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    /* the features kernels may use, as far as the device has them (and they are not masked) */
    VkPhysicalDevice16BitStorageFeatures s16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    VkPhysicalDevice8BitStorageFeatures s8 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
    s16.storageBuffer16BitAccess = vk->caps.storage_16bit;
    void *features = &s16;
    if (vk->caps.props.apiVersion >= VK_API_VERSION_1_2) {
        f16.shaderFloat16 = vk->caps.fp16_arithmetic;
        s8.storageBuffer8BitAccess = vk->caps.storage_8bit;
        s16.pNext = &f16;
        f16.pNext = &s8;
    }
    /* cooperative matrices for the matmul_coopmat kernels, NV, KHR or both as the device has
     * them (VKINFER_DISABLE_FEATURES=coopmat leaves both off); glslang declares the Vulkan
     * memory model in their shaders. Either implies Vulkan >= 1.2 (shaderFloat16), where the
     * memory model is core. */
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR coopmat_khr = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
    VkPhysicalDeviceVulkanMemoryModelFeatures memory_model = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV coopmat2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
    VkPhysicalDeviceShaderBfloat16FeaturesKHR bf16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
    const char *extensions[4];
    uint32_t n_extensions = 0;
    if (any_coopmat(&vk->caps)) {
        /* with the memory model on, the validation layer holds every shader to it: our other
         * kernels' buffer barriers use Device scope, which then needs
         * vulkanMemoryModelDeviceScope (found on the H200); without it, no cooperative matrices */
        VkPhysicalDeviceVulkanMemoryModelFeatures have = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
        VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &have};
        vk->f.vkGetPhysicalDeviceFeatures2(vk->phys, &f2);
        if (!have.vulkanMemoryModelDeviceScope)
            coopmat_off(&vk->caps);
    }
    if (any_coopmat(&vk->caps)) {
        memory_model.vulkanMemoryModel = VK_TRUE;
        memory_model.vulkanMemoryModelDeviceScope = VK_TRUE;
        memory_model.pNext = features;
        features = &memory_model;
    }
    if (vk->caps.cooperative_matrix) {
        coopmat.cooperativeMatrix = VK_TRUE;
        coopmat.pNext = features;
        features = &coopmat;
        extensions[n_extensions++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
    }
    if (vk->caps.cooperative_matrix_khr || vk->caps.cooperative_matrix2) {
        coopmat_khr.cooperativeMatrix = VK_TRUE;
        coopmat_khr.pNext = features;
        features = &coopmat_khr;
        extensions[n_extensions++] = VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME;
    }
    if (vk->caps.cooperative_matrix2) {
        coopmat2.cooperativeMatrixWorkgroupScope = coopmat2.cooperativeMatrixFlexibleDimensions = VK_TRUE;
        coopmat2.cooperativeMatrixTensorAddressing = coopmat2.cooperativeMatrixPerElementOperations = VK_TRUE;
        coopmat2.pNext = features;
        features = &coopmat2;
        extensions[n_extensions++] = VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME;
    }
    if (vk->caps.cooperative_matrix2 && vk->caps.cooperative_matrix2_bf16) {
        bf16.shaderBFloat16Type = bf16.shaderBFloat16CooperativeMatrix = VK_TRUE;
        bf16.pNext = features;
        features = &bf16;
        extensions[n_extensions++] = VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME;
    }
    VkPhysicalDeviceFeatures core = {0};
    core.shaderFloat64 = vk->caps.shader_float64; /* the *_f64 kernels */
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = features;
    dci.pEnabledFeatures = &core;
    dci.enabledExtensionCount = n_extensions;
    dci.ppEnabledExtensionNames = n_extensions ? extensions : NULL;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    VkResult r = vk->f.vkCreateDevice(vk->phys, &dci, NULL, &vk->device);
    if (r != VK_SUCCESS)
        return vki_fail(VKI_ERROR_VULKAN, "vkCreateDevice failed on '%s' (%s)", vk->caps.props.deviceName, vk_result_str(r));
#define VK_LOAD_DEVICE(name)                                                                   \
    vk->f.name = (PFN_##name)vk->f.vkGetDeviceProcAddr(vk->device, #name);                     \
    if (!vk->f.name) return vki_fail(VKI_ERROR_NO_VULKAN, "the Vulkan driver lacks " #name);
    VK_FUNCS_DEVICE(VK_LOAD_DEVICE)
#undef VK_LOAD_DEVICE
    vk->f.vkGetDeviceQueue(vk->device, vk->queue_family, 0, &vk->queue);
    {
        uint32_t nq = 0;
        VkQueueFamilyProperties qp[32];
        vk->f.vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &nq, NULL);
        if (nq > 32) nq = 32;
        vk->f.vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &nq, qp);
        vk->caps.timestamp_bits = vk->queue_family < nq ? qp[vk->queue_family].timestampValidBits : 0;
        vk->caps.timestamp_period = vk->caps.props.limits.timestampPeriod;
    }
    VkCommandPoolCreateInfo pci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = vk->queue_family;
    r = vk->f.vkCreateCommandPool(vk->device, &pci, NULL, &vk->command_pool);
    if (r != VK_SUCCESS) return vki_fail(VKI_ERROR_VULKAN, "vkCreateCommandPool failed (%s)", vk_result_str(r));
    return vk_pipeline_cache_open(vk);
}

void vk_pipelines_destroy(vk_context *vk);

vki_status vk_context_init_locks(vk_context *vk)
{
    if (pthread_mutex_init(&vk->queue_lock, NULL)) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "cannot create a mutex");
    if (pthread_mutex_init(&vk->plan_lock, NULL)) {
        pthread_mutex_destroy(&vk->queue_lock);
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "cannot create a mutex");
    }
    vk->locks_ready = true;
    return VKI_OK;
}

void vk_context_destroy(vk_context *vk)
{
    if (vk->device) {
        vk->f.vkDeviceWaitIdle(vk->device);
        if (!atomic_load(&vk->lost)) vk_pipeline_cache_save(vk); /* a lost device may answer nothing */
        vk_pipelines_destroy(vk);
        if (vk->command_pool) vk->f.vkDestroyCommandPool(vk->device, vk->command_pool, NULL);
        vk->f.vkDestroyDevice(vk->device, NULL);
    }
    if (vk->messenger) vk->f.vkDestroyDebugUtilsMessengerEXT(vk->instance, vk->messenger, NULL);
    if (vk->instance) vk->f.vkDestroyInstance(vk->instance, NULL);
    if (vk->lib) dlclose(vk->lib);
    if (vk->locks_ready) {
        pthread_mutex_destroy(&vk->queue_lock);
        pthread_mutex_destroy(&vk->plan_lock);
    }
    memset(vk, 0, sizeof *vk);
}
