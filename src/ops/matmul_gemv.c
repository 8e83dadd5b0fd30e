/* MatMul and Gemm of few rows at memory bandwidth (shaders/matmul_gemv_wide.glsl): a batch-1
 * product reads its weight once, so the kernel reads it 16 bytes an invocation and splits K
 * across workgroups until the GPU is full, the last workgroup of each column block adding the
 * slices. Products it does not take (batched, unaligned, integer, with a residual) keep
 * matmul_gemv (src/ops/matmul_record.c). */
#include "matmul.h"

/* Keep in step with the Push block of shaders/matmul_gemv_wide.glsl. */
typedef struct gemv_push {
    uint32_t M, N, K, sam, sak, sbk, sbn, scm, scn;
    float alpha, beta;
    uint32_t a_base, b_base, y_base;
    uint32_t k_slice;
    float lo, hi;
} gemv_push;

enum {
    GEMV_LOCAL = 256,
    GEMV_SIDE = 32,              /* invocations side by side along B's contiguous dim */
    GEMV_DEEP = GEMV_LOCAL / GEMV_SIDE,
    GEMV_MAX_ROWS = 8,
    GEMV_SLICE_ALONG_N = 64,     /* K's shortest slice where B's columns are contiguous */
    GEMV_SLICE_ALONG_K = 512,    /* and where its rows are (runs of 16 bytes per invocation) */
    GEMV_BLOCKS_PER_GROUP = 4,   /* workgroups aimed for: this many times VKINFER_MM_BUSY_GROUPS */
};

static bool multiple(int64_t v, int64_t of) { return v % of == 0; }

/* Whether the kernel reads p's operands 16 bytes at a time in its storage (run elements): B's
 * columns contiguous (sbn 1) with N and the row stride whole runs, or its rows (sbk 1) with K,
 * the column stride and A's rows whole runs, A read along k. */
static bool runs_aligned(const mm_problem *p, int64_t run, bool *b_k_contig)
{
    if (!multiple(p->b0, run)) return false;
    if (p->sbn == 1 && p->N > 1 && multiple(p->N, run) && multiple(p->sbk, run) && p->sbk >= p->N) {
        *b_k_contig = false;
        return true;
    }
    if (p->sbk == 1 && p->K > 1 && multiple(p->K, run) && multiple(p->sbn, run) && p->sak == 1 &&
        multiple(p->sam, run) && multiple(p->a0, run)) {
        *b_k_contig = true;
        return true;
    }
    return false;
}

vki_status mm_record_gemv_wide(op_ctx *c, const mm_problem *p, bool *taken)
{
    *taken = false;
    gpu_storage st = mm_storage(c, p);
    const plan_value *y = op_value(c, p->y_value);
    const VkPhysicalDeviceLimits *lim = &c->vk->caps.props.limits;
    if (!c->vk->opts.mm_gemv_wide || (st == GPU_W32 && mm_cpu_kernels(c))) return VKI_OK;
    /* its workgroups and shared sums (8 KiB): devices of fewer keep matmul_gemv (the Android
     * Baseline allows 128 invocations) */
    if (lim->maxComputeWorkGroupInvocations < GEMV_LOCAL || lim->maxComputeWorkGroupSize[0] < GEMV_LOCAL ||
        lim->maxComputeSharedMemorySize < GEMV_LOCAL * 8 * 4 + 4)
        return VKI_OK;
    if (p->M < 1 || p->M > GEMV_MAX_ROWS || p->M > mm_gemv_max_rows(c) || p->nb > 0 || p->has_r || p->y_t ||
        !dtype_is_float(y->dtype) || p->K < 1)
        return VKI_OK;
    int64_t run = 16 / (int64_t)storage_size(st);
    bool b_k_contig;
    if (!runs_aligned(p, run, &b_k_contig)) return VKI_OK;
    /* A, B, C and Y each bound whole, their elements indexed in 32 bits */
    uint64_t range = op_max_binding_bytes(c), elem = storage_size(st);
    int64_t bound[4] = {op_bound_numel(c, p->a_value), op_bound_numel(c, p->b_value),
                        p->has_c ? op_bound_numel(c, p->c_value) : 0, p->M * p->N};
    for (int i = 0; i < 4; i++)
        if ((uint64_t)bound[i] * elem > range || bound[i] > UINT32_MAX) return VKI_OK;

    /* column blocks, then K's slices until the workgroups fill the GPU (mm_busy_groups's count
     * GEMV_BLOCKS_PER_GROUP times) */
    int64_t cols = b_k_contig ? GEMV_DEEP : GEMV_SIDE * run;
    int64_t blocks = (p->N + cols - 1) / cols;
    if (blocks > 65535) return VKI_OK;
    int64_t min_slice = b_k_contig ? GEMV_SLICE_ALONG_K : GEMV_SLICE_ALONG_N;
    int64_t want = GEMV_BLOCKS_PER_GROUP * c->vk->opts.mm_busy_groups;
    int64_t slices = (want + blocks - 1) / blocks, max_slices = (p->K + min_slice - 1) / min_slice;
    if (slices > max_slices) slices = max_slices;
    if (slices > 65535) slices = 65535;
    int64_t k_slice = (p->K + slices - 1) / slices;
    k_slice = (k_slice + run - 1) / run * run; /* runs of k stay whole (b_k_contig) */
    slices = (p->K + k_slice - 1) / k_slice;
    if (slices * p->M * p->N > UINT32_MAX) return VKI_OK; /* the slices' sums, indexed in 32 bits */

    float lo = p->lo, hi = p->hi;
    uint32_t act = op_act_code(p->clamp, lo, hi);
    uint32_t spec[6] = {GEMV_LOCAL, op_dtype_code(y->dtype), (uint32_t)p->M, b_k_contig, p->has_c, act};
    gemv_push push = {
        .M = (uint32_t)p->M, .N = (uint32_t)p->N, .K = (uint32_t)p->K, .sam = (uint32_t)p->sam,
        .sak = (uint32_t)p->sak, .sbk = (uint32_t)p->sbk, .sbn = (uint32_t)p->sbn, .scm = (uint32_t)p->scm,
        .scn = (uint32_t)p->scn, .alpha = p->alpha, .beta = p->beta, .a_base = (uint32_t)p->a0,
        .b_base = (uint32_t)p->b0, .y_base = 0, .k_slice = (uint32_t)k_slice, .lo = lo, .hi = hi,
    };
    /* without C, binding 2 repeats A: the kernel never reads it */
    int values[6] = {p->a_value, p->b_value, p->has_c ? p->c_value : p->a_value, p->y_value, -1, -1};
    gpu_storage stores[6] = {st, st, st, st, GPU_W32, GPU_W32};
    int n_values = 4;
    const char *shader = op_variant(c, "matmul_gemv_wide", st);
    if (slices > 1) { /* each slice's sums, and a counter per column block */
        VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, slices * p->M * p->N, &values[4]));
        if (!op_temp_state(c, VKI_DTYPE_INT32, blocks, &values[5]))
            return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        n_values = 6;
        shader = op_variant(c, "matmul_gemv_wide_fin", st);
    }
    VKI_TRY(op_dispatch_stored(c, shader, spec, 6, &push, sizeof push, values, NULL, stores, n_values,
                               (uint32_t)blocks, (uint32_t)slices, 1));
    op_note_flops(c, mm_flops(p, 1));
    *taken = true;
    return VKI_OK;
}
