/* The Vulkan layer: libvulkan opened at run time into our own function table, device
 * choice, buffers, pipelines (deduplicated, disk-cached) and command submission. */
#ifndef VKI_VK_H
#define VKI_VK_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

/* VK_KHR_cooperative_matrix came with header version 255; Debian 12's headers (239) lack it,
 * so its few declarations are spelled here, with the registry's values. */
#ifndef VK_KHR_cooperative_matrix
#define VK_KHR_cooperative_matrix 1
#define VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME "VK_KHR_cooperative_matrix"
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR ((VkStructureType)1000506000)
#define VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR ((VkStructureType)1000506001)
typedef VkComponentTypeNV VkComponentTypeKHR; /* the KHR enums keep the NV values */
typedef VkScopeNV VkScopeKHR;
#define VK_COMPONENT_TYPE_FLOAT16_KHR VK_COMPONENT_TYPE_FLOAT16_NV
#define VK_COMPONENT_TYPE_FLOAT32_KHR VK_COMPONENT_TYPE_FLOAT32_NV
#define VK_SCOPE_SUBGROUP_KHR VK_SCOPE_SUBGROUP_NV
typedef struct VkCooperativeMatrixPropertiesKHR {
    VkStructureType sType;
    void *pNext;
    uint32_t MSize, NSize, KSize;
    VkComponentTypeKHR AType, BType, CType, ResultType;
    VkBool32 saturatingAccumulation;
    VkScopeKHR scope;
} VkCooperativeMatrixPropertiesKHR;
typedef struct VkPhysicalDeviceCooperativeMatrixFeaturesKHR {
    VkStructureType sType;
    void *pNext;
    VkBool32 cooperativeMatrix;
    VkBool32 cooperativeMatrixRobustBufferAccess;
} VkPhysicalDeviceCooperativeMatrixFeaturesKHR;
typedef VkResult(VKAPI_PTR *PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)(
    VkPhysicalDevice physicalDevice, uint32_t *pPropertyCount, VkCooperativeMatrixPropertiesKHR *pProperties);
#endif

/* VK_NV_cooperative_matrix2 (header 300 and later): workgroup-scope matrices with
 * tensor-addressed loads, for shaders/matmul_coopmat2.glsl. Spelled here with the
 * registry's values (extension 594) for the same reason. */
#ifndef VK_NV_cooperative_matrix2
#define VK_NV_cooperative_matrix2 1
#define VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME "VK_NV_cooperative_matrix2"
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV ((VkStructureType)1000593000)
#define VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV ((VkStructureType)1000593001)
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV ((VkStructureType)1000593002)
typedef struct VkPhysicalDeviceCooperativeMatrix2FeaturesNV {
    VkStructureType sType;
    void *pNext;
    VkBool32 cooperativeMatrixWorkgroupScope;
    VkBool32 cooperativeMatrixFlexibleDimensions;
    VkBool32 cooperativeMatrixReductions;
    VkBool32 cooperativeMatrixConversions;
    VkBool32 cooperativeMatrixPerElementOperations;
    VkBool32 cooperativeMatrixTensorAddressing;
    VkBool32 cooperativeMatrixBlockLoads;
} VkPhysicalDeviceCooperativeMatrix2FeaturesNV;
typedef struct VkCooperativeMatrixFlexibleDimensionsPropertiesNV {
    VkStructureType sType;
    void *pNext;
    uint32_t MGranularity, NGranularity, KGranularity;
    VkComponentTypeKHR AType, BType, CType, ResultType;
    VkBool32 saturatingAccumulation;
    VkScopeKHR scope;
    uint32_t workgroupInvocations;
} VkCooperativeMatrixFlexibleDimensionsPropertiesNV;
typedef VkResult(VKAPI_PTR *PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV)(
    VkPhysicalDevice physicalDevice, uint32_t *pPropertyCount, VkCooperativeMatrixFlexibleDimensionsPropertiesNV *pProperties);
#endif
#define VKI_SCOPE_WORKGROUP ((VkScopeKHR)2)

/* VK_KHR_shader_bfloat16 (header 311 and later; extension 142): bfloat16 operands of
 * cooperative matrices, for matmul_coopmat2_bf16 (shaders/matmul_coopmat2.glsl). */
#ifndef VK_KHR_shader_bfloat16
#define VK_KHR_shader_bfloat16 1
#define VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME "VK_KHR_shader_bfloat16"
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR ((VkStructureType)1000141000)
#define VK_COMPONENT_TYPE_BFLOAT16_KHR ((VkComponentTypeKHR)1000141000)
typedef struct VkPhysicalDeviceShaderBfloat16FeaturesKHR {
    VkStructureType sType;
    void *pNext;
    VkBool32 shaderBFloat16Type;
    VkBool32 shaderBFloat16DotProduct;
    VkBool32 shaderBFloat16CooperativeMatrix;
} VkPhysicalDeviceShaderBfloat16FeaturesKHR;
#endif

#include "../util/options.h"
#include "../util/util.h"

#include <pthread.h>
#include <stdatomic.h>

#define VK_FUNCS_GLOBAL(X)                                                                 \
    X(vkCreateInstance) X(vkEnumerateInstanceLayerProperties)                              \
    X(vkEnumerateInstanceExtensionProperties) X(vkEnumerateInstanceVersion)

#define VK_FUNCS_INSTANCE(X)                                                               \
    X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)    \
    X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2)                      \
    X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceMemoryProperties)     \
    X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice) X(vkGetDeviceProcAddr)       \
    X(vkCreateDebugUtilsMessengerEXT) X(vkDestroyDebugUtilsMessengerEXT)

#define VK_FUNCS_DEVICE(X)                                                                 \
    X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkDestroyBuffer)            \
    X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory)                   \
    X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory) X(vkFlushMappedMemoryRanges)     \
    X(vkInvalidateMappedMemoryRanges) X(vkCreateShaderModule) X(vkDestroyShaderModule)     \
    X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout)                         \
    X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) X(vkCreateComputePipelines)       \
    X(vkDestroyPipeline) X(vkCreatePipelineCache) X(vkDestroyPipelineCache)                \
    X(vkGetPipelineCacheData) X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool)         \
    X(vkCreateBufferView) X(vkDestroyBufferView)                                           \
    X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) X(vkCreateCommandPool)           \
    X(vkDestroyCommandPool) X(vkAllocateCommandBuffers) X(vkFreeCommandBuffers) X(vkResetCommandBuffer) \
    X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkCmdBindPipeline)                     \
    X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch)                      \
    X(vkCmdPipelineBarrier) X(vkCmdCopyBuffer) X(vkCmdFillBuffer) X(vkQueueSubmit)         \
    X(vkQueueWaitIdle) X(vkCreateFence) X(vkDestroyFence) X(vkWaitForFences) X(vkGetFenceStatus) \
    X(vkResetFences) X(vkDeviceWaitIdle) X(vkCreateQueryPool) X(vkDestroyQueryPool)               \
    X(vkCmdResetQueryPool) X(vkCmdWriteTimestamp) X(vkGetQueryPoolResults)

typedef struct vk_funcs {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
#define VK_DECLARE(name) PFN_##name name;
    VK_FUNCS_GLOBAL(VK_DECLARE) VK_FUNCS_INSTANCE(VK_DECLARE) VK_FUNCS_DEVICE(VK_DECLARE)
#undef VK_DECLARE
} vk_funcs;

/* What the chosen device offers; kernels are picked from this. */
typedef struct vk_caps {
    VkPhysicalDeviceProperties props;
    char driver_name[256], driver_info[256];
    /* Mesa's major version where the driver is llvmpipe (lavapipe), from its driverInfo
     * ("Mesa 25.0.7 ..."); 0 elsewhere. Its code generation changed between releases (Mesa 25
     * makes a texel fetch an indirect call): the CPU kernels' blocking follows it. */
    int llvmpipe_mesa_major;
    uint64_t device_local_bytes;
    uint64_t max_storage_buffer_range;
    uint64_t max_allocation_bytes;
    uint32_t min_storage_offset_alignment;
    uint32_t subgroup_size;
    bool subgroup_arithmetic; /* subgroupAdd/Max... in compute shaders (softmax_sg) */
    bool subgroup_shuffle;    /* subgroupShuffle in compute shaders (matmul_cpu_lanes) */
    uint32_t timestamp_bits; /* valid bits of the compute queue's timestamps, 0 = none */
    float timestamp_period;  /* nanoseconds per tick */
    bool fp16_arithmetic, storage_16bit, storage_8bit;
    bool shader_float64; /* enabled: the *_f64 kernels compute float64 in double */
    /* VK_NV_cooperative_matrix is enabled and offers fp16 16x16x16 products with fp32
     * accumulation at subgroup scope (shaders/matmul_coopmat_f16.comp's shape); the shaders
     * that use it need shaderFloat16 and 32-wide subgroups too, which this implies */
    bool cooperative_matrix;
    /* the same through VK_KHR_cooperative_matrix (matmul_coopmat_khr_f16,
     * shaders/matmul_coopmat_aligned.glsl), with the same implications; a device may have either
     * or both */
    bool cooperative_matrix_khr;
    /* VK_NV_cooperative_matrix2 (with VK_KHR_cooperative_matrix under it) is enabled and offers
     * workgroup-scope fp16 products with fp32 sums, tensor addressing and per-element
     * operations (shaders/matmul_coopmat2.glsl); coopmat2_local[i] is a workgroup size the
     * device takes for them with granularity coopmat2_gran_m/n[i] (0: none) */
    bool cooperative_matrix2;
    uint32_t coopmat2_local[4], coopmat2_gran_m[4], coopmat2_gran_n[4];
    /* and the same for bfloat16 operands through VK_KHR_shader_bfloat16, enabled, at every
     * workgroup size and granularity above (matmul_coopmat2_bf16) */
    bool cooperative_matrix2_bf16;
    uint8_t pipeline_cache_uuid[VK_UUID_SIZE];
} vk_caps;

typedef struct vk_pipeline vk_pipeline;

typedef struct vk_context {
    vki_options opts; /* read once, when the context is created */
    vk_funcs f;
    void *lib;
    VkInstance instance;
    uint32_t instance_api; /* the Vulkan version the instance was created for */
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    VkPhysicalDeviceMemoryProperties mem_props;
    vk_caps caps;
    uint32_t device_index;
    VkDebugUtilsMessengerEXT messenger;
    /* validation messages since the last check (the layer may call from any thread) */
    atomic_int validation_messages;
    char first_validation_message[1024];
    /* pipelines, deduplicated by (shader, specialization constants) */
    VkPipelineCache pipeline_cache;
    char cache_path[1024];
    vk_pipeline *pipelines;
    VkCommandPool command_pool;
    /* Threads (include/vkinfer.h, "Threads"): the queue is externally synchronised in Vulkan,
     * and so are the command pool (plans record into buffers from it) and the pipeline table.
     * queue_lock guards every vkQueueSubmit; plan_lock guards planning, plan destruction and
     * pipeline creation, so sessions of one context may run and plan on several threads. */
    pthread_mutex_t queue_lock, plan_lock;
    bool locks_ready;
    /* Memory held by this context's buffers (bytes of their allocations), updated atomically
     * by vk_buffer_create / vk_buffer_destroy: device-local buffers (weights, intermediates,
     * device tensors) in allocated_bytes, host-visible staging in staging_bytes. A device
     * buffer that would take allocated_bytes past max_memory (VKINFER_MAX_MEMORY; 0 = no cap)
     * fails with VKI_ERROR_OUT_OF_MEMORY before anything is allocated. */
    _Atomic uint64_t allocated_bytes, staging_bytes;
    uint64_t max_memory;
    /* Device loss: set when a submission, a fence wait or a query read returns
     * VK_ERROR_DEVICE_LOST; from then on every submission and every public call that would
     * use the device fails with VKI_ERROR_DEVICE_LOST before touching the queue.
     * submit_count counts submissions that reached the queue (under queue_lock);
     * VKINFER_FAULT_DEVICE_LOST=N makes the Nth of them report VK_ERROR_DEVICE_LOST instead of
     * submitting (fault_lost_at; 0 = never), so that tests can lose a device on demand. */
    atomic_bool lost;
    uint64_t submit_count, fault_lost_at;
    /* How long a submission's wait polls its fence before it blocks, in microseconds: a
     * blocking wait returns tens of microseconds after the GPU is done (a wake-up), which
     * at batch 1 is a share of the run. VKINFER_SPIN_US=N; default 20000 on a GPU, 2000 on a
     * CPU device running the work on its queue thread (lavapipe with LP_NUM_THREADS=0), else 0
     * (its own threads need the cores). spin_yield: each poll yields the core (CPU devices). */
    uint32_t spin_us;
    bool spin_yield;
} vk_context;

/* Initialises the context's locks (before any other use of it). */
vki_status vk_context_init_locks(vk_context *vk);

/* Opens the Vulkan loader (opts.vulkan_library) and creates an instance, with the validation
 * layer as opts.validation asks. */
vki_status vk_instance_create(vk_context *vk);
/* Opens the device opts.device names (index or name substring; "" = best by type), with the
 * limits, features and pipeline cache the options give. */
vki_status vk_device_open(vk_context *vk);
void vk_context_destroy(vk_context *vk);
/* Fills a public device info record for physical device `index`. */
vki_status vk_describe_device(vk_context *vk, VkPhysicalDevice phys, uint32_t index, vki_device_info *out);
/* Enumerates physical devices (allocates *out, caller frees); default index in *best. */
vki_status vk_list_devices(vk_context *vk, VkPhysicalDevice **out, uint32_t *count, uint32_t *best);
/* VKI_ERROR_DEVICE_LOST (with the message saying what to do) once the device is lost. */
vki_status vk_check_lost(vk_context *vk);
/* Maps a failed VkResult of a call that used the device to a status: VK_ERROR_DEVICE_LOST
 * marks the context lost and gives VKI_ERROR_DEVICE_LOST, anything else VKI_ERROR_VULKAN
 * ("what" failed (result)). */
vki_status vk_fail_result(vk_context *vk, VkResult r, const char *what);
/* VKI_ERROR_VALIDATION if the validation layer spoke since the last call. */
vki_status vk_check_validation(vk_context *vk);
const char *vk_result_str(VkResult r);

/* ---- buffers ---- */
enum vk_buffer_use { VK_BUFFER_DEVICE, VK_BUFFER_UPLOAD, VK_BUFFER_DOWNLOAD };
typedef struct vk_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    void *mapped; /* host-visible buffers only */
    bool coherent;
    enum vk_buffer_use use;
    VkDeviceSize counted; /* bytes counted in the context's allocated_bytes or staging_bytes */
} vk_buffer;

vki_status vk_buffer_create(vk_context *vk, VkDeviceSize size, enum vk_buffer_use use, vk_buffer *out);
void vk_buffer_destroy(vk_context *vk, vk_buffer *b);
void vk_buffer_flush(vk_context *vk, vk_buffer *b);      /* after host writes */
void vk_buffer_invalidate(vk_context *vk, vk_buffer *b); /* before host reads */

/* ---- pipelines ---- */
typedef struct vk_shader {
    const char *name;
    const uint32_t *code;
    size_t size; /* bytes */
    uint32_t bindings;
    uint32_t texel_bindings; /* bit b: binding b is a uniform texel buffer: textureBuffer (RGBA32F texels) or utextureBuffer */
    uint32_t texel_r32_bindings; /* bit b: that buffer is a utextureBuffer, viewed as R32_UINT texels (32-bit words) */
} vk_shader;

/* The embedded shader table, generated from shaders/ by the build. */
const vk_shader *vk_shader_find(const char *name);
/* VKI_ERROR_UNSUPPORTED, naming the kernel and the limit, when a pipeline of shader s with
 * these specialization constants would exceed the device's limits (as VKINFER_LIMITS may
 * lower them): storage buffers per stage, push constants, workgroup size, shared memory. Read
 * from the SPIR-V, so that no kernel reaches the driver (or the validation layer) too big. */
vki_status vk_shader_check_limits(const vk_context *vk, const vk_shader *s, const uint32_t *spec, uint32_t n_spec);

#define VK_MAX_SPEC 22
struct vk_pipeline {
    const vk_shader *shader;
    uint32_t spec[VK_MAX_SPEC];
    uint32_t n_spec;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    vk_pipeline *next;
};
#define VK_PUSH_BYTES 128

/* Pipeline for (shader, spec constants); created once and reused. Spec constant i has
 * constant_id i. Every shader's workgroup size is constant_id 0..2 where it varies. */
vki_status vk_pipeline_get(vk_context *vk, const vk_shader *shader, const uint32_t *spec,
                           uint32_t n_spec, vk_pipeline **out);
/* Writes the pipeline cache to disk (atomic rename); errors are ignored by design. */
void vk_pipeline_cache_save(vk_context *vk);

/* ---- submission ---- */
/* Submits command buffers (executed in order) and waits for them (queue_lock held to submit). */
vki_status vk_submit_and_wait(vk_context *vk, const VkCommandBuffer *cmds, uint32_t n, VkFence fence);
/* A barrier making earlier transfer and shader writes visible to transfers that follow. */
void vk_transfer_barrier(vk_context *vk, VkCommandBuffer cmd);
/* Copies between buffers with a one-time command buffer from the context's pool, and waits. */
vki_status vk_copy_and_wait(vk_context *vk, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst, VkDeviceSize dst_offset,
                            VkDeviceSize size);

#endif
