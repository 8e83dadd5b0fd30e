/* vkinfer: run ONNX models exported from PyTorch on any GPU through Vulkan compute.
 *
 * The one public header. Every call that can fail returns a vki_status; the message of the
 * last failure on the calling thread (naming the node, op, shapes or limit involved) is
 * returned by vki_last_error(). The library never aborts, exits or prints.
 *
 * Typical use:
 *   vki_context *ctx; vki_model *m; vki_session *s;
 *   vki_context_create(NULL, &ctx);          // default device (VKINFER_DEVICE overrides)
 *   vki_model_load(ctx, "model.onnx", &m);   // parse; weights stay in the file mapping
 *   vki_session_create(m, &s);
 *   vki_session_set_input(s, "x", VKI_DTYPE_FLOAT, dims, 4, data, bytes);
 *   vki_session_run(s);                      // plans on first run / new shapes, then replays
 *   vki_session_get_output(s, 0, &info, &ptr, &bytes);
 *
 * Threads: a context and the models loaded on it may be shared by any number of threads;
 * sessions of one context may be created, run and destroyed on several threads at once (the
 * library serialises queue submission and planning per context, so runs of different
 * sessions overlap on the GPU but plans are made one at a time). A session is one thread's at
 * a time: a call that changes or reads its state (set_input, run, get_output, set_profiling)
 * while another thread is inside one fails with VKI_ERROR_INVALID_ARGUMENT saying so; give
 * each thread its own session (they share nothing but the context and the model). The output
 * data get_output points to is rewritten by the session's next run, in any thread. Destroying
 * a context, model or session while another thread uses it is undefined, as in any C library.
 * vki_last_error() is per thread.
 */
#ifndef VKINFER_H
#define VKINFER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the library's public functions: the shared library is built with
 * -fvisibility=hidden, so only these are exported (internal helpers stay private). */
#if defined(__GNUC__) || defined(__clang__)
#define VKI_API __attribute__((visibility("default")))
#else
#define VKI_API
#endif

#define VKI_VERSION_MAJOR 0
#define VKI_VERSION_MINOR 1
#define VKI_VERSION_PATCH 0
#define VKI_MAX_RANK 8

typedef enum vki_status {
    VKI_OK = 0,
    VKI_ERROR_INVALID_ARGUMENT = 1, /* a NULL pointer, an unknown name, a bad index */
    VKI_ERROR_NO_VULKAN = 2,        /* no libvulkan.so.1, or no device */
    VKI_ERROR_IO = 3,               /* a file could not be opened, mapped or written */
    VKI_ERROR_MODEL = 4,            /* the model file is malformed (truncated, bad offsets...) */
    VKI_ERROR_UNSUPPORTED = 5,      /* an op, attribute or dtype vkinfer cannot run (yet) */
    VKI_ERROR_SHAPE = 6,            /* shapes or dtypes that do not fit the op or the model */
    VKI_ERROR_OUT_OF_MEMORY = 7,    /* host or device memory exhausted */
    VKI_ERROR_VULKAN = 8,           /* a Vulkan call failed */
    VKI_ERROR_VALIDATION = 9,       /* the Vulkan validation layer reported a message */
    /* The GPU was lost (VK_ERROR_DEVICE_LOST: a driver reset, a hang, a removed or crashed
     * device). The context is dead from then on: every later call that would use its device
     * (run, prepare, session_create, tensor create/read/write) fails with this status at once,
     * without submitting anything. Sessions, tensors, models and the context can still be
     * destroyed; create a new context (and load the model again) to go on. */
    VKI_ERROR_DEVICE_LOST = 10
} vki_status;

/* Element types, numbered as ONNX's TensorProto.DataType. */
typedef enum vki_dtype {
    VKI_DTYPE_UNDEFINED = 0,
    VKI_DTYPE_FLOAT = 1,
    VKI_DTYPE_UINT8 = 2,
    VKI_DTYPE_INT8 = 3,
    VKI_DTYPE_UINT16 = 4,
    VKI_DTYPE_INT16 = 5,
    VKI_DTYPE_INT32 = 6,
    VKI_DTYPE_INT64 = 7,            /* held as int32 on the GPU: values must fit (checked) */
    VKI_DTYPE_STRING = 8,
    VKI_DTYPE_BOOL = 9,
    VKI_DTYPE_FLOAT16 = 10,
    VKI_DTYPE_DOUBLE = 11,          /* computed in float32 on the GPU (docs/architecture.md) */
    VKI_DTYPE_UINT32 = 12,          /* held as int32 on the GPU: values up to 2^31-1 (checked) */
    VKI_DTYPE_UINT64 = 13,          /* held as int32 on the GPU: values up to 2^31-1 (checked) */
    VKI_DTYPE_BFLOAT16 = 16,
    /* Formats of 8 bits and fewer (ONNX 1.23's numbers), one byte per element on the host:
     * float8 (and float8e8m0) as the format's bits; float4e2m1 and float6 as their bits in the
     * low bits; int4/int2 as int8 values (-8..7, -2..1), uint4/uint2 as uint8 values (0..15,
     * 0..3). ONNX files pack the 6-, 4- and 2-bit kinds (four in three bytes, two or four to a
     * byte); the reader unpacks them. */
    VKI_DTYPE_FLOAT8E4M3FN = 17,
    VKI_DTYPE_FLOAT8E4M3FNUZ = 18,
    VKI_DTYPE_FLOAT8E5M2 = 19,
    VKI_DTYPE_FLOAT8E5M2FNUZ = 20,
    VKI_DTYPE_UINT4 = 21,
    VKI_DTYPE_INT4 = 22,
    VKI_DTYPE_FLOAT4E2M1 = 23,
    VKI_DTYPE_FLOAT8E8M0 = 24,      /* a power of two 2^(code-127) (code 255: NaN) */
    VKI_DTYPE_UINT2 = 25,
    VKI_DTYPE_INT2 = 26,
    VKI_DTYPE_FLOAT6E2M3 = 27,
    VKI_DTYPE_FLOAT6E3M2 = 28 /* no trailing comma: C++98 -pedantic refuses it */
} vki_dtype;

/* The message of the last failed call on this thread ("" if none). Valid until the next
 * failing call on the same thread. */
VKI_API const char *vki_last_error(void);

/* The library's version, "MAJOR.MINOR.PATCH" (the shared library's, which may be newer than
 * the VKI_VERSION_* macros a program was compiled with). */
VKI_API const char *vki_version(void);

/* Name of a dtype ("float32", "int64", ...), "unknown" for values outside the enum. */
VKI_API const char *vki_dtype_name(vki_dtype dtype);

/* Bytes per element of a dtype as stored on the host (0 for strings and unknown types). */
VKI_API size_t vki_dtype_size(vki_dtype dtype);

/* ---- Devices ------------------------------------------------------------------------- */

/* 1 if libvulkan.so.1 can be opened and at least one device answers, 0 otherwise. Never
 * crashes, whatever the machine has. */
VKI_API int vki_vulkan_available(void);

typedef struct vki_device_info {
    uint32_t index;        /* position in vki_device_list's order, what VKINFER_DEVICE takes */
    char name[256];
    const char *type;      /* "discrete", "integrated", "virtual", "cpu", "other" */
    char driver_name[256];
    char driver_info[256];
    uint32_t vendor_id, device_id;
    uint32_t api_version;
    uint64_t device_local_bytes;      /* size of the largest device-local heap */
    uint64_t max_storage_buffer_range; /* the largest tensor one binding can address */
    uint32_t max_workgroup_invocations;
    uint32_t max_shared_memory_bytes;
    uint32_t subgroup_size;           /* 0 if unknown */
    int fp16_arithmetic;              /* shaderFloat16 */
    int storage_16bit;                /* storageBuffer16BitAccess */
    int storage_8bit;                 /* storageBuffer8BitAccess */
    int cooperative_matrix;           /* VK_NV_ or VK_KHR_cooperative_matrix with fp16 16x16x16 products, fp32 sums (tensor cores) */
    int is_default;                   /* the device vki_context_create picks with no spec */
    int shader_float64;               /* shaderFloat64: float64 is computed in double (else in fp32);
                                         from vki_context_device_info, as the context uses it */
} vki_device_info;

/* Lists the Vulkan devices. Writes at most `capacity` entries and sets *count to the number
 * of devices (call with capacity 0 to count). */
VKI_API vki_status vki_device_list(vki_device_info *infos, uint32_t capacity, uint32_t *count);

/* ---- Context: one Vulkan device ------------------------------------------------------ */

typedef struct vki_context vki_context;

typedef struct vki_context_options {
    /* Device index or name substring. NULL: the VKINFER_DEVICE option, else the first of
     * discrete GPU, integrated GPU, virtual GPU, CPU (lavapipe). */
    const char *device;
    /* 1: enable VK_LAYER_KHRONOS_validation; any message it reports makes the next call on
     * a session fail with VKI_ERROR_VALIDATION. 0: off. -1: VKINFER_VALIDATION=1 decides
     * (VKINFER_VALIDATION=sync: on, with the layer's synchronization validation too, which
     * reports hazards between dispatches and copies that no barrier orders; slower). */
    int validation;
    /* Folder of the on-disk pipeline cache. NULL: VKINFER_CACHE_DIR, else
     * $XDG_CACHE_HOME/vkinfer, else ~/.cache/vkinfer. "" disables the disk cache. */
    const char *cache_dir;
} vki_context_options;

/* Opens a device. opts may be NULL (all defaults). The library's other options come from the
 * environment (VKINFER_* variables: docs/environment.md, `vkinfer options`), read here once;
 * a value an option does not take fails with VKI_ERROR_INVALID_ARGUMENT naming the variable. */
VKI_API vki_status vki_context_create(const vki_context_options *opts, vki_context **out);
/* vki_context_create with options set by the program: option names[i] (a variable's name,
 * "VKINFER_NO_FUSION", as vki_option_get lists them) takes values[i] ("1"), over the
 * environment and over opts' fields; a NULL value (or "", but for a string option) gives the
 * option its default whatever the environment says. An unknown name or a value the option does not take fails with
 * VKI_ERROR_INVALID_ARGUMENT naming it. names and values may be NULL when count is 0. */
VKI_API vki_status vki_context_create_with_options(const vki_context_options *opts, const char *const *names,
                                                   const char *const *values, size_t count, vki_context **out);
VKI_API void vki_context_destroy(vki_context *ctx);
VKI_API vki_status vki_context_device_info(const vki_context *ctx, vki_device_info *out);

/* ---- Models ---------------------------------------------------------------------------- */

typedef struct vki_model vki_model;

/* What a graph input or output holds. A sequence is a list of tensors of one dtype (each
 * its own shape); an optional is none or a tensor (or a sequence). For these, the dtype,
 * rank and dims of vki_tensor_info describe the element tensor. */
typedef enum vki_value_kind {
    VKI_VALUE_TENSOR = 0,
    VKI_VALUE_SEQUENCE = 1,         /* set with vki_session_set_sequence_input */
    VKI_VALUE_OPTIONAL = 2,         /* an optional tensor: unset (or vki_session_set_input_none) is none */
    VKI_VALUE_OPTIONAL_SEQUENCE = 3 /* an optional sequence of tensors: likewise */
} vki_value_kind;

typedef struct vki_tensor_info {
    const char *name;
    vki_dtype dtype;
    int32_t rank;
    int64_t dims[VKI_MAX_RANK];          /* -1 where the model leaves a dimension symbolic */
    const char *dim_names[VKI_MAX_RANK]; /* the symbol ("batch") or NULL */
    int32_t kind;                        /* vki_value_kind (model inputs and outputs; else 0) */
} vki_tensor_info;

/* Reads an ONNX file (memory-mapped; weights are not copied until uploaded). External data
 * files must lie inside the model's folder (the folder of `path`), symbolic links followed;
 * one outside is VKI_ERROR_MODEL. Checks every length and offset; a malformed file is
 * VKI_ERROR_MODEL, an op vkinfer does not know is VKI_ERROR_UNSUPPORTED naming it.
 * The context must outlive the model. */
VKI_API vki_status vki_model_load(vki_context *ctx, const char *path, vki_model **out);
VKI_API void vki_model_destroy(vki_model *model);
VKI_API uint32_t vki_model_input_count(const vki_model *model);
VKI_API uint32_t vki_model_output_count(const vki_model *model);
VKI_API vki_status vki_model_input_info(const vki_model *model, uint32_t index, vki_tensor_info *out);
VKI_API vki_status vki_model_output_info(const vki_model *model, uint32_t index, vki_tensor_info *out);

/* ---- Inspecting a model file without a device ------------------------------------------- */

/* What `vkinfer info` shows. Unlike vki_model_load, inspection needs no Vulkan device and
 * accepts models with ops vkinfer does not run, so that it can say which ones those are. */
typedef struct vki_model_report vki_model_report;

typedef struct vki_model_summary {
    int64_t ir_version;
    int64_t opset;              /* version of the default (ai.onnx) domain */
    uint32_t input_count;       /* graph inputs that are not initializers */
    uint32_t output_count;
    uint32_t node_count;
    uint32_t initializer_count;
    uint64_t weight_bytes;      /* bytes of initializer data as stored in the file(s) */
    uint32_t op_type_count;     /* distinct (domain, op_type) pairs, see vki_model_report_op */
    uint32_t unsupported_node_count; /* nodes whose op vkinfer does not implement */
} vki_model_summary;

typedef struct vki_model_op_use {
    const char *op;       /* ONNX op_type */
    const char *domain;   /* "" for the default ONNX domain */
    uint32_t node_count;  /* nodes of the model using it */
    int supported;        /* 1 if vkinfer implements it (see vki_op_get), else 0 */
} vki_model_op_use;

/* Reads an ONNX file as vki_model_load does (same checks, external data included). */
VKI_API vki_status vki_model_inspect(const char *path, vki_model_report **out);
VKI_API void vki_model_report_destroy(vki_model_report *report);
VKI_API vki_status vki_model_report_summary(const vki_model_report *report, vki_model_summary *out);
/* Ops in order of first use in the graph; index < summary.op_type_count. */
VKI_API vki_status vki_model_report_op(const vki_model_report *report, uint32_t index, vki_model_op_use *out);
/* Inputs and outputs as vki_model_input_info / vki_model_output_info describe them. Strings
 * stay valid until the report is destroyed. */
VKI_API vki_status vki_model_report_input(const vki_model_report *report, uint32_t index, vki_tensor_info *out);
VKI_API vki_status vki_model_report_output(const vki_model_report *report, uint32_t index, vki_tensor_info *out);

/* ---- Sessions: plan once per input shapes, replay per run ------------------------------ */

typedef struct vki_session vki_session;

/* When every input's shape is fully declared by the model, the session plans now, so a model
 * that cannot run fails here with the node, op, dtypes and shapes; otherwise the first run
 * with a new shape plans. */
VKI_API vki_status vki_session_create(vki_model *model, vki_session **out);
VKI_API void vki_session_destroy(vki_session *session);

/* How a session computes floating-point values. */
typedef enum vki_precision {
    VKI_PRECISION_DEFAULT = 0, /* as the model says: float32 in fp32, float16 in fp16... */
    /* The fp16 execution mode (ExecuTorch's force_fp16, ncnn's default): float32 weights are
     * converted to float16 once, when the session uploads them, and float32 activations are
     * held as float16 on the GPU; matrix products, convolutions, reductions, normalisations
     * and softmax accumulate in fp32. Inputs and outputs keep their float32 dtype (converted
     * on the GPU). Halves the memory of weights and activations; results differ from fp32 by
     * fp16 rounding (about 1e-3 relative). */
    VKI_PRECISION_FP16 = 1
} vki_precision;

typedef struct vki_session_options {
    vki_precision precision;
} vki_session_options;

/* vki_session_create with options; opts may be NULL (all defaults, as vki_session_create). */
VKI_API vki_status vki_session_create_with_options(vki_model *model, const vki_session_options *opts,
                                           vki_session **out);

/* Copies one input. dtype must be the model's dtype for that input; dims must fit the
 * model's declared dims (symbolic ones are free). */
VKI_API vki_status vki_session_set_input(vki_session *session, const char *name, vki_dtype dtype,
                                 const int64_t *dims, int32_t rank, const void *data,
                                 size_t bytes);

/* Sequences and optionals (vki_value_kind; see docs/architecture.md). Sequence lengths and
 * element shapes are part of the plan's key, like input shapes: the model's sequence ops are
 * decided at plan time.
 *
 * Sets a sequence input (VKI_VALUE_SEQUENCE, or VKI_VALUE_OPTIONAL_SEQUENCE: then no longer
 * none) from `count` tensors (0 for an empty sequence), each of `dtype` (the input's element
 * dtype): tensor k has rank ranks[k], dims dims[k * VKI_MAX_RANK ...] (which must fit the
 * declared element shape) and data[k] of bytes[k] bytes, copied. */
VKI_API vki_status vki_session_set_sequence_input(vki_session *session, const char *name, uint32_t count,
                                                  vki_dtype dtype, const int32_t *ranks, const int64_t *dims,
                                                  const void *const *data, const size_t *bytes);
/* Makes an optional input (VKI_VALUE_OPTIONAL, VKI_VALUE_OPTIONAL_SEQUENCE) none, as it is
 * until set. An optional tensor is set with vki_session_set_input. Other inputs: an error. */
VKI_API vki_status vki_session_set_input_none(vki_session *session, const char *name);

/* Runs the model. The first run with a set of input shapes plans (shape inference,
 * constant folding, kernel choice, memory planning, command recording); plans are kept per
 * input shapes, so later runs with known shapes only upload, submit and download. Ops whose
 * output sizes depend on the data (NonZero, Compress, Unique, NonMaxSuppression) read each
 * size back mid-run (one wait each); a size not seen before plans again. */
VKI_API vki_status vki_session_run(vki_session *session);

/* Output `index` of the last run. *data stays valid until the next run or destroy. An output
 * bound to a device tensor has no host copy: this fails saying so (read the tensor). */
VKI_API vki_status vki_session_get_output(vki_session *session, uint32_t index, vki_tensor_info *info,
                                  const void **data, size_t *bytes);

/* The tensors output `index` of the last run holds: 1 for a tensor, a sequence's length, -1
 * for an optional that is none (an optional holding a tensor: 1; a sequence: its length). */
VKI_API vki_status vki_session_get_output_count(vki_session *session, uint32_t index, int32_t *count);
/* Tensor `element` (< the count above) of output `index` of the last run, as
 * vki_session_get_output gives a tensor output (which is element 0; vki_session_get_output
 * refuses sequences and optionals that are none). */
VKI_API vki_status vki_session_get_output_element(vki_session *session, uint32_t index, uint32_t element,
                                                  vki_tensor_info *info, const void **data, size_t *bytes);

/* Makes (or finds) the plan for the inputs as they are set or bound now, without running it,
 * so that vki_session_output_info can report each output's shape before a run (to create
 * device tensors for them). vki_session_run plans by itself; this is only for knowing first. */
VKI_API vki_status vki_session_prepare(vki_session *session);
/* dtype and shape of output `index` for the inputs as last prepared or run (name too). Fails
 * when the shapes depend on sizes computed from the data and no run has found them yet. For a
 * sequence or optional output only name, kind and dtype are set (rank 0): its tensors are
 * read after a run with vki_session_get_output_count and vki_session_get_output_element. */
VKI_API vki_status vki_session_output_info(const vki_session *session, uint32_t index, vki_tensor_info *out);

/* ---- Device tensors: data that stays on the GPU between runs ----------------------------- */

/* A tensor in the device memory of a context, with a fixed dtype and shape. Bound as a
 * session's input or output, a run reads or writes it on the GPU with no copy through the
 * host: a denoising loop (a diffusion policy's sampler) binds one step's output as the next
 * step's input, and only the last result is read back. Its bytes are the dtype's own (int64 is
 * held narrowed to int32, as inputs are). */
typedef struct vki_tensor vki_tensor;

VKI_API vki_status vki_tensor_create(vki_context *ctx, vki_dtype dtype, const int64_t *dims, int32_t rank,
                                     vki_tensor **out);
VKI_API void vki_tensor_destroy(vki_tensor *tensor);
/* dtype and shape (name NULL, no symbolic dims). */
VKI_API vki_status vki_tensor_get_info(const vki_tensor *tensor, vki_tensor_info *out);
/* Copies host data (the dtype's bytes, numel * vki_dtype_size(dtype) of them) into the tensor,
 * or the tensor back to the host, waiting for the copy. */
VKI_API vki_status vki_tensor_write(vki_tensor *tensor, const void *data, size_t bytes);
VKI_API vki_status vki_tensor_read(const vki_tensor *tensor, void *data, size_t bytes);

/* Binds a device tensor as input `name` for the following runs (until vki_session_set_input
 * or another bind of that name): its dtype and shape must fit the model's input as with
 * vki_session_set_input, and it must belong to the session's context. The run reads it on the
 * GPU. An input whose values the model needs at plan time (a shape fed as an input) cannot be
 * bound: set it from the host. */
VKI_API vki_status vki_session_bind_input(vki_session *session, const char *name, vki_tensor *tensor);
/* Binds a device tensor as output `index` for the following runs (tensor NULL: unbind): the
 * run writes that output into it, and vki_session_get_output has no host copy of it. At run
 * time its dtype and shape must be the output's. A tensor may be bound as an output of one
 * session and an input of another (or the same) session; binding one tensor as an input and
 * an output of the same run is refused. The session does not own bound tensors: keep them
 * alive while bound. */
VKI_API vki_status vki_session_bind_output(vki_session *session, uint32_t index, vki_tensor *tensor);

typedef struct vki_session_stats {
    double plan_ms;              /* time of the plan used by the last run when it was made */
    double last_run_ms;          /* upload + GPU + download of the last run */
    uint32_t dispatch_count;     /* compute dispatches in the plan */
    uint32_t gpu_node_count;     /* nodes that run on the GPU */
    uint32_t folded_node_count;  /* nodes folded into constants at plan time */
    uint32_t aliased_node_count; /* nodes that are views (Reshape, Squeeze...) */
    uint32_t fused_node_count;   /* nodes done by their producer's kernel (Conv + Relu) */
    uint64_t weight_bytes;       /* device bytes holding the session's constants: initializers,
                                    uploaded once and shared by all plans, plus each cached
                                    plan's folded constants */
    uint64_t intermediate_bytes; /* device bytes of the liveness-shared intermediate arena */
    uint64_t intermediate_unshared_bytes; /* what the intermediates would take unshared */
    uint32_t plans_cached;
} vki_session_stats;

VKI_API vki_status vki_session_stats_get(const vki_session *session, vki_session_stats *out);

/* ---- Profiling: GPU time of every dispatch, no fixed limit ------------------------------- */

/* Turns per-dispatch GPU timestamps on or off for plans made after this call (plans made
 * earlier are dropped). Off by default: timestamps cost a little on every run. */
VKI_API vki_status vki_session_set_profiling(vki_session *session, int enabled);

typedef struct vki_dispatch_profile {
    const char *node;    /* ONNX node name */
    const char *op;      /* op_type */
    const char *shader;  /* the kernel that ran */
    double gpu_ms;       /* from the end of the previous dispatch to the end of this one */
    double flops;        /* floating-point operations it computes (2 per multiply-add); 0 where not
                          * counted: matrix products and convolutions are */
    double bytes;        /* bytes of the buffer ranges it binds, each distinct range once: what
                          * it may read and write, for GB/s */
} vki_dispatch_profile;

/* Per-dispatch GPU times of the last run (profiling on). Writes at most `capacity` entries
 * and sets *count to the number of dispatches. */
VKI_API vki_status vki_session_profile(const vki_session *session, vki_dispatch_profile *out,
                               uint32_t capacity, uint32_t *count);

/* ---- Operators --------------------------------------------------------------------------- */

typedef struct vki_op_info {
    const char *name;   /* ONNX op_type */
    const char *domain; /* "" for the default ONNX domain */
    const char *dtypes; /* element types it runs, e.g. "float32 float16 int32 int64" */
    const char *notes;  /* what it does not support yet, or "" */
} vki_op_info;

VKI_API uint32_t vki_op_count(void);
VKI_API vki_status vki_op_get(uint32_t index, vki_op_info *out);

/* ---- Options: the library's settings (the VKINFER_* variables) ------------------------- */

/* One option, as docs/environment.md lists it. All strings are static. */
typedef struct vki_option_info {
    const char *name;          /* the variable, "VKINFER_NO_FUSION" */
    const char *type;          /* "bool", "int", "enum", "string", "list" (names separated by ',' or '+') or
                                  "dims" (numbers joined by 'x', "64x128") */
    const char *values;        /* what it takes: "0|1", "gpu|cpu", "0-1000000", ">=1", "BMxBN[xTMxTN]" */
    const char *default_value; /* "" where the device decides or a string option is unset (doc says) */
    const char *category;      /* "user", "test" (another device's behaviour, kernels forced,
                                  faults) or "tuning" (tiles, thresholds, A/B checks) */
    const char *doc;
} vki_option_info;

VKI_API uint32_t vki_option_count(void);
VKI_API vki_status vki_option_get(uint32_t index, vki_option_info *out);

#ifdef __cplusplus
}
#endif
#endif
