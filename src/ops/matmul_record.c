/* The kernel a MatMul/Gemm product (mm_problem) runs on, and its dispatches. On CPU Vulkan
 * devices (lavapipe) float32 products take the register-blocked kernels of matmul_cpu.c.
 * Elsewhere fp16 products take tensor cores where the device has cooperative matrices
 * (matmul_coopmat.c), products of a few rows a GEMV-like shader (shaders/matmul_gemv.glsl),
 * float32 ones of at least 64 rows and columns matmul_sgemm (shaders/matmul_sgemm.glsl), the
 * rest a shared-memory tiled one (shaders/matmul_tiled.glsl), with smaller tiles and K split
 * over workgroups when the tiles alone would leave the GPU idle. */
#include "binary.h"
#include "matmul.h"
#include "matmul_coopmat.h"
#include "movement.h"

#include <math.h>
#include <string.h>

/* Workgroups that keep a large GPU busy (an H200 has 132 multiprocessors, VKINFER_MM_BUSY_GROUPS
 * 256 by default): 128-tiles where there are that many of them (discrete GPUs), and fewer tiles
 * than MM_SPLIT_BELOW split K (MM_SPLIT_BELOW_SCALAR for the scalar kernels: measured on the H200,
 * bench/tuning/tile_sweep.py --dtype float32 --env VKINFER_MM_SPLIT_BELOW, 128 -> 200 took ViT-B's
 * [197,768]x[768,2304] from 0.071 to 0.058 ms, [197,768]x[768,3072] 0.072 -> 0.059 and BERT's
 * [1024,768]x[768,768] 0.073 -> 0.062; the tensor-core kernels lost on the last, 0.019 -> 0.025).
 * Slices of K are at least MM_MIN_K_SLICE long on GPUs: batch-1 CNNs' products are small
 * (mobilenet_v2's [64,384]x[384,196]: 4 tiles that each walked all of K), and slices of 32 instead
 * of 256 took whole models on the H200 (bench/tuning/env_sweep.sh, VKINFER_MM_MIN_K_SLICE
 * 256/128/64/32, median ms): mobilenet_v2 0.747 -> 0.513, efficientnet_b0 1.97 -> 1.31,
 * convnext_tiny 2.03 -> 1.66, resnet18 0.80 -> 0.60, vit_b_16 3.59 -> 3.46, the BERT-base encoder
 * 2.54 -> 2.31. CPU devices keep MM_MIN_K_SLICE_CPU (each slice is one more pass over Y there). */
enum { MM_SPLIT_BELOW = 128, MM_SPLIT_BELOW_SCALAR = 200, MM_MIN_K_SLICE = 32,
       MM_MIN_K_SLICE_CPU = 256, MM_MIN_SPLIT_K_SCALAR = 128 };

/* Column blocks of a constant B larger than one binding, at most (each takes 3 plan values). */
#define MM_MAX_COLUMN_BLOCKS 16

/* Keep in step with the Push block of both shaders. */
typedef struct mm_push {
    uint32_t M, N, K, sam, sak, sbk, sbn, scm, scn;
    float alpha, beta;
    uint32_t bd1, bd2, sa0, sa1, sa2, sb0, sb1, sb2;
    uint32_t a_base, b_base, y_base, batch_base;
    uint32_t k_slice, z_count; /* split K only */
    float lo, hi;              /* a fused Relu/Clip (op_fuse_clamp) */
} mm_push;

int64_t mm_batch_count(const mm_problem *p, int from)
{
    int64_t n = 1;
    for (int d = from; d < p->nb; d++) n *= p->bdims[d];
    return n;
}

/* Element ranges that batches [z0, z0 + count) of one outer index touch in A, B and Y, as
 * windows aligned for binding; false if one of them is larger than a binding may be. The
 * shaders index from a_base/b_base/y_base, which the caller moves to the windows' starts
 * (unsigned wrap-around keeps the sums right). */
static bool batch_windows(op_ctx *c, const mm_problem *p, const int64_t *bd, const int64_t *sa, const int64_t *sb,
                          const int64_t base[3], int64_t z0, int64_t count, uint64_t elem, op_window win[3])
{
    int64_t lo[3] = {INT64_MAX, INT64_MAX, INT64_MAX}, hi[3] = {0, 0, 0};
    int64_t a_span = (p->M - 1) * p->sam + (p->K - 1) * p->sak, b_span = (p->K - 1) * p->sbk + (p->N - 1) * p->sbn;
    for (int64_t z = z0; z < z0 + count; z++) {
        int64_t i2 = z % bd[2], i1 = (z / bd[2]) % bd[1], i0 = z / (bd[2] * bd[1]);
        int64_t off[3] = {base[0] + i0 * sa[0] + i1 * sa[1] + i2 * sa[2], base[1] + i0 * sb[0] + i1 * sb[1] + i2 * sb[2],
                          base[2] + z * p->M * p->N};
        int64_t span[3] = {a_span > 0 ? a_span : 0, b_span > 0 ? b_span : 0, p->M * p->N - 1};
        for (int k = 0; k < 3; k++) {
            if (off[k] < lo[k]) lo[k] = off[k];
            if (off[k] + span[k] > hi[k]) hi[k] = off[k] + span[k];
        }
    }
    uint64_t align = op_binding_alignment(c), range = op_max_binding_bytes(c);
    for (int k = 0; k < 3; k++) {
        uint64_t start = (uint64_t)lo[k] * elem / align * align, end = (uint64_t)(hi[k] + 1) * elem;
        win[k] = (op_window){start, end - start};
        if (end - start > range) return false;
    }
    return true;
}

/* Whether A and B are read along a contiguous axis whose extent, like every other stride of
 * A, B and Y and every batch offset, is a multiple of 8 halves: 16-byte runs that
 * matmul_coopmat_f16_aligned loads as one uvec4 each. */
static bool rows_of_8(const mm_problem *p)
{
    bool a_ok = (p->sak == 1 && p->sam % 8 == 0 && p->K % 8 == 0) || (p->sam == 1 && p->sak % 8 == 0 && p->M % 8 == 0);
    bool b_ok = (p->sbk == 1 && p->sbn % 8 == 0 && p->K % 8 == 0) || (p->sbn == 1 && p->sbk % 8 == 0 && p->N % 8 == 0);
    if (!a_ok || !b_ok || p->N % 8) return false;
    for (int d = 0; d < p->nb; d++)
        if (p->sa[d] % 8 || p->sb[d] % 8) return false;
    return true;
}

/* Which operands start every row and batch at a multiple of 8 halves (16 bytes): bit 0 A,
 * bit 1 B (their strides and batch offsets), bit 2 Y (N). matmul_coopmat2_f16 then tells its
 * compiler so, which lets it load 16 bytes at a time (measured on the H200, 4096-cube: 242
 * TFLOP/s aligned, 64 not). */
static uint32_t aligned_operands(const mm_problem *p)
{
    bool a = (p->sak == 1 && p->sam % 8 == 0) || (p->sam == 1 && p->sak % 8 == 0);
    bool b = (p->sbk == 1 && p->sbn % 8 == 0) || (p->sbn == 1 && p->sbk % 8 == 0);
    for (int d = 0; d < p->nb; d++) {
        a = a && p->sa[d] % 8 == 0;
        b = b && p->sb[d] % 8 == 0;
    }
    return (uint32_t)a | (uint32_t)b << 1 | (uint32_t)(p->N % 8 == 0) << 2;
}

/* matmul_sgemm's tiles: BM x BN of Y per workgroup, BK of K a step, TM x TN sums an invocation
 * (so (BM / TM) x (BN / TN) invocations a workgroup, at most MM_SGEMM_LOCAL). */
enum { MM_SGEMM_LOCAL = 256 };
typedef struct mm_sgemm_tiles {
    uint32_t bm, bn, bk, tm, tn;
} mm_sgemm_tiles;

static uint32_t sgemm_local(const mm_sgemm_tiles *t)
{
    return (t->bm / t->tm) * (t->bn / t->tn);
}

/* How many workgroups fill the GPU for the scalar kernels' tile choice and split K's slice
 * count: VKINFER_MM_BUSY_GROUPS, 256 by default (tuning on a new device: a GPU's SM or
 * compute-unit count times the workgroups each holds). */
static int64_t mm_busy_groups(const op_ctx *c) { return c->vk->opts.mm_busy_groups; }

/* Whether float32 p runs matmul_sgemm, and on which tiles. By default on GPUs, for products
 * of one batch (z_count 1): measured on the H200 (bench/tuning/gpu_sgemm_check.sh), against
 * matmul_tiled, the 4096 cube 4.19 -> 3.66 ms (37.6 TFLOP/s), BERT-base's [1024,768] x
 * [768,3072] 0.219 -> 0.160 ms, the encoder at batch 8 9.9 -> 9.1 ms, vit_b_16 3.45 -> 3.37.
 * Batched products (convolutions at batch 32, the 16 of a Winograd layer) of 128 rows or more
 * too: with a bias and a Relu (bench/tuning/tile_sweep.py --batch 32 --epilogue bias_relu) W [M,K] x
 * X [32,K,N] of 128x3136x256 0.301 -> 0.289 ms, 256x784x512 0.297 -> 0.279, 512x196x1024 0.345
 * -> 0.253, but 64x3136x256 0.162 -> 0.191 (so 64-row ones keep matmul_tiled); resnet50 at
 * batch 32 13.2 -> 12.5 ms with every batched product on sgemm. (Before the activation was
 * compiled in, its 128 x 128 tiles ran resnet50's layers with a fused Relu 11-22x slower.)
 * VKINFER_MM_SGEMM=0 keeps matmul_tiled, =1 takes sgemm for every batched product;
 * VKINFER_MATMUL_KERNELS=sgemm takes it on any device
 * (CI on lavapipe checks it so). Products of at least 64 rows and columns; the largest tiles
 * that still give the busy-groups count of workgroups (64 x 64 otherwise, where split K may
 * follow),
 * never taller or wider than the product rounded up to 64 (half a 128 tile would idle), with
 * any epilogue (its activation is compiled in). VKINFER_SGEMM_TILE=BMxBN[xTMxTN] (TM x TN sums
 * an invocation, 4 or 8 each; 16 x 16 invocations where not given) and VKINFER_SGEMM_BK (8 or
 * 16) override, for tuning. */
static bool sgemm_choose(const op_ctx *c, const mm_problem *p, int64_t z_count, mm_sgemm_tiles *t)
{
    const vki_options *o = &c->vk->opts;
    bool forced = o->matmul_kernels == OPT_KERNELS_SGEMM;
    bool gpu = c->vk->caps.props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU && o->matmul_kernels != OPT_KERNELS_TILED;
    bool on_all = o->mm_sgemm == 1, off = o->mm_sgemm == 0;
    bool asked = gpu && !off && (on_all || z_count == 1 || p->M >= 128);
    if (!forced && !asked) return false;
    if (p->M < 64 || p->N < 64) return false;
    static const uint32_t shapes[4][2] = {{128, 128}, {64, 128}, {128, 64}, {64, 64}};
    *t = (mm_sgemm_tiles){64, 64, 8, 4, 4};
    bool busy = false;
    int64_t busy_groups = mm_busy_groups(c);
    for (int i = 0; i < 4 && !busy; i++) {
        if (shapes[i][0] > (p->M + 63) / 64 * 64 || shapes[i][1] > (p->N + 63) / 64 * 64) continue;
        int64_t groups = (p->M + shapes[i][0] - 1) / shapes[i][0] * ((p->N + shapes[i][1] - 1) / shapes[i][1]) * z_count;
        if ((busy = groups >= busy_groups)) t->bm = shapes[i][0], t->bn = shapes[i][1];
    }
    /* Too small a product for any tile to fill the GPU (split K follows): one or two 128-row
     * blocks whose K is long against N, or one block of a wide product, take 128 x 128 tiles.
     * Measured on the H200 (bench/tuning/tile_sweep.py --transb, GPU ms, 64 x 64 -> 128 x 128): ViT's
     * 197x768x3072 0.071 -> 0.046, BERT at batch 1's 128x768x3072 0.037 -> 0.033, 128x3072x768
     * 0.043 -> 0.033, 128x2304x768 0.034 -> 0.029; the others keep 64 x 64, where it was as
     * fast or faster: 197x3072x768 0.058 against 0.073, 128x768x768 0.017 against 0.020,
     * 1024x768x3072 0.205 against 0.22. */
    if (!busy && z_count == 1 && p->M > 64 && p->M <= 256 && p->N > 64 &&
        (p->K >= 4 * p->N || (p->M <= 128 && p->N >= 2304)))
        t->bm = 128, t->bn = 128;
    t->tm = t->bm / 16, t->tn = t->bn / 16; /* 16 x 16 invocations */
    /* Larger register blocks on fewer invocations where the product keeps the GPU busy anyway:
     * 64 x 128 and 128 x 64 tiles with 8 x 8 sums on 128 invocations (not 4 x 8 on 256), and a
     * product of 512+ rows too small for them with 4 x 8 sums on 64 x 64 tiles (128
     * invocations, split K after) while it still has half the busy-groups count. Measured on
     * the H200 (bench/tuning/gpu_sgemm_blocks.sh, GPU ms, 16 x 16 invocations -> these): BERT-base at
     * batch 8's 1024x3072x768 0.157 -> 0.145, 1024x2304x768 0.154 -> 0.142, 1024x768x3072 0.191
     * -> 0.180, 1024x768x768 0.057 -> 0.053; ViT's 197-row products stay on 256 invocations,
     * where 4 x 8 on 64 x 64 lost (197x3072x768 0.056 -> 0.059, 197x2304x768 0.054 -> 0.057).
     * The encoder at batch 8: 8.32 -> 8.00 ms. Unbatched products only: with resnet50 at batch
     * 32's batched convolution products on them too, 12.31-12.50 -> 12.64 ms.
     * An activation beyond a clamp on 8 x 8 sums goes through shared memory (EPI_SHARED in
     * shaders/matmul_sgemm.glsl): inline it ran 15x slower, so until session 15 such products
     * kept 4 x 8 sums. bench/tuning/sgemm_act_check.py on the H200, Linear(768, 3072) + erf GELU, GPU
     * ms: 1024 rows on 64 x 128 tiles, 4 x 8 inline 0.171, 8 x 8 inline 2.39, 8 x 8 through
     * shared memory 0.150 (a Relu 0.146); 4096 rows on 128 x 128 tiles 8.45 -> 0.616, on 64 x
     * 128 tiles of 8 x 8 0.578. VKINFER_SGEMM_BLOCKS=0 keeps 16 x 16 invocations everywhere. */
    if (o->sgemm_blocks) {
        int64_t small_groups = (p->M + 63) / 64 * ((p->N + 63) / 64);
        if (busy && z_count == 1 && t->bm != t->bn) t->tm = 8, t->tn = 8;
        else if (!busy && z_count == 1 && t->bm == 64 && t->bn == 64 && p->M >= 512 && small_groups >= busy_groups / 2)
            t->tn = 8;
    }
    const opt_dims *tile = &o->sgemm_tile; /* its values checked when the context was created */
    if (tile->n >= 2) t->bm = tile->v[0], t->bn = tile->v[1], t->tm = tile->v[0] / 16, t->tn = tile->v[1] / 16;
    if (tile->n == 4) t->tm = tile->v[2], t->tn = tile->v[3];
    t->bk = (uint32_t)o->sgemm_bk;
    /* two shared buffers of BK x (BM + BN) floats; a device with smaller workgroups or less
     * shared memory (the Android Baseline) keeps matmul_tiled */
    const VkPhysicalDeviceLimits *lim = &c->vk->caps.props.limits;
    uint32_t slab = op_act_code(p->clamp, p->lo, p->hi) >= 2 && t->tm * t->tn >= 64 ? (t->bm / t->tm) * t->bn * 4 : 0; /* EPI_SHARED's */
    return lim->maxComputeWorkGroupInvocations >= sgemm_local(t) && lim->maxComputeWorkGroupSize[0] >= sgemm_local(t) &&
           lim->maxComputeSharedMemorySize >= 2 * t->bk * (t->bm + t->bn) * 4 + slab;
}

/* matmul_sgemm's VEC: bit 0 where A's runs along its contiguous axis start on 16 bytes (that
 * axis's stride 1, the other stride and every batch stride multiples of 4 floats), bit 1 for B,
 * bit 2 where Y's rows do (N a multiple of 4). Bases are 0 here: the kernel is taken only on
 * operands bound whole, one product of all batches. */
static uint32_t sgemm_vec(const mm_problem *p)
{
    bool a = p->a0 % 4 == 0 && (p->sak == 1 && p->K > 1 ? p->sam % 4 == 0 : p->sam == 1 && p->sak % 4 == 0);
    bool b = p->b0 % 4 == 0 && (p->sbk == 1 && p->K > 1 ? p->sbn % 4 == 0 : p->sbn == 1 && p->sbk % 4 == 0);
    for (int d = 0; d < p->nb; d++) {
        a = a && p->sa[d] % 4 == 0;
        b = b && p->sb[d] % 4 == 0;
    }
    return (uint32_t)a | (uint32_t)b << 1 | (uint32_t)(p->N % 4 == 0) << 2;
}

double mm_flops(const mm_problem *p, int64_t batches)
{
    return 2.0 * (double)p->M * (double)p->N * (double)p->K * (double)batches;
}

/* Whether a split-K product on matmul_sgemm finishes in its own dispatch (the *_fin shaders:
 * each tile's last workgroup adds the slices and stores Y) rather than in a reduce pass: a
 * dispatch and a barrier fewer per split product (vit_b_16 at batch 1 has 73). Needs two more
 * storage buffers (six, seven with R); an activation beyond a clamp on 8 x 8 sums keeps the
 * reduce pass (sgemm applies it through shared memory, which split K does not take). The sums
 * are added in slice order, as the reduce pass adds them, so results do not depend on which
 * workgroup ends last (run to run the same bits); against the reduce pass they may differ in
 * the last bit, where the compiler contracts alpha * sum + beta * c into fma otherwise (a
 * [197,768] x [768,200] product with bias, residual and Relu on lavapipe: 15% of elements, by
 * at most 4.8e-7). Off by default, VKINFER_SPLITK_FINISH=1 turns it on: on the H200 it was
 * slower than the reduce pass everywhere (vit_b_16 batch 1 4.86 ms with 140 dispatches against
 * 3.03 ms with 201, BERT-base batch 1 5.74 against 1.97, resnet18 1.68 against 0.66): the last
 * workgroup's serial sum of the slices through coherent loads costs more than the dispatch it
 * saves. */
static bool sgemm_finish_ok(const op_ctx *c, const mm_problem *p, const mm_sgemm_tiles *t, uint32_t act)
{
    if (!c->vk->opts.splitk_finish) return false;
    if (c->vk->caps.props.limits.maxPerStageDescriptorStorageBuffers < (p->has_r ? 7u : 6u)) return false;
    return !(act >= 2 && t->tm * t->tn >= 64);
}

gpu_storage mm_storage(op_ctx *c, const mm_problem *p)
{
    /* without C, binding 2 repeats A: the shaders never read it */
    int values[5] = {p->a_value, p->b_value, p->has_c ? p->c_value : p->a_value, p->y_value,
                     p->has_r ? p->r_value : p->a_value};
    return dtype_is_float(op_value(c, p->y_value)->dtype) ? op_half_storage(c, values, 5) : GPU_W32;
}

vki_status mm_record_then_add(op_ctx *c, const mm_problem *p)
{
    plan_value *y = op_value(c, p->y_value);
    int64_t n = shape_numel(y->dims, y->rank);
    gpu_storage st = mm_storage(c, p);
    int t;
    VKI_TRY(op_temp(c, y->dtype, n, &t));
    op_value(c, t)->storage = st;
    mm_problem q = *p;
    q.has_r = false;
    q.clamp = false;
    q.lo = -INFINITY, q.hi = INFINITY;
    q.y_value = t;
    VKI_TRY(mm_record(c, &q));
    int64_t dims[1] = {n}, strides[1] = {1};
    return binary_add_strided(c, t, strides, p->r_value, p->y_value, dims, 1, st, p->clamp, p->lo, p->hi);
}

/* Products of at most this many rows take matmul_gemv on GPUs (VKINFER_MM_GEMV_ROWS, 16 by
 * default; measured on the H200: see docs/history/benchmarks-notebook.md) */
static int64_t gemv_max_rows(const op_ctx *c) { return c->vk->opts.mm_gemv_rows; }
int64_t mm_gemv_max_rows(const op_ctx *c) { return gemv_max_rows(c); }

/* A 2-D product whose B is larger than one binding (a classifier head: VGG's 25088 x 4096
 * weight is 411 MB, lavapipe binds 128 MiB) and a plan-time constant: B's columns are cut at
 * plan time into blocks that each fit (constants of their own, bound whole), each block's
 * product goes to a scratch [M, w] and is copied into its columns of Y. A, Y and C (a plan-time
 * bias, or none) must fit one binding. *taken false: not this case. */
static vki_status record_column_blocks(op_ctx *c, const mm_problem *p, bool *taken)
{
    *taken = false;
    plan_value *a = op_value(c, p->a_value), *b = op_value(c, p->b_value), *y = op_value(c, p->y_value);
    uint64_t range = op_max_binding_bytes(c), word = 4; /* sizes in 32-bit words: enough for every storage */
    int64_t b_numel = shape_numel(b->dims, b->rank);
    if (p->nb || !b->host || (uint64_t)b_numel * word <= range || p->K < 1 || p->N < 2 || p->a0) return VKI_OK;
    if ((uint64_t)shape_numel(a->dims, a->rank) * word > range || (uint64_t)shape_numel(y->dims, y->rank) * word > range)
        return VKI_OK;
    plan_value *cv = p->has_c ? op_value(c, p->c_value) : NULL;
    if (cv && (!cv->host || p->scm != 0)) return VKI_OK; /* a bias (or scalar) known at plan time only */
    /* columns per block: a quarter to spare for the kernels' own padding of a block (the CPU
     * MatMul packs B in blocks of 16 columns and K in 4s), whole 16s where there are any */
    int64_t w = (int64_t)(range / word / (uint64_t)(p->K + 3)) * 3 / 4;
    if (w >= 16) w = w / 16 * 16;
    if (w < 1) return VKI_OK;
    int64_t n_blocks = (p->N + w - 1) / w;
    if (n_blocks > MM_MAX_COLUMN_BLOCKS)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "B (%lld x %lld, a constant) would take %lld column blocks of one binding "
                        "each (maxStorageBufferRange %llu bytes); at most %d", (long long)p->K, (long long)p->N,
                        (long long)n_blocks, (unsigned long long)range, MM_MAX_COLUMN_BLOCKS);
    size_t elem = vki_dtype_size(b->dtype), celem = cv ? vki_dtype_size(cv->dtype) : 0;
    const uint8_t *src = b->host;
    *taken = true;
    if (p->has_r) return mm_record_then_add(c, p); /* its blocks' scratch columns are not Y's layout */
    for (int64_t n0 = 0; n0 < p->N; n0 += w) {
        int64_t cols = p->N - n0 < w ? p->N - n0 : w;
        int bk, yk, ck = -1;
        uint8_t *dst = op_temp_const(c, b->dtype, p->K * cols, &bk);
        if (!dst) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "cutting B into column blocks: %s", vki_last_error());
        op_value(c, bk)->rank = 2;
        op_value(c, bk)->dims[0] = p->K;
        op_value(c, bk)->dims[1] = cols;
        for (int64_t k = 0; k < p->K; k++)
            for (int64_t j = 0; j < cols; j++)
                memcpy(dst + (size_t)(k * cols + j) * elem, src + (size_t)(k * p->sbk + (n0 + j) * p->sbn) * elem, elem);
        if (cv) {
            int64_t cn = p->scn ? cols : 1;
            uint8_t *cd = op_temp_const(c, cv->dtype, cn, &ck);
            if (!cd) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "cutting C into column blocks: %s", vki_last_error());
            memcpy(cd, (const uint8_t *)cv->host + (size_t)(p->scn ? n0 : 0) * celem, (size_t)cn * celem);
        }
        VKI_TRY(op_temp(c, y->dtype, p->M * cols, &yk));
        op_value(c, yk)->storage = op_storage(c, p->y_value);
        mm_problem q = *p;
        q.b_value = bk;
        q.N = cols;
        q.sbk = cols;
        q.sbn = 1;
        q.y_value = yk;
        if (cv) q.c_value = ck;
        VKI_TRY(mm_record(c, &q));
        strided_copy s = {.rank = 2, .dims = {p->M, cols}, .in_strides = {cols, 1}, .out_strides = {p->N, 1}, .out_base = n0};
        VKI_TRY(copy_values(c, yk, p->y_value, &s, op_storage(c, p->y_value)));
    }
    return VKI_OK;
}

/* Records the dispatches of one product. Up to three batch dims go to the shader (z is
 * their flattened index); further outer dims, and z beyond the grid limit, are looped here.
 * Operands larger than one binding are bound as windows of consecutive batches. */
vki_status mm_record(op_ctx *c, const mm_problem *p)
{
    plan_value *a = op_value(c, p->a_value), *b = op_value(c, p->b_value), *y = op_value(c, p->y_value);
    int64_t a_numel = shape_numel(a->dims, a->rank), b_numel = shape_numel(b->dims, b->rank);
    int64_t y_numel = shape_numel(y->dims, y->rank);
    if (a_numel > UINT32_MAX || b_numel > UINT32_MAX || y_numel > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "operands of more than 2^32 elements are not supported");
    if (y_numel == 0) return VKI_OK;
    bool blocks;
    VKI_TRY(record_column_blocks(c, p, &blocks));
    if (blocks) return VKI_OK;
    int64_t gemv_rows = gemv_max_rows(c);
    /* one column ([M,K] x [K,1]: a squeeze-excitation's 1x1 convolutions, a matrix times a
     * vector): Y^T = B^T A^T is one row, and its elements lie as Y's do */
    mm_problem transposed;
    if (p->N == 1 && p->M > gemv_rows && !(mm_storage(c, p) == GPU_W32 && mm_cpu_kernels(c))) {
        transposed = *p;
        transposed.a_value = p->b_value, transposed.b_value = p->a_value;
        transposed.M = 1, transposed.N = p->M;
        transposed.sam = p->sbn, transposed.sak = p->sbk, transposed.sbk = p->sak, transposed.sbn = p->sam;
        transposed.a0 = p->b0, transposed.b0 = p->a0;
        transposed.scm = p->scn, transposed.scn = p->scm;
        memcpy(transposed.sa, p->sb, sizeof transposed.sa);
        memcpy(transposed.sb, p->sa, sizeof transposed.sb);
        p = &transposed;
        a = op_value(c, p->a_value), b = op_value(c, p->b_value);
    }
    bool wide;
    VKI_TRY(mm_record_gemv_wide(c, p, &wide));
    if (wide) return VKI_OK;
    bool gemv = p->M <= gemv_rows;
    bool b_k_contig = p->sbk == 1 && p->K > 1;
    /* GEMV: columns per workgroup, the rest of the 128 invocations split K */
    uint32_t gemv_cols = b_k_contig ? 4 : 8;
    int64_t batches = mm_batch_count(p, 0);
    /* 64 tiles (split K below where they are few); 128 for one large product on a discrete
     * GPU. Measured on the H200 (bench/tuning/tile_sweep.py --dtype float32): 32 tiles, once taken
     * where 64 ones were few, lost everywhere (BERT-base's [1024,768]x[768,3072] 0.354 against
     * 0.275 ms, ViT's [197,3072]x[3072,768] 0.172 against 0.071 with split K); 128 tiles take
     * the 4096 cube from 4.96 to 4.22 ms (32.6 TFLOP/s) but made resnet50's batched
     * convolution products 6x slower (float32 at batch 32: 16.7 -> 105.8 ms). Words only: the
     * 16-bit variants' 128 tiles ran the fp16 4096 cube (tensor cores off) in 60 ms.
     * MM_EPILOGUE_TILES: not for a product with C or a fused activation. The 4096 cube with a
     * bias and a Relu (bench/tuning/tile_sweep.py --epilogue bias_relu, VKINFER_MM_SGEMM=0) takes 59
     * ms on 128 tiles against 4.96 on 64 ones and 4.2 on 128 without the epilogue, with the
     * activation decoded at run time and, measured again, compiled in (fused_act.glsl's ACT):
     * so it is not the activation's code here (it was for sgemm, whose 128 x 128 tiles ran the
     * same product in 59 ms decoded and 3.73 compiled in) but this kernel's epilogue with 128
     * sums an invocation. GPUs run such products on sgemm anyway (sgemm_choose). */
    int64_t tile = batches == 1 && !p->has_c && !p->clamp && p->M >= 1024 && p->N >= 1024 &&
                   (p->M + 127) / 128 * ((p->N + 127) / 128) >= mm_busy_groups(c) && mm_storage(c, p) == GPU_W32 &&
                   c->vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ? 128 : 64;
    if (c->vk->opts.tiled_tile != OPT_AUTO) tile = c->vk->opts.tiled_tile; /* tuning on a new device */
    int64_t gx = gemv ? (p->N + gemv_cols - 1) / gemv_cols : (p->N + tile - 1) / tile;
    int64_t gy = gemv ? 1 : (p->M + tile - 1) / tile;
    if (gx > 65535 || gy > 65535)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "M=%lld, N=%lld exceed the grid limit of 65535 workgroups per axis",
                        (long long)p->M, (long long)p->N);

    bool is_int = !dtype_is_float(y->dtype);
    uint32_t out_dt = op_dtype_code(y->dtype);
    bool clamp = p->clamp;
    float lo = p->lo, hi = p->hi;
    /* the activation compiled into the kernels (fused_act.glsl's ACT), not decoded per element */
    uint32_t act = op_act_code(clamp, lo, hi);
    uint32_t spec_tiled[22] = {MM_LOCAL, out_dt, is_int, p->sak == 1 && p->K > 1, b_k_contig, p->has_c, (uint32_t)tile, 0, act};
    uint32_t spec_gemv[8] = {MM_LOCAL, out_dt, is_int, (uint32_t)(p->M ? p->M : 1), gemv_cols, b_k_contig, p->has_c, act};
    /* without C, binding 2 repeats A: the shaders never read it */
    /* binding 4: R, for the *_res kernels */
    int values[5] = {p->a_value, p->b_value, p->has_c ? p->c_value : p->a_value, p->y_value,
                     p->has_r ? p->r_value : p->a_value};
    /* float operands all held as halves run the kernels' 16-bit variants on them as they are;
     * windows and sizes below are in elements of that storage */
    gpu_storage st = mm_storage(c, p);
    gpu_storage stores[5] = {st, st, st, st, st};
    uint64_t elem = storage_size(st);
    /* CPU devices: the register-blocked kernels, which read 32-bit words (halves take the
     * 16-bit variants below, so that their weights stay halves) */
    if (st == GPU_W32 && mm_cpu_kernels(c)) {
        bool taken;
        VKI_TRY(mm_record_cpu(c, p, &taken));
        if (taken) return VKI_OK;
    }
    if (p->y_t) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: a transposed Y for a GPU product kernel");

    int inner = p->nb < MM_SHADER_BATCH_DIMS ? p->nb : MM_SHADER_BATCH_DIMS;
    int first_inner = p->nb - inner; /* dims before this one are looped on the host */
    int64_t bd[3] = {1, 1, 1}, sa[3] = {0, 0, 0}, sb[3] = {0, 0, 0};
    for (int i = 0; i < inner; i++) {
        int slot = 3 - inner + i, d = first_inner + i;
        bd[slot] = p->bdims[d];
        sa[slot] = p->sa[d];
        sb[slot] = p->sb[d];
    }
    int64_t z_count = bd[0] * bd[1] * bd[2], outer_count = mm_batch_count(p, 0) / (z_count ? z_count : 1);
    mm_push push = {
        .M = (uint32_t)p->M, .N = (uint32_t)p->N, .K = (uint32_t)p->K, .sam = (uint32_t)p->sam,
        .sak = (uint32_t)p->sak, .sbk = (uint32_t)p->sbk, .sbn = (uint32_t)p->sbn, .scm = (uint32_t)p->scm,
        .scn = (uint32_t)p->scn, .alpha = p->alpha, .beta = p->beta, .bd1 = (uint32_t)bd[1], .bd2 = (uint32_t)bd[2],
        .sa0 = (uint32_t)sa[0], .sa1 = (uint32_t)sa[1], .sa2 = (uint32_t)sa[2],
        .sb0 = (uint32_t)sb[0], .sb1 = (uint32_t)sb[1], .sb2 = (uint32_t)sb[2], .lo = lo, .hi = hi,
    };
    uint64_t range = op_max_binding_bytes(c);
    plan_value *cv = p->has_c ? op_value(c, p->c_value) : NULL;
    /* (a strided Slice's view is bound from its root's start: src/ops/movement.c makes one only
     * where the root fits one binding) */
    bool fits = (uint64_t)op_bound_numel(c, p->a_value) * elem <= range &&
                (uint64_t)op_bound_numel(c, p->b_value) * elem <= range && (uint64_t)y_numel * elem <= range;
    if ((p->a0 || p->b0) && !fits)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: a strided Slice view of more than one binding reached a product");
    if (cv && (uint64_t)shape_numel(cv->dims, cv->rank) * elem > range)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "C is larger than the device's maxStorageBufferRange (%llu bytes); "
                        "Gemm does not split its work into windows yet", (unsigned long long)range);
    /* fp16 products on tensor cores where the device has them: a matmul_coopmat_f16 kernel
     * takes matmul_tiled's place, with its own tiles, local size, storages and spec constants
     * 9.., on operands bound whole (windows would be in two element sizes) */
    const char *tiled = op_variant(c, "matmul_tiled", st);
    uint32_t n_spec_tiled = 9;
    mm_coopmat_kernel cm;
    bool on_coopmat = false;
    if (fits && !is_int && !gemv && !p->a0 && !p->b0 &&
        mm_coopmat_choose(c, values, p->M, p->N, p->K, batches, rows_of_8(p), aligned_operands(p), &cm, stores)) {
        on_coopmat = true;
        tiled = cm.shader;
        n_spec_tiled = cm.n_spec;
        spec_tiled[0] = cm.local;
        spec_tiled[6] = cm.tile_n;
        /* spec 8 keeps act: the tensor-core kernels compile the activation in (ACT) as the others do */
        memcpy(&spec_tiled[9], cm.spec_tail, ((cm.n_spec < 15 ? cm.n_spec : 15) - 9) * sizeof spec_tiled[0]);
        /* matmul_coopmat2_dims_* (issue 37's candidate, matmul_coopmat.c): the shape as constants */
        if (cm.n_spec > 15) {
            uint32_t dims[7] = {push.M, push.N, push.K, push.sam, push.sak, push.sbk, push.sbn};
            memcpy(&spec_tiled[15], dims, sizeof dims);
        }
        gx = (p->N + cm.tile_n - 1) / cm.tile_n;
        gy = (p->M + cm.tile_m - 1) / cm.tile_m;
    }
    mm_sgemm_tiles sg = {0};
    bool on_sgemm = !on_coopmat && fits && !is_int && !gemv && st == GPU_W32 && sgemm_choose(c, p, z_count, &sg);
    if (on_sgemm) {
        tiled = "matmul_sgemm";
        n_spec_tiled = 15;
        spec_tiled[0] = sgemm_local(&sg);
        spec_tiled[6] = sg.bn;
        spec_tiled[9] = sg.bm;
        spec_tiled[10] = sg.bk;
        spec_tiled[11] = sgemm_vec(p);
        spec_tiled[12] = sg.tm;
        spec_tiled[13] = sg.tn;
        /* whole blocks and vec4 operands: loads without bounds (split K's slices are whole 16s);
         * VKINFER_SGEMM_EXACT=0 keeps the bounds, for measuring */
        spec_tiled[14] = p->M % sg.bm == 0 && p->N % sg.bn == 0 && p->K % sg.bk == 0 && (spec_tiled[11] & 3) == 3 &&
                         c->vk->opts.sgemm_exact;
        gx = (p->N + sg.bn - 1) / sg.bn;
        gy = (p->M + sg.bm - 1) / sg.bm;
    }
    /* R: the kernels' *_res variants, which bind it fifth (the tensor-core kernels, GEMV and
     * windowed operands do not take it, nor devices with four storage buffers a stage, the
     * Android Baseline's limit) */
    if (p->has_r && (on_coopmat || gemv || !fits || c->vk->caps.props.limits.maxPerStageDescriptorStorageBuffers < 5))
        return mm_record_then_add(c, p);
    const char *tiled_r = !p->has_r ? tiled : on_sgemm ? "matmul_sgemm_res" : op_variant(c, "matmul_tiled_res", st);
    int n_bind = p->has_r ? 5 : 4;
    int64_t groups = gx * gy * z_count;
    int64_t split_below = on_coopmat ? MM_SPLIT_BELOW : MM_SPLIT_BELOW_SCALAR;
    if (c->vk->opts.mm_split_below != OPT_AUTO) split_below = c->vk->opts.mm_split_below; /* tuning on a new device */
    int64_t min_k_slice = c->vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? MM_MIN_K_SLICE_CPU : MM_MIN_K_SLICE;
    if (c->vk->opts.mm_min_k_slice != OPT_AUTO) min_k_slice = c->vk->opts.mm_min_k_slice;
    /* The scalar kernels split no K under MM_MIN_SPLIT_K_SCALAR: a K of 64 walked whole takes
     * less than the reduce pass's dispatch costs. Measured on the H200 (bench/tuning/env_sweep.sh,
     * VKINFER_MM_MIN_SPLIT_K unset (64) / 128 / 256, median ms of two passes, session 19):
     * the transformer policy at batch 8 0.150,0.149 / 0.146,0.147 / 0.151,0.152; vit_b_16
     * 3.121,3.127 / 3.057,3.046 / 3.180,3.150; BERT-base at batch 1 2.014,2.030 / 2.001,2.013 /
     * 2.058,2.030; mobilenet_v2 0.537,0.486 / 0.479,0.496 / 0.542,0.539; efficientnet_b0
     * 0.736,0.743 / 0.746,0.748 / 0.813,0.794. The tensor-core kernels keep splitting from 64:
     * the bfloat16 policy at batch 8 0.141 / 0.166 (its K = 64 products unsplit). */
    int64_t min_split_k = 2 * min_k_slice;
    if (!on_coopmat && min_split_k < MM_MIN_SPLIT_K_SCALAR) min_split_k = MM_MIN_SPLIT_K_SCALAR;
    if (c->vk->opts.mm_min_split_k >= 2 * min_k_slice) min_split_k = c->vk->opts.mm_min_split_k; /* tuning */
    if (fits && !gemv && outer_count == 1 && groups < split_below && p->K >= min_split_k) {
        int64_t slices = (mm_busy_groups(c) + groups - 1) / groups, max_slices = p->K / min_k_slice;
        if (slices > max_slices) slices = max_slices;
        int64_t k_slice = ((p->K + slices - 1) / slices + 15) / 16 * 16;
        slices = (p->K + k_slice - 1) / k_slice;
        if (slices > 1 && z_count * slices <= 65535) {
            int partial;
            VKI_TRY(op_temp(c, is_int ? VKI_DTYPE_INT32 : VKI_DTYPE_FLOAT, slices * y_numel, &partial));
            push.k_slice = (uint32_t)k_slice;
            push.z_count = (uint32_t)z_count;
            push.a_base = (uint32_t)p->a0, push.b_base = (uint32_t)p->b0;
            if (on_sgemm && sgemm_finish_ok(c, p, &sg, act)) {
                /* each tile's last slice adds the slices and stores Y: one dispatch, no reduce
                 * pass; a counter per tile, zeroed with the weights, put back by that workgroup */
                int counters;
                if (!op_temp_state(c, VKI_DTYPE_INT32, gx * gy * z_count, &counters))
                    return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
                spec_tiled[7] = 2;
                int fin_values[7] = {values[0], values[1], values[2], partial, values[4], values[3], counters};
                int fin_n = p->has_r ? 7 : 6;
                if (!p->has_r) fin_values[4] = values[3], fin_values[5] = counters;
                gpu_storage fin_stores[7] = {GPU_W32, GPU_W32, GPU_W32, GPU_W32, GPU_W32, GPU_W32, GPU_W32};
                VKI_TRY(op_dispatch_stored(c, p->has_r ? "matmul_sgemm_res_fin" : "matmul_sgemm_fin", spec_tiled,
                                           n_spec_tiled, &push, sizeof push, fin_values, NULL, fin_stores, fin_n,
                                           (uint32_t)gx, (uint32_t)gy, (uint32_t)(z_count * slices)));
                op_note_flops(c, mm_flops(p, z_count));
                return VKI_OK;
            }
            spec_tiled[7] = 1;
            spec_tiled[8] = 0; /* the reduce pass clamps */
            int split_values[4] = {values[0], values[1], values[2], partial};
            gpu_storage split_stores[4] = {stores[0], stores[1], stores[2], GPU_W32}; /* sums stay fp32 words */
            /* the kernel without R: the reduce pass adds it */
            VKI_TRY(op_dispatch_stored(c, tiled, spec_tiled, n_spec_tiled, &push, sizeof push,
                                       split_values, NULL, split_stores, 4, (uint32_t)gx, (uint32_t)gy,
                                       (uint32_t)(z_count * slices)));
            op_note_flops(c, mm_flops(p, z_count));
            bool ln_taken = false;
            if (!is_int) VKI_TRY(mm_splitk_layer_norm(c, p, partial, slices, values, act, &ln_taken));
            if (ln_taken) return VKI_OK;
            if (!is_int) VKI_TRY(mm_splitk_layer_scale(c, p, partial, slices, z_count, values, act, &ln_taken));
            if (ln_taken) return VKI_OK;
            mm_reduce_push rp = {(uint32_t)y_numel, (uint32_t)slices, (uint32_t)p->M, (uint32_t)p->N, (uint32_t)p->scm,
                                 (uint32_t)p->scn, p->alpha, p->beta, 0, lo, hi, mm_dense_layout(z_count, p->M, p->N)};
            uint32_t spec_reduce[8] = {MM_LOCAL, out_dt, is_int, p->has_c, act, p->has_r, 0, 0};
            int reduce_values[4] = {partial, values[2], values[3], p->has_r ? values[4] : values[2]};
            gpu_storage rs = op_half_storage(c, values + 2, 2), reduce_stores[4] = {GPU_W32, rs, rs, rs};
            uint32_t rgx, rgy;
            op_grid_1d((uint64_t)y_numel, MM_LOCAL, &rgx, &rgy);
            return op_dispatch_stored(c, op_variant(c, "matmul_splitk_reduce", rs), spec_reduce, 8, &rp, sizeof rp,
                                      reduce_values, NULL, reduce_stores, 4, rgx, rgy, 1);
        }
    }
    for (int64_t outer = 0; outer < outer_count; outer++) {
        int64_t a_base = 0, b_base = 0, rest = outer;
        for (int d = first_inner - 1; d >= 0; d--) {
            int64_t i = rest % p->bdims[d];
            rest /= p->bdims[d];
            a_base += i * p->sa[d];
            b_base += i * p->sb[d];
        }
        int64_t base[3] = {p->a0 + a_base, p->b0 + b_base, outer * z_count * p->M * p->N};
        for (int64_t z0 = 0, gz; z0 < z_count; z0 += gz) {
            gz = z_count - z0 < 65535 ? z_count - z0 : 65535;
            op_window win[5] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}};
            if (!fits) { /* halve the batches until each operand's window fits one binding */
                op_window w[3];
                while (!batch_windows(c, p, bd, sa, sb, base, z0, gz, elem, w) && gz > 1) gz = (gz + 1) / 2;
                if (!batch_windows(c, p, bd, sa, sb, base, z0, gz, elem, w))
                    return op_error(c, VKI_ERROR_UNSUPPORTED, "one [%lld x %lld] x [%lld x %lld] product is larger than "
                                    "the device's maxStorageBufferRange (%llu bytes); MatMul splits its work only along "
                                    "batch dims", (long long)p->M, (long long)p->K, (long long)p->K, (long long)p->N,
                                    (unsigned long long)range);
                win[0] = w[0];
                win[1] = w[1];
                win[2] = p->has_c ? (op_window){0, 0} : w[0]; /* without C, binding 2 repeats A */
                win[3] = w[2]; /* (binding 4, R, is never windowed: it is taken only where the operands fit) */
            }
            /* indices are taken from each window's start; unsigned wrap-around keeps them right */
            push.a_base = (uint32_t)(base[0] - (int64_t)(win[0].offset / elem));
            push.b_base = (uint32_t)(base[1] - (int64_t)(win[1].offset / elem));
            push.y_base = (uint32_t)(base[2] - (int64_t)(win[3].offset / elem));
            push.batch_base = (uint32_t)z0;
            if (gemv)
                VKI_TRY(op_dispatch_stored(c, op_variant(c, "matmul_gemv", st), spec_gemv, 8, &push, sizeof push, values,
                                           fits ? NULL : win, stores, 4, (uint32_t)gx, 1, (uint32_t)gz));
            else
                VKI_TRY(op_dispatch_stored(c, tiled_r, spec_tiled, n_spec_tiled, &push, sizeof push,
                                           values, fits ? NULL : win, stores, n_bind, (uint32_t)gx, (uint32_t)gy, (uint32_t)gz));
            op_note_flops(c, mm_flops(p, gz));
        }
    }
    return VKI_OK;
}
