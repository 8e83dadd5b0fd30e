/* The objects behind the public handles. */
#ifndef VKI_RUNTIME_H
#define VKI_RUNTIME_H

#include "../onnx/onnx_reader.h"
#include "../plan/plan.h"
#include "../ops/registry.h"

struct vki_context {
    vk_context vk;
};

struct vki_tensor {
    vki_context *ctx;
    vki_dtype dtype;
    int rank;
    int64_t dims[VKI_MAX_RANK];
    gpu_storage storage; /* as a graph input or output of this dtype is held */
    uint64_t bytes;      /* numel * storage_size(storage) */
    vk_buffer buffer;    /* device-local */
};

/* The storage a graph input or output of dtype t is held in (see plan_storage_for). */
gpu_storage tensor_storage(vki_dtype t);

struct vki_model {
    vki_context *ctx;
    onnx_model onnx;
    char name[256]; /* the file's name, for messages */
};

#define SESSION_MAX_PLANS 8

typedef struct session_input {
    void *data; /* host copy in the input's dtype */
    vki_tensor *bound; /* or a device tensor, read on the GPU */
    size_t bytes;
    int rank;
    int64_t dims[VKI_MAX_RANK];
    bool set;
    /* what the input holds (plan_create's counts): 1 for a tensor; a sequence's length, its
     * elements in elems[0..count); -1 for an optional that is none */
    int count;
    struct session_input *elems;
} session_input;

struct vki_session {
    vki_model *model;
    session_input *inputs;
    bool *keyed; /* inputs whose values plans depend on (found while planning) */
    weight_cache weights; /* initializers on the device, shared by the plans */
    plan *plans[SESSION_MAX_PLANS];
    int n_plans;
    /* the data-dependent sizes (struct plan) the last run found: plans for them are tried first */
    int64_t sizes[PLAN_MAX_SIZES];
    int n_sizes;
    plan *last; /* the plan of the last run */
    plan *prepared; /* the plan of the last vki_session_prepare or run */
    void **outputs; /* host buffers in each output tensor's dtype, per io_out entry of the last plan */
    size_t *output_bytes;
    int n_output_buffers;
    double last_run_ms;
    bool profiling;
    bool fp16_mode; /* VKI_PRECISION_FP16 */
    atomic_int busy; /* a thread is inside a call that changes the session */
    vki_tensor **bound_outputs; /* per output: the device tensor the run writes it to, or NULL */
    uint64_t binding_generation; /* bumped when a binding changes: plans re-record their copies */
    VkCommandPool io_pool;       /* the session's: plans' input/output copy command buffers */
    double *dispatch_ms; /* per dispatch of the last run's plan, when profiling */
    int n_dispatch_ms;
};

/* A call that changes a session holds it (one thread at a time; src/runtime/session.c). */
vki_status session_enter(vki_session *s, const char *fn);
vki_status session_leave(vki_session *s, vki_status st);
/* "'name' dtype[dims]" of a graph input, for messages. */
void input_signature(const ir_value *v, char *buf, size_t size);

#endif
