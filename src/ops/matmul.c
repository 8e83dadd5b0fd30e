/* MatMul and Gemm: Y = alpha * A B + beta * C over strided operands, so that transposes and
 * broadcast batch dims (stride 0) cost no copies. On CPU Vulkan devices (lavapipe) float32
 * products take the register-blocked kernels of matmul_cpu.c. Elsewhere fp16 products take
 * tensor cores where the device has cooperative matrices (matmul_coopmat.c), M <= 8 runs a
 * GEMV-like shader (shaders/matmul_gemv.glsl), the rest a shared-memory tiled one
 * (shaders/matmul_tiled.glsl), with smaller tiles and K split over workgroups when the tiles
 * alone would leave the GPU idle. */
#include "binary.h"
#include "matmul.h"
#include "matmul_coopmat.h"
#include "movement.h"
#include "normalization.h"
#include "../plan/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MM_LOCAL = 128 };    /* invocations per workgroup in the shaders */
/* Workgroups that keep a large GPU busy (an H200 has 132 multiprocessors, VKINFER_MM_BUSY_GROUPS
 * 256 by default): 128-tiles where there are that many of them (discrete GPUs), and fewer tiles
 * than MM_SPLIT_BELOW split K (MM_SPLIT_BELOW_SCALAR for the scalar kernels: measured on the
 * H200, bench/tuning/tile_sweep.py --dtype float32 --env VKINFER_MM_SPLIT_BELOW, 128 -> 200
 * took ViT-B's [197,768]x[768,2304] from 0.071 to 0.058 ms, [197,768]x[768,3072] 0.072 -> 0.059 and BERT's [1024,768]x[768,768]
 * 0.073 -> 0.062; the tensor-core kernels lost on the last, 0.019 -> 0.025). Slices of K are at
 * least MM_MIN_K_SLICE long on GPUs: batch-1 CNNs' products are small (mobilenet_v2's
 * [64,384]x[384,196]: 4 tiles that each walked all of K), and slices of 32 instead of 256 took
 * whole models on the H200 (bench/tuning/env_sweep.sh, VKINFER_MM_MIN_K_SLICE 256/128/64/32, median
 * ms): mobilenet_v2 0.747 -> 0.513, efficientnet_b0 1.97 -> 1.31, convnext_tiny 2.03 -> 1.66,
 * resnet18 0.80 -> 0.60, vit_b_16 3.59 -> 3.46, the BERT-base encoder 2.54 -> 2.31. CPU
 * devices keep MM_MIN_K_SLICE_CPU (each slice is one more pass over Y there). */
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

/* Keep in step with shaders/matmul_splitk_reduce.glsl. */
typedef struct mm_reduce_push {
    uint32_t count, slices, M, N, scm, scn;
    float alpha, beta;
    uint32_t y_base;
    float lo, hi;
    mm_store_layout y; /* Y_LAYOUT's (spec 7) */
} mm_reduce_push;

/* Keep in step with shaders/matmul_splitk_ln.comp. */
typedef struct mm_splitk_ln_push {
    uint32_t rows, N, slices, M, scm, scn;
    float alpha, beta, eps;
} mm_splitk_ln_push;

/* A LayerNormalization's rows of up to this many elements can join a split-K reduce pass
 * (8 values an invocation, 256 invocations a row) */
enum { MM_SPLITK_LN_MAX = 2048 };

/* After a float32 split-K product's slices (its raw sums in `partial`): where a
 * LayerNormalization reads the finished Y (through the claimed bias and residual Adds, among
 * other readers: a pre-norm transformer's residual stream) along rows of Y's N columns, with
 * plan-time Scale and B, one dispatch adds the slices as the reduce pass does, stores Y and
 * normalizes each row into the LayerNormalization's output, which it claims
 * (shaders/matmul_splitk_ln.comp). ViT-B/16 has two a block. *taken false: not this case,
 * nothing recorded. VKINFER_SPLITK_LN=0 keeps the two passes (for measuring). */
static vki_status splitk_layer_norm(op_ctx *c, const mm_problem *p, int partial, int64_t slices, const int *values,
                                    uint32_t act, bool *taken)
{
    *taken = false;
    if (!c->vk->opts.splitk_ln || p->readers_value <= 0 || act != 0 || c->plan->fp16_mode) return VKI_OK;
    plan_value *y = op_value(c, p->y_value);
    const vk_caps *caps = &c->vk->caps;
    if (y->dtype != VKI_DTYPE_FLOAT || p->N < 1 || p->N > MM_SPLITK_LN_MAX || !caps->subgroup_arithmetic ||
        caps->subgroup_size < 4 || caps->props.limits.maxPerStageDescriptorStorageBuffers < 6)
        return VKI_OK;
    int scale_v, bias_v;
    float eps;
    int64_t axis;
    int ln = op_layer_norm_any_reader(c, p->readers_value - 1, &scale_v, &bias_v, &eps, &axis);
    if (ln < 0) return VKI_OK;
    /* the readers' value has R's shape where a residual was claimed (views of Y may have
     * reshaped it), else Y's; its rows along the normalized axes must be Y's rows */
    const plan_value *h = p->has_r ? op_value(c, p->r_value) : y;
    if (axis < 0) axis += h->rank;
    if (axis < 0 || axis >= h->rank || shape_numel(h->dims + axis, h->rank - (int)axis) != p->N) return VKI_OK;
    if (op_storage(c, values[3]) != GPU_W32 || (p->has_c && op_storage(c, values[2]) != GPU_W32) ||
        (p->has_r && op_storage(c, values[4]) != GPU_W32))
        return VKI_OK;
    int pairs;
    VKI_TRY(norm_layer_pairs(c, scale_v, bias_v, p->N, VKI_DTYPE_FLOAT, &pairs));
    if (pairs < 0) return VKI_OK;
    int out = op_fused_output(c, ln);
    /* Y itself is stored unless the LayerNormalization alone reads it (post-norm: BERT) */
    int s2, b2;
    float e2;
    int64_t a2;
    bool store_y = op_layer_norm_reader(c, p->readers_value - 1, &s2, &b2, &e2, &a2) < 0;
    VKI_TRY(op_claim_computed(c, ln, VKI_DTYPE_FLOAT, h->rank, h->dims));
    int64_t rows = shape_numel(y->dims, y->rank) / p->N;
    uint32_t group = caps->subgroup_size; /* a power of two up to 256 that covers N where it can */
    while (group < 256 && group < p->N) group *= 2;
    uint32_t spec[5] = {group, p->has_c, p->has_r, (uint32_t)((p->N + group - 1) / group), store_y};
    mm_splitk_ln_push push = {(uint32_t)rows, (uint32_t)p->N, (uint32_t)slices, (uint32_t)p->M, (uint32_t)p->scm,
                              (uint32_t)p->scn, p->alpha, p->beta, eps};
    int ln_values[6] = {partial, values[2], values[3], p->has_r ? values[4] : values[2], pairs, out};
    uint32_t gx, gy;
    op_grid_1d((uint64_t)rows, 1, &gx, &gy);
    *taken = true;
    return op_dispatch(c, "matmul_splitk_ln", spec, 5, &push, sizeof push, ln_values, 6, gx, gy, 1);
}

static int transposed_store(op_ctx *c, int v, const int64_t *vd, int vr, int64_t Z, int64_t M, int64_t N, bool any_n,
                            mm_store_layout *l, int64_t *tdims, int *trank);

/* After a float32 split-K product's slices: where Y (through its claimed bias Add) is read only
 * by a Transpose, that only by a Mul by a plan-time constant varying along Y's columns alone (a
 * per-channel factor), and that only by an Add of a residual of the Transpose's shape (ConvNeXt's
 * block end: the NHWC product permuted back to NCHW, times the layer scale, plus the block's
 * input), the reduce pass applies the factor and the residual and stores through the
 * Transpose's layout into the Add's output, claiming the three nodes (no binary_chain pass of
 * their own). The factor, alpha, beta and the bias are folded into one plan-time constant of
 * 2 N values. *taken false: not this case. VKINFER_SPLITK_CHAIN=0 keeps the passes (measuring). */
static vki_status splitk_layer_scale(op_ctx *c, const mm_problem *p, int partial, int64_t slices, int64_t z_count,
                                     const int *values, uint32_t act, bool *taken)
{
    *taken = false;
    if (!c->vk->opts.splitk_chain || !op_fusion_on(c) || p->readers_value <= 0 || act != 0 || p->has_r) return VKI_OK;
    /* the value Y's readers read: Y's shape (a claimed bias Add is shaped only when planned) */
    int v = p->readers_value - 1;
    plan_value *y = op_value(c, p->y_value);
    if (y->dtype != VKI_DTYPE_FLOAT || y->rank < 1 || y->dims[y->rank - 1] != p->N || op_storage(c, values[3]) != GPU_W32)
        return VKI_OK;
    plan_value *cv = p->has_c ? op_value(c, p->c_value) : NULL;
    if (cv && (!cv->host || p->scm != 0 || (p->scn != 1 && p->scn != 0))) return VKI_OK; /* a bias per column, known now */
    mm_store_layout l;
    int64_t tdims[VKI_MAX_RANK];
    int trank;
    int t = transposed_store(c, v, y->dims, y->rank, z_count, p->M, p->N, true, &l, tdims, &trank);
    if (t < 0 || trank != y->rank) return VKI_OK; /* not through a Reshape: the factor's axes are read off perm */
    const ir_node *tn = op_graph_node(c, t);
    const int64_t *perm;
    if (ir_attr_ints(tn, "perm", &perm) != trank) return VKI_OK;
    int t_out = tn->outputs[0];
    int mul = op_only_reader(c, t_out, "Mul");
    if (mul < 0) return VKI_OK;
    const ir_node *mn = op_graph_node(c, mul);
    if (mn->n_inputs != 2 || mn->inputs[0] == mn->inputs[1]) return VKI_OK;
    int gv = mn->inputs[0] == t_out ? mn->inputs[1] : mn->inputs[0];
    plan_value *g = gv >= 0 ? op_value(c, gv) : NULL;
    if (!g || !g->shaped || !g->host || !dtype_is_float(g->dtype) || g->rank > trank) return VKI_OK;
    /* the factor varies along the output axis that holds Y's columns, or not at all */
    int64_t gn = shape_numel(g->dims, g->rank);
    if (gn != 1 && gn != p->N) return VKI_OK;
    for (int k = 0; k < g->rank; k++) {
        int kk = trank - g->rank + k;
        if (g->dims[k] != 1 && (perm[kk] != trank - 1 || g->dims[k] != p->N)) return VKI_OK;
    }
    int mul_out = op_fused_output(c, mul), add = op_only_reader(c, mul_out, "Add");
    if (add < 0) return VKI_OK;
    const ir_node *an = op_graph_node(c, add);
    if (an->n_inputs != 2 || an->inputs[0] == an->inputs[1]) return VKI_OK;
    int rv = an->inputs[0] == mul_out ? an->inputs[1] : an->inputs[0];
    plan_value *r = rv >= 0 ? op_value(c, rv) : NULL;
    if (!r || !r->shaped || r->dtype != VKI_DTYPE_FLOAT || r->permuted || r->view_scale || r->rank != trank ||
        memcmp(r->dims, tdims, (size_t)trank * sizeof *tdims) || op_storage(c, rv) != GPU_W32 ||
        plan_storage_for(c->plan, op_fused_output(c, add), VKI_DTYPE_FLOAT) != GPU_W32)
        return VKI_OK;
    int folded;
    float *f = op_temp_const(c, VKI_DTYPE_FLOAT, 2 * p->N, &folded);
    if (!f) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory folding the layer scale");
    for (int64_t n = 0; n < p->N; n++) {
        double gamma = host_read_f64(g->dtype, g->host, (size_t)(gn == 1 ? 0 : n));
        double bias = cv ? host_read_f64(cv->dtype, cv->host, (size_t)(p->scn ? n : 0)) : 0.0;
        f[n] = (float)((double)p->beta * bias * gamma);
        f[p->N + n] = (float)((double)p->alpha * gamma);
    }
    VKI_TRY(op_claim_computed(c, t, VKI_DTYPE_FLOAT, trank, tdims));
    VKI_TRY(op_claim_computed(c, mul, VKI_DTYPE_FLOAT, trank, tdims));
    VKI_TRY(op_claim_computed(c, add, VKI_DTYPE_FLOAT, trank, tdims));
    int64_t y_numel = z_count * p->M * p->N;
    mm_reduce_push rp = {(uint32_t)y_numel, (uint32_t)slices, (uint32_t)p->M, (uint32_t)p->N, 0, 0, 1, 1, 0,
                         -INFINITY, INFINITY, l};
    uint32_t spec[8] = {MM_LOCAL, op_dtype_code(VKI_DTYPE_FLOAT), 0, 1, 0, 1, 1, 1};
    int reduce_values[4] = {partial, folded, op_fused_output(c, add), rv};
    uint32_t gx, gy;
    op_grid_1d((uint64_t)y_numel, MM_LOCAL, &gx, &gy);
    *taken = true;
    return op_dispatch(c, "matmul_splitk_reduce", spec, 8, &rp, sizeof rp, reduce_values, 4, gx, gy, 1);
}

/* Merges adjacent batch dims that both operands walk contiguously (or both broadcast), so
 * that most broadcasts fit the shaders' three batch dims. */
static void merge_batch_dims(mm_problem *p)
{
    int out = 0;
    for (int d = 0; d < p->nb; d++) {
        if (out > 0 && p->sa[out - 1] == p->sa[d] * p->bdims[d] && p->sb[out - 1] == p->sb[d] * p->bdims[d]) {
            p->bdims[out - 1] *= p->bdims[d];
            p->sa[out - 1] = p->sa[d];
            p->sb[out - 1] = p->sb[d];
            continue;
        }
        p->bdims[out] = p->bdims[d];
        p->sa[out] = p->sa[d];
        p->sb[out] = p->sb[d];
        out++;
    }
    p->nb = out;
}

static int64_t batch_count(const mm_problem *p, int from)
{
    int64_t n = 1;
    for (int d = from; d < p->nb; d++) n *= p->bdims[d];
    return n;
}

/* Host evaluation for constant inputs (shape arithmetic, tiny constant subgraphs). */
static void fold_on_host(op_ctx *c, const mm_problem *p)
{
    plan_value *a = op_in(c, 0), *b = op_in(c, 1), *cv = p->has_c ? op_value(c, p->c_value) : NULL;
    plan_value *y = op_out(c, 0);
    void *out = op_output_host(c, 0);
    bool is_float = dtype_is_float(y->dtype);
    int64_t batches = batch_count(p, 0);
    for (int64_t z = 0; z < batches; z++) {
        int64_t a_off = 0, b_off = 0, rest = z;
        for (int d = p->nb - 1; d >= 0; d--) {
            int64_t i = rest % p->bdims[d];
            rest /= p->bdims[d];
            a_off += i * p->sa[d];
            b_off += i * p->sb[d];
        }
        for (int64_t m = 0; m < p->M; m++)
            for (int64_t n = 0; n < p->N; n++) {
                size_t yi = (size_t)((z * p->M + m) * p->N + n);
                if (is_float) {
                    double acc = 0;
                    for (int64_t k = 0; k < p->K; k++)
                        acc += host_read_f64(a->dtype, a->host, (size_t)(a_off + m * p->sam + k * p->sak)) *
                               host_read_f64(b->dtype, b->host, (size_t)(b_off + k * p->sbk + n * p->sbn));
                    double v = p->alpha * acc;
                    if (cv) v += p->beta * host_read_f64(cv->dtype, cv->host, (size_t)(m * p->scm + n * p->scn));
                    host_write_f64(y->dtype, out, yi, v);
                } else {
                    uint64_t acc = 0; /* wraps like the GPU's int32 arithmetic */
                    for (int64_t k = 0; k < p->K; k++)
                        acc += (uint64_t)host_read_i64(a->dtype, a->host, (size_t)(a_off + m * p->sam + k * p->sak)) *
                               (uint64_t)host_read_i64(b->dtype, b->host, (size_t)(b_off + k * p->sbk + n * p->sbn));
                    host_write_i64(y->dtype, out, yi, (int64_t)acc);
                }
            }
    }
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

/* Records the dispatches of one product. Up to three batch dims go to the shader (z is
 * their flattened index); further outer dims, and z beyond the grid limit, are looped here.
 * Operands larger than one binding are bound as windows of consecutive batches. */
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

/* A Reshape's new dims from its shape input, a constant known now (an initializer, a folded
 * value, or a Constant node not planned yet), resolved against `in` dims (reshape_resolve);
 * false where that cannot be read. */
static bool reshape_dims(op_ctx *c, const ir_node *r, const int64_t *in, int in_rank, int64_t *out, int *rank)
{
    if (r->n_inputs != 2 || r->inputs[1] < 0) return false;
    const plan_value *sv = op_value(c, r->inputs[1]);
    const void *data = sv->shaped && sv->dtype == VKI_DTYPE_INT64 && sv->rank == 1 ? sv->host : NULL;
    int64_t n = data ? sv->dims[0] : 0;
    int producer = op_value_producer(c, r->inputs[1]);
    if (!data && producer >= 0 && !strcmp(op_graph_node(c, producer)->op_type, "Constant")) {
        const ir_attr *a = ir_find_attr(op_graph_node(c, producer), "value");
        if (a && a->type == ATTR_TENSOR && a->tensor && a->tensor->dtype == VKI_DTYPE_INT64 && a->tensor->rank == 1 &&
            a->tensor->data && a->tensor->bytes >= (size_t)a->tensor->dims[0] * 8)
            data = a->tensor->data, n = a->tensor->dims[0];
    }
    if (!data || n < 1 || n > VKI_MAX_RANK) return false;
    int64_t shape[VKI_MAX_RANK];
    memcpy(shape, data, (size_t)n * sizeof *shape); /* the file's bytes need not be 8-byte aligned */
    char why[160];
    bool allowzero = c->opset >= 14 && ir_attr_int(r, "allowzero", 0);
    if (!reshape_resolve(shape, (int)n, allowzero, in, in_rank, out, why, sizeof why)) return false;
    *rank = (int)n;
    return true;
}

/* Value v seen through the Reshape that alone reads it, if one does: that Reshape's output
 * (*reshape its index; dims and *rank become its dims), else v (*reshape -1); -1 where the
 * Reshape's shape is not known at plan time. */
static int through_reshape(op_ctx *c, int v, int64_t *dims, int *rank, int *reshape)
{
    *reshape = op_only_reader(c, v, "Reshape");
    if (*reshape < 0) return v;
    int64_t nd[VKI_MAX_RANK];
    int nr;
    if (!reshape_dims(c, op_graph_node(c, *reshape), dims, *rank, nd, &nr)) return -1;
    memcpy(dims, nd, (size_t)nr * sizeof *nd);
    *rank = nr;
    return op_graph_node(c, *reshape)->outputs[0];
}

mm_store_layout mm_dense_layout(int64_t Z, int64_t M, int64_t N)
{
    return (mm_store_layout){(uint32_t)(M * N), (uint32_t)(Z ? Z : 1), 0, (uint32_t)N, (uint32_t)(N ? N : 1), 0};
}

/* The Transpose that mm_store_transposed claims: its index, *l, its output's dims and rank; -1
 * if none (then nothing is claimed). */
static int transposed_store(op_ctx *c, int v, const int64_t *vd, int vr, int64_t Z, int64_t M, int64_t N, bool any_n,
                            mm_store_layout *l, int64_t *tdims, int *trank)
{
    if (!c->vk->opts.transposed_stores || !op_fusion_on(c)) return -1;
    int64_t dims[VKI_MAX_RANK];
    int rank = vr, reshape;
    memcpy(dims, vd, (size_t)vr * sizeof *dims);
    int end = through_reshape(c, v, dims, &rank, &reshape);
    int t = end >= 0 ? op_only_reader(c, end, "Transpose") : -1;
    if (t < 0 || shape_numel(dims, rank) != Z * M * N || Z * M * N > UINT32_MAX) return -1;
    const ir_node *tn = op_graph_node(c, t);
    const int64_t *perm;
    if (ir_attr_ints(tn, "perm", &perm) != rank || tn->n_outputs < 1 || tn->outputs[0] < 0) return -1;
    int64_t ts[VKI_MAX_RANK], sp[VKI_MAX_RANK]; /* the output's strides, and per input axis */
    bool seen[VKI_MAX_RANK] = {false};
    for (int k = 0; k < rank; k++) {
        if (perm[k] < 0 || perm[k] >= rank || seen[perm[k]]) return -1;
        seen[perm[k]] = true;
        tdims[k] = dims[perm[k]];
    }
    int64_t st = 1;
    for (int k = rank - 1; k >= 0; k--) ts[k] = st, st *= tdims[k];
    for (int k = 0; k < rank; k++) sp[perm[k]] = ts[k];
    /* runs of the input's axes (innermost first, unit axes dropped) that stay contiguous */
    int64_t run_size[VKI_MAX_RANK], run_stride[VKI_MAX_RANK];
    int runs = 0;
    for (int k = rank - 1; k >= 0; k--) {
        if (dims[k] == 1) continue;
        if (runs && sp[k] == run_stride[runs - 1] * run_size[runs - 1]) run_size[runs - 1] *= dims[k];
        else run_size[runs] = dims[k], run_stride[runs++] = sp[k];
    }
    /* n's innermost elements must stay contiguous, unless the kernel stores one element at a
     * time (any_n: nb 1, n at n * c) */
    if (!runs || (run_stride[0] != 1 && !any_n)) return -1;
    /* the radices of (z, m, n), innermost first, n cut where the first run ends and z where a
     * run ends ([batch, heads, S, D] -> [batch, S, heads, D]) */
    int64_t nb = run_stride[0] != 1 ? 1 : run_size[0] < N ? run_size[0] : N;
    if (N % nb) return -1;
    int64_t radix[5] = {nb, N / nb, M, Z, 1}, stride[5] = {1, 0, 0, 0, 0};
    int r = 0;
    int64_t used = 1; /* of run r, the part the radices before took */
    for (int k = 0; k < 5; k++) {
        if (radix[k] == 1) continue;
        if (r >= runs) return -1;
        if (k == 3 && run_size[r] % (used * radix[k]) && run_size[r] / used > 1 && radix[k] % (run_size[r] / used) == 0) {
            radix[4] = radix[k] / (run_size[r] / used); /* z's inner part ends with this run */
            radix[k] = run_size[r] / used;
        }
        if (run_size[r] % (used * radix[k])) return -1;
        stride[k] = run_stride[r] * used;
        used *= radix[k];
        if (used == run_size[r]) r++, used = 1;
    }
    if (r != runs) return -1;
    for (int k = 0; k < 5; k++)
        if (stride[k] > UINT32_MAX) return -1;
    *l = (mm_store_layout){(uint32_t)stride[3], (uint32_t)radix[3], (uint32_t)stride[4], (uint32_t)stride[2], (uint32_t)nb,
                           (uint32_t)stride[1]};
    *trank = rank;
    return t;
}

static vki_status store_transposed(op_ctx *c, int v, int y, const int64_t *vd, int vr, int64_t Z, int64_t M, int64_t N,
                                   bool any_n, gpu_storage written, mm_store_layout *l, int *out)
{
    int64_t tdims[VKI_MAX_RANK];
    int trank;
    mm_store_layout tl;
    int tn = transposed_store(c, v, vd, vr, Z, M, N, any_n, &tl, tdims, &trank);
    if (tn < 0) return VKI_OK;
    int t_out = op_graph_node(c, tn)->outputs[0];
    if (plan_storage_for(c->plan, t_out, op_value(c, y)->dtype) != written) return VKI_OK;
    VKI_TRY(op_claim_computed(c, tn, op_value(c, y)->dtype, trank, tdims));
    *l = tl;
    *out = t_out;
    return VKI_OK;
}

vki_status mm_store_transposed(op_ctx *c, int v, int y, const int64_t *vd, int vr, int64_t Z, int64_t M, int64_t N,
                               gpu_storage written, mm_store_layout *l, int *out)
{
    return store_transposed(c, v, y, vd, vr, Z, M, N, false, written, l, out);
}

vki_status mm_store_transposed_any(op_ctx *c, int v, int y, const int64_t *vd, int vr, int64_t Z, int64_t M, int64_t N,
                                   gpu_storage written, mm_store_layout *l, int *out)
{
    return store_transposed(c, v, y, vd, vr, Z, M, N, true, written, l, out);
}

/* The residual Add that reads Y (value v) through views that keep its elements' order: a
 * Reshape, then a Transpose that moves only unit axes (torchvision's ViT: the out-projection's
 * [197,768] viewed as [197,1,768], transposed to [1,197,768], added to the stream), each the
 * sole reader of the one before; both become aliases of Y when planned. The other operand must
 * have the Transpose's output dims (no broadcast) and Y's dtype. The Add's index, with *other
 * and *operand (the view the Add reads), or -1. */
static int residual_through_views(op_ctx *c, int v, int *other, int *operand)
{
    const plan_value *y = op_value(c, v);
    int64_t dims[VKI_MAX_RANK];
    int rank = y->rank, reshape;
    memcpy(dims, y->dims, sizeof dims);
    int end = through_reshape(c, v, dims, &rank, &reshape);
    if (end < 0) return -1;
    int t = op_only_reader(c, end, "Transpose");
    if (reshape < 0 && t < 0) return -1;
    if (t >= 0) { /* only unit axes move: the elements keep their order */
        const int64_t *perm;
        if (ir_attr_ints(op_graph_node(c, t), "perm", &perm) != rank) return -1;
        int64_t td[VKI_MAX_RANK];
        int last = -1;
        for (int k = 0; k < rank; k++) {
            if (perm[k] < 0 || perm[k] >= rank) return -1;
            td[k] = dims[perm[k]];
            if (td[k] == 1) continue;
            if (perm[k] < last) return -1;
            last = (int)perm[k];
        }
        memcpy(dims, td, sizeof td);
        end = op_graph_node(c, t)->outputs[0];
    }
    int add = op_only_reader(c, end, "Add");
    if (add < 0) return -1;
    const ir_node *an = op_graph_node(c, add);
    if (an->n_inputs != 2 || an->inputs[0] == an->inputs[1]) return -1;
    int o = an->inputs[0] == end ? an->inputs[1] : an->inputs[0];
    const plan_value *ov = op_value(c, o);
    /* the other operand of the view's very shape: no broadcast either way */
    if (!ov->shaped || ov->dtype != y->dtype || ov->rank != rank || memcmp(ov->dims, dims, (size_t)rank * sizeof *dims))
        return -1;
    *other = o;
    *operand = end;
    return add;
}

/* Products of at most this many rows take matmul_gemv on GPUs (VKINFER_MM_GEMV_ROWS, 16 by
 * default; measured on the H200: see docs/history/benchmarks-notebook.md) */
static int64_t gemv_max_rows(const op_ctx *c) { return c->vk->opts.mm_gemv_rows; }

int mm_fuse_residual(op_ctx *c, mm_problem *p, int last)
{
    if (p->has_r) return last;
    plan_value *y = op_value(c, p->y_value);
    int other, operand = last, add = op_fuse_add_find(c, last, &other);
    if (add >= 0) { /* a residual of Y's shape, not a broadcast one */
        plan_value *o = op_value(c, other);
        if (o->rank != y->rank || memcmp(o->dims, y->dims, (size_t)y->rank * sizeof *y->dims)) return last;
    } else if (last == p->y_value) {
        add = residual_through_views(c, last, &other, &operand);
    }
    if (add < 0) return last;
    plan_value *o = op_value(c, other);
    if (o->host || o->permuted || o->view_scale || (uint64_t)shape_numel(y->dims, y->rank) * 4 > op_max_binding_bytes(c))
        return last;
    gpu_storage st = mm_storage(c, p);
    /* half operands on a device with tensor cores: their kernels take no R (a pass of its own,
     * mm_record_then_add), so the Add is left to its other readers' fusions, such as the
     * LayerNormalization after it (BERT in the fp16 mode: 170 -> 158 dispatches). Measured on
     * the H200 with R in matmul_coopmat2_f16's epilogue (session 18, not kept): resnet50's
     * layer1 convolutions with R 0.124 -> 0.33 ms each (K = 64: the R block's load is not
     * hidden), resnet50 at batch 32 8.0 -> 8.6 ms, BERT at batch 8 unchanged. */
    const vk_caps *caps = &c->vk->caps;
    if ((st == GPU_F16 || st == GPU_BF16) &&
        (caps->cooperative_matrix || caps->cooperative_matrix_khr || caps->cooperative_matrix2))
        return last;
    /* GEMV (the GPU kernels' products of few rows) takes no R either: a sum that a
     * LayerNormalization alone reads is left to norm_fuse_add (one norm_rows pass for the Add
     * and the LayerNormalization) rather than an Add pass after the product (a post-norm
     * transformer policy at batch 1: 2 such sums a layer) */
    int ln_scale, ln_bias;
    float ln_eps;
    int64_t ln_axis;
    if (!mm_cpu_kernels(c) && shape_numel(y->dims, y->rank) <= gemv_max_rows(c) * p->N &&
        op_layer_norm_reader(c, op_fused_output(c, add), &ln_scale, &ln_bias, &ln_eps, &ln_axis) >= 0)
        return last;
    p->has_r = true;
    p->r_value = other;
    if (mm_storage(c, p) != st) { /* R held otherwise than the operands: a pass of its own */
        p->has_r = false;
        return last;
    }
    op_fuse_claim(c, add, operand);
    return op_fused_output(c, add);
}

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
    int64_t batches = batch_count(p, 0);
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
    int64_t z_count = bd[0] * bd[1] * bd[2], outer_count = batch_count(p, 0) / (z_count ? z_count : 1);
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
            if (!is_int) VKI_TRY(splitk_layer_norm(c, p, partial, slices, values, act, &ln_taken));
            if (ln_taken) return VKI_OK;
            if (!is_int) VKI_TRY(splitk_layer_scale(c, p, partial, slices, z_count, values, act, &ln_taken));
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

/* A batch dim that B broadcasts over and along which A's rows continue evenly ([563,1,512] x
 * [512,512]) is more rows of one product: Y is contiguous, so its rows continue too. */
static void fold_batch_into_rows(mm_problem *p)
{
    while (p->nb > 0 && p->sb[p->nb - 1] == 0 && p->sa[p->nb - 1] == p->M * p->sam && !p->has_c) {
        p->M *= p->bdims[p->nb - 1];
        p->nb--;
    }
}

/* The Mul or Div by a constant scalar that alone reads value v (*f its factor), or -1. */
static int scale_reader(op_ctx *c, int v, double *f)
{
    int n = op_only_reader(c, v, "Mul");
    bool div = n < 0;
    if (div && (n = op_only_reader(c, v, "Div")) < 0) return -1;
    const ir_node *nd = op_graph_node(c, n);
    int s = nd->n_inputs != 2 ? -1 : nd->inputs[0] == v ? nd->inputs[1] : div ? -1 : nd->inputs[0];
    if (s < 0 || s == v || !plan_const_scalar(c->plan, s, f)) return -1;
    /* its rank: no more than v's, so that the node's output is v's shape */
    const plan_value *sv = op_value(c, s);
    int producer = op_value_producer(c, s);
    const ir_attr *t = sv->shaped || producer < 0 ? NULL : ir_find_attr(op_graph_node(c, producer), "value");
    int rank = sv->shaped ? sv->rank : t && t->type == ATTR_TENSOR && t->tensor ? t->tensor->rank : VKI_MAX_RANK + 1;
    if (div) *f = 1.0 / *f;
    if (rank > op_value(c, v)->rank || !isfinite(*f) || *f == 0) return -1;
    return n;
}

/* A Mul of Y alone by a constant scalar, or a Div of it by one (attention's scores scaled by
 * 1/sqrt(d) after Q K^T), scales the product: alpha and beta take the factor and the node
 * becomes a view of Y, one pass over the scores fewer (on lavapipe the [8,128,128] scores'
 * Mul took 0.55-1.4 ms beside 0.3-0.9 for the product). The scalar may be a Constant node
 * that follows the MatMul in graph order (not planned yet: plan_const_scalar reads it). */
static int fuse_scale(op_ctx *c, mm_problem *p, int last)
{
    double f;
    int n = scale_reader(c, last, &f);
    if (n < 0) return last;
    p->alpha *= (float)f;
    p->beta *= (float)f;
    op_fuse_claim(c, n, last);
    return op_fused_output(c, n);
}

/* Epilogues the kernels apply where they store Y: a following Add of a bias (one N-vector,
 * any shape of it, or a scalar) or of a residual of Y's shape when Y is one [M,N] product
 * (C has no batch strides) becomes C, where Y has none yet (MatMul, Gemm without C); then a
 * Relu/Clip or a GELU after Y (or after that Add) becomes the clamp (op_fuse_activation_value). */
static void fuse_epilogues(op_ctx *c, mm_problem *p)
{
    plan_value *y = op_out(c, 0);
    int last = op_out_index(c, 0), other, add;
    p->lo = -INFINITY, p->hi = INFINITY;
    if (!dtype_is_float(y->dtype)) return;
    last = fuse_scale(c, p, last);
    if (!p->has_c && (add = op_fuse_add_find(c, last, &other)) >= 0) {
        plan_value *o = op_value(c, other);
        int64_t on = shape_numel(o->dims, o->rank), y_numel = shape_numel(y->dims, y->rank);
        bool bias = on == 1 || (on == p->N && o->dims[o->rank - 1] == p->N && y->rank >= 1 && y->dims[y->rank - 1] == p->N);
        bool residual = p->nb == 0 && on == y_numel && y_numel == p->M * p->N;
        if ((bias || residual) && (uint64_t)on * 4 <= op_max_binding_bytes(c)) {
            p->has_c = true;
            p->c_value = other;
            p->beta = 1;
            p->scn = on == 1 ? 0 : 1;
            p->scm = bias ? 0 : p->N;
            op_fuse_claim(c, add, last);
            last = op_fused_output(c, add);
        }
    }
    last = mm_fuse_residual(c, p, last);
    p->clamp = op_fuse_activation_value(c, last, &p->lo, &p->hi);
    p->readers_value = p->clamp ? 0 : 1 + last;
}

static vki_status finish(op_ctx *c, mm_problem *p)
{
    merge_batch_dims(p);
    fold_batch_into_rows(p);
    int64_t work = batch_count(p, 0) * p->M * p->N * (p->K ? p->K : 1);
    if (op_all_inputs_const(c) && work <= 65536) {
        fold_on_host(c, p);
        return VKI_OK;
    }
    p->a_value = op_in_index(c, 0);
    p->b_value = op_in_index(c, 1);
    p->y_value = op_out_index(c, 0);
    fuse_epilogues(c, p);
    return mm_record(c, p);
}

static vki_status require_same_dtype(op_ctx *c, int i)
{
    if (op_in(c, i)->dtype != op_in(c, 0)->dtype)
        return op_error(c, VKI_ERROR_MODEL, "input %d has dtype %s, input 0 %s; they must match", i,
                        vki_dtype_name(op_in(c, i)->dtype), vki_dtype_name(op_in(c, 0)->dtype));
    return VKI_OK;
}

/* ---- attention in one dispatch: MatMul(Q, K^T) -> Softmax -> MatMul(P, V) ----
 * Recognised at the first MatMul (src/ops/matmul.c is where its operands' strides are known):
 * its output read only by a Softmax along the last axis, whose output only a MatMul reads as
 * its A; V (that MatMul's B) planned already. shaders/attention_rows.glsl then computes the
 * second product's output from Q, K^T and V, the scores kept in shared memory: the Softmax
 * and the second MatMul are claimed (their outputs alias this node's, which takes the second
 * product's shape: nothing else reads it). On GPUs for short key sequences, where the three
 * dispatches' fixed costs outweigh the work: VKINFER_ATTENTION_ROWS=0 turns it off, =1 takes
 * it wherever it applies (CPU devices too). Longer ones on GPUs may take attention_tile (see
 * below); VKINFER_ATTENTION_ROWS=tile takes that wherever it applies. fp32 words, or 16-bit
 * words (the fp16 mode and bfloat16 models: the _f16/_bf16 variants, fp32 inside). */
enum { ATTN_ROWS_MAX_KEYS = 1024, ATTN_ROWS_GPU_KEYS = 64, ATTN_TILE_MAX_HEAD = 64, ATTN_TILE_BLOCKS = 96 };

typedef struct attn_rows_push {
    uint32_t M, S, D, E;
    uint32_t sqm, sqd, skd, sks, svs, sve;
    float alpha;
    uint32_t bd1, bd2;
    uint32_t sq0, sq1, sq2, sk0, sk1, sk2, sv0, sv1, sv2;
    uint32_t q0, k0, v0;
    mm_store_layout y; /* where Y(z, m, e) goes */
} attn_rows_push;

/* bdims/sa/sb: the first product's nb batch dims (size-1 ones included), right-aligned */
static vki_status attention_rows_try(op_ctx *c, const mm_problem *p, int nb, const int64_t *bdims, const int64_t *sa,
                                     const int64_t *sb, bool *taken)
{
    *taken = false;
    int mode = c->vk->opts.attention_rows;
    if (mode == OPT_ATTENTION_OFF) return VKI_OK;
    bool forced = mode == OPT_ATTENTION_ON, forced_tile = mode == OPT_ATTENTION_TILE;
    plan_value *a = op_in(c, 0), *b = op_in(c, 1);
    int y1 = op_out_index(c, 0);
    if (!dtype_is_float(a->dtype) || a->rank < 2 || b->rank < 2 || p->K < 1 || p->N < 1) return VKI_OK;
    /* the scores may be scaled first, softmax((Q K^T) * s) as attention written by hand has it
     * (minGPT, VQ-BeT): the scale is the product's alpha, as fuse_scale makes it elsewhere */
    double scale = 1.0;
    int scale_node = scale_reader(c, y1, &scale);
    int scores = scale_node >= 0 ? op_graph_node(c, scale_node)->outputs[0] : y1;
    int sm = op_only_reader(c, scores, "Softmax");
    if (sm < 0) return VKI_OK;
    const ir_node *smn = op_graph_node(c, sm);
    int rank = nb + 2;
    int64_t axis = ir_attr_int(smn, "axis", c->opset < 13 ? 1 : -1);
    if (axis < 0) axis += rank;
    if (axis != rank - 1 || smn->n_outputs < 1) return VKI_OK;
    int p_value = smn->outputs[0];
    int mm2 = op_only_reader(c, p_value, "MatMul");
    if (mm2 < 0) return VKI_OK;
    const ir_node *mn = op_graph_node(c, mm2);
    if (mn->n_inputs != 2 || mn->inputs[0] != p_value || mn->inputs[1] == p_value || mn->inputs[1] < 0) return VKI_OK;
    int vv = mn->inputs[1];
    plan_value *v = op_value(c, vv);
    if (!v->shaped || v->dtype != a->dtype || v->rank < 2 || v->view_scale || v->split_inner ||
        v->dims[v->rank - 2] != p->N || v->rank - 2 > nb)
        return VKI_OK;
    /* Q, K^T and V as 16-bit words (the fp16 mode, bfloat16 models) where the device lets
     * kernels declare them (in the fp16 mode a graph input held as fp32 words is converted, as
     * for any half kernel), else as fp32 words: halves held packed are left to the three
     * dispatches */
    int in_values[3] = {op_in_index(c, 0), op_in_index(c, 1), vv};
    gpu_storage st = op_half_storage(c, in_values, 3);
    for (int i = 0; i < 3 && st == GPU_W32; i++)
        if (op_storage(c, in_values[i]) != GPU_W32) return VKI_OK;
    int64_t vs[VKI_MAX_RANK];
    value_strides(v, vs);
    /* V's batch dims broadcast to the first product's (never the other way) */
    int64_t zb[3] = {1, 1, 1}, q3[3] = {0, 0, 0}, k3[3] = {0, 0, 0}, v3[3] = {0, 0, 0};
    int used = 0;
    int64_t z_count = 1;
    for (int d = nb - 1; d >= 0; d--) {
        int vd = d - (nb - (v->rank - 2));
        int64_t vsize = vd >= 0 ? v->dims[vd] : 1;
        if (vsize != bdims[d] && vsize != 1) return VKI_OK;
        if (bdims[d] == 1) continue;
        if (used == 3) return VKI_OK;
        int slot = 2 - used++;
        zb[slot] = bdims[d], q3[slot] = sa[d], k3[slot] = sb[d], v3[slot] = vsize == 1 ? 0 : vs[vd];
        z_count *= bdims[d];
    }
    int64_t E = v->dims[v->rank - 1];
    bool cpu = mm_cpu_kernels(c); /* CPU devices (VKINFER_MATMUL_KERNELS=gpu tests the GPU form there) */
    /* the gate: GPUs, for key sequences of up to 64. Not CPU devices: llvmpipe runs each
     * workgroup (a query row) as a call with its barriers split out, 0.375 ms for the
     * transformer policy's 80 rows (10 queries, 8 heads) against 0.053 for the three
     * dispatches (matmul_cpu_small, softmax, matmul_cpu_small) */
    double flops = 2.0 * (double)z_count * (double)p->M * (double)p->N * (double)(p->K + E);
    /* longer key sequences on GPUs: attention_tile, blocks of 16 or 32 query rows with the
     * keys in chunks through shared memory, for heads of up to 64 on fp32 words. Measured on
     * the H200 against the three dispatches (bench/tuning/env_sweep.sh VKINFER_ATTENTION_ROWS "0 -",
     * two passes, session 21): ViT-B/16 at batch 1 2.724 / 2.752 -> 2.648 / 2.648 ms, BERT-base
     * at batch 1 1.769 / 1.771 -> 1.665 / 1.690, at batch 8 7.667 / 7.631 -> 7.682 / 7.664. A
     * first form (no prefetch, 16 rows of 1 x 4 sums, 5 shared reads for 4 multiply-adds) was
     * slower than the three dispatches on ViT (2.80) and BERT at batch 8 (7.85). */
    uint32_t shared_bytes = c->vk->caps.props.limits.maxComputeSharedMemorySize;
    bool tile = st == GPU_W32 && p->K <= ATTN_TILE_MAX_HEAD && E <= ATTN_TILE_MAX_HEAD && shared_bytes >= 24576 &&
                (forced_tile || (!cpu && !forced && p->N > ATTN_ROWS_GPU_KEYS));
    if (!tile && (p->N > ATTN_ROWS_MAX_KEYS || (!forced && (cpu || p->N > ATTN_ROWS_GPU_KEYS)))) return VKI_OK;
    if (p->M > 65535 || z_count > 65535 || E < 1) return VKI_OK;
    int64_t ydims[VKI_MAX_RANK];
    for (int d = 0; d < nb; d++) ydims[d] = bdims[d];
    ydims[nb] = p->M, ydims[nb + 1] = E;
    VKI_TRY(op_set_output(c, 0, a->dtype, rank, ydims));
    if (scale_node >= 0) op_fuse_claim(c, scale_node, y1);
    op_fuse_claim(c, sm, scores);
    op_fuse_claim(c, mm2, p_value);
    attn_rows_push push = {
        (uint32_t)p->M, (uint32_t)p->N, (uint32_t)p->K, (uint32_t)E, (uint32_t)p->sam, (uint32_t)p->sak,
        (uint32_t)p->sbk, (uint32_t)p->sbn, (uint32_t)vs[v->rank - 2], (uint32_t)vs[v->rank - 1], p->alpha * (float)scale,
        (uint32_t)zb[1], (uint32_t)zb[2], (uint32_t)q3[0], (uint32_t)q3[1], (uint32_t)q3[2], (uint32_t)k3[0],
        (uint32_t)k3[1], (uint32_t)k3[2], (uint32_t)v3[0], (uint32_t)v3[1], (uint32_t)v3[2], (uint32_t)p->a0,
        (uint32_t)p->b0, (uint32_t)(v->permuted ? v->view_elem : 0), mm_dense_layout(z_count, p->M, E)};
    uint32_t spec[2] = {cpu ? 8 : 64, ATTN_ROWS_MAX_KEYS};
    int values[4] = {op_in_index(c, 0), op_in_index(c, 1), vv, y1};
    /* a Transpose after it (the heads moved back beside the sequence before the
     * out-projection) stored through its layout: the Transpose is not a copy of its own */
    VKI_TRY(mm_store_transposed(c, op_fused_output(c, mm2), y1, ydims, rank, z_count, p->M, E, st, &push.y, &values[3]));
    if (tile) {
        /* 32 query rows a block (30.7 KB of shared memory) unless that leaves the GPU under
         * ATTN_TILE_BLOCKS blocks (BERT at batch 1: 12 heads x 4), then 16 (23.7 KB). H200,
         * VKINFER_ATTENTION_TILE_ROWS "16 32": ViT 2.622 / 2.619 against 2.647 / 2.612 ms, BERT
         * at batch 1 1.658 / 1.658 against 1.688 / 1.691, at batch 8 7.685 / 7.665 against
         * 7.636 / 7.637 */
        uint32_t qb = shared_bytes >= 31744 && z_count * ((p->M + 31) / 32) >= ATTN_TILE_BLOCKS ? 32 : 16;
        int64_t qb_opt = c->vk->opts.attention_tile_rows; /* 16 or 32: tests and measuring */
        if (qb_opt == 16 || (qb_opt == 32 && shared_bytes >= 31744)) qb = (uint32_t)qb_opt;
        uint32_t spec_tile[2] = {qb / 2 * 16, qb};
        VKI_TRY(op_dispatch(c, "attention_tile", spec_tile, 2, &push, sizeof push, values, 4, (uint32_t)((p->M + qb - 1) / qb),
                            (uint32_t)z_count, 1));
        op_note_flops(c, flops);
        *taken = true;
        return VKI_OK;
    }
    gpu_storage stores[4] = {st, st, st, st}; /* Y in another storage (a graph output in the fp16 mode) is converted */
    VKI_TRY(op_dispatch_stored(c, op_variant(c, "attention_rows", st), spec, 2, &push, sizeof push, values, NULL, stores, 4,
                               (uint32_t)p->M, (uint32_t)z_count, 1));
    op_note_flops(c, flops);
    *taken = true;
    return VKI_OK;
}

static vki_status plan_matmul(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    VKI_TRY(require_same_dtype(c, 1));
    plan_value *a = op_in(c, 0), *b = op_in(c, 1);
    vki_dtype dt = a->dtype;
    if (!dtype_is_float(dt) && dt != VKI_DTYPE_INT32 && dt != VKI_DTYPE_INT64)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "MatMul runs float32, float16, bfloat16, int32 and int64, not %s",
                        vki_dtype_name(dt));
    if (a->rank < 1 || b->rank < 1) return op_error(c, VKI_ERROR_SHAPE, "MatMul operands must have rank >= 1");

    /* numpy semantics: a 1-D A is a row [1,K], a 1-D B a column [K,1]; the added dim is
     * dropped from Y */
    int64_t M = a->rank == 1 ? 1 : a->dims[a->rank - 2], K = a->dims[a->rank - 1];
    int64_t Kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2], N = b->rank == 1 ? 1 : b->dims[b->rank - 1];
    if (K != Kb)
        return op_error(c, VKI_ERROR_SHAPE, "inner dimensions differ: A has K=%lld, B has K=%lld", (long long)K,
                        (long long)Kb);
    int a_batch = a->rank > 2 ? a->rank - 2 : 0, b_batch = b->rank > 2 ? b->rank - 2 : 0;
    int nb = a_batch > b_batch ? a_batch : b_batch;
    /* element strides of each operand's dims: row-major, or a permuted view's own (a Transpose
     * read in place, src/ops/movement.c) */
    int64_t as_[VKI_MAX_RANK], bs_[VKI_MAX_RANK];
    value_strides(a, as_);
    value_strides(b, bs_);
    mm_problem p = {.M = M, .N = N, .K = K, .sam = a->rank > 1 ? as_[a->rank - 2] : K, .sak = as_[a->rank - 1],
                    .sbk = b->rank > 1 ? bs_[b->rank - 2] : bs_[0], .sbn = b->rank > 1 ? bs_[b->rank - 1] : 1,
                    /* scaled views (a constant Mul/Div before the product, src/ops/binary.c) */
                    .alpha = (a->view_scale ? a->view_scale : 1.0f) * (b->view_scale ? b->view_scale : 1.0f), .beta = 0,
                    .a0 = a->permuted ? a->view_elem : 0, .b0 = b->permuted ? b->view_elem : 0};
    int64_t ydims[VKI_MAX_RANK];
    int yrank = 0;
    int64_t bdims[MM_MAX_BATCH], sa[MM_MAX_BATCH], sb[MM_MAX_BATCH];
    for (int d = nb - 1; d >= 0; d--) { /* right-aligned broadcast of the batch dims */
        int ad = d - (nb - a_batch), bdim_i = d - (nb - b_batch);
        int64_t as = ad >= 0 ? a->dims[ad] : 1, bs = bdim_i >= 0 ? b->dims[bdim_i] : 1;
        if (as != bs && as != 1 && bs != 1)
            return op_error(c, VKI_ERROR_SHAPE, "batch dims %lld and %lld do not broadcast", (long long)as, (long long)bs);
        bdims[d] = as == 1 ? bs : as;
        sa[d] = as == 1 ? 0 : as_[ad];
        sb[d] = bs == 1 ? 0 : bs_[bdim_i];
    }
    /* a batch dim that an operand's view splits in two (src/ops/shape.c: batch and heads merged
     * by a Reshape of a strided Slice) is two batch dims of the product, the other operand's
     * stride scaled for the outer one; a split elsewhere never reaches here (split_view_ok) */
    bool split = false;
    for (int d = 0; d < nb; d++) {
        ydims[yrank++] = bdims[d];
        if (bdims[d] == 1) continue; /* contributes nothing to indexing */
        int ad = d - (nb - a_batch), bd = d - (nb - b_batch);
        bool a_split = a->split_inner > 0 && ad >= 0 && a->split_dim == ad && a->dims[ad] == bdims[d];
        bool b_split = b->split_inner > 0 && bd >= 0 && b->split_dim == bd && b->dims[bd] == bdims[d];
        int64_t inner = a_split ? a->split_inner : b_split ? b->split_inner : 0;
        if ((a->split_inner > 0 && ad >= 0 && a->split_dim == ad && !a_split) ||
            (b->split_inner > 0 && bd >= 0 && b->split_dim == bd && !b_split) ||
            (a_split && b_split && a->split_inner != b->split_inner) || p.nb + 2 > MM_MAX_BATCH)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: a split view that the product cannot take");
        if (inner) {
            split = true;
            p.bdims[p.nb] = bdims[d] / inner;
            p.sa[p.nb] = a_split ? sa[d] : sa[d] * inner;
            p.sb[p.nb] = b_split ? sb[d] : sb[d] * inner;
            p.nb++;
            p.bdims[p.nb] = inner;
            p.sa[p.nb] = a_split ? a->split_stride : sa[d];
            p.sb[p.nb] = b_split ? b->split_stride : sb[d];
            p.nb++;
            continue;
        }
        p.bdims[p.nb] = bdims[d];
        p.sa[p.nb] = sa[d];
        p.sb[p.nb] = sb[d];
        p.nb++;
    }
    if (a->rank > 1) ydims[yrank++] = M;
    if (b->rank > 1) ydims[yrank++] = N;
    bool attention = false;
    if (!split) VKI_TRY(attention_rows_try(c, &p, nb, bdims, sa, sb, &attention));
    if (attention) return VKI_OK;
    VKI_TRY(op_set_output(c, 0, dt, yrank, ydims));
    return finish(c, &p);
}

static vki_status plan_gemm(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 3));
    VKI_TRY(op_require_float(c, 0));
    VKI_TRY(require_same_dtype(c, 1));
    if (op_has_input(c, 2)) VKI_TRY(require_same_dtype(c, 2));
    plan_value *a = op_in(c, 0), *b = op_in(c, 1), *cv = op_in(c, 2);
    if (a->rank != 2 || b->rank != 2) return op_error(c, VKI_ERROR_SHAPE, "Gemm takes 2-D A and B");
    bool trans_a = ir_attr_int(c->node, "transA", 0) != 0, trans_b = ir_attr_int(c->node, "transB", 0) != 0;
    int64_t M = trans_a ? a->dims[1] : a->dims[0], K = trans_a ? a->dims[0] : a->dims[1];
    int64_t Kb = trans_b ? b->dims[1] : b->dims[0], N = trans_b ? b->dims[0] : b->dims[1];
    if (K != Kb)
        return op_error(c, VKI_ERROR_SHAPE, "inner dimensions differ: op(A) has K=%lld, op(B) has K=%lld (transA=%d, transB=%d)",
                        (long long)K, (long long)Kb, trans_a, trans_b);
    mm_problem p = {
        .M = M, .N = N, .K = K,
        .sam = trans_a ? 1 : K, .sak = trans_a ? M : 1,
        .sbk = trans_b ? 1 : N, .sbn = trans_b ? K : 1,
        .alpha = ir_attr_float(c->node, "alpha", 1.0f), .beta = ir_attr_float(c->node, "beta", 1.0f),
    };
    if (cv) { /* C broadcasts unidirectionally to [M,N] (opset < 7's `broadcast` allowed it too) */
        if (cv->rank > 2) return op_error(c, VKI_ERROR_SHAPE, "C must have rank <= 2");
        int64_t cm = cv->rank == 2 ? cv->dims[0] : 1, cn = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
        if ((cm != M && cm != 1) || (cn != N && cn != 1))
            return op_error(c, VKI_ERROR_SHAPE, "C does not broadcast to [M,N] = [%lld,%lld]", (long long)M, (long long)N);
        p.has_c = true;
        p.c_value = op_in_index(c, 2);
        p.scn = cn == 1 ? 0 : 1;
        p.scm = cm == 1 ? 0 : cn;
    }
    int64_t ydims[2] = {M, N};
    VKI_TRY(op_set_output(c, 0, a->dtype, 2, ydims));
    return finish(c, &p);
}

const op_def op_MatMul = {"MatMul", "", "float32 float16 bfloat16 int32 int64", "", plan_matmul};
const op_def op_Gemm = {"Gemm", "", "float32 float16 bfloat16", "integer Gemm", plan_gemm};
