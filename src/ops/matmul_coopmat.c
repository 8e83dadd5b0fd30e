/* Choosing the tensor-core MatMul kernel and its tiles. The kernels take matmul_tiled's push
 * constants, grid and specialization constants (plus OUT_WORDS, and the aligned kernels their
 * tile shape), so src/ops/matmul_record.c records them in matmul_tiled's place; this file
 * decides when. The aligned kernel exists twice, on VK_NV_cooperative_matrix (matmul_coopmat_f16_aligned) and
 * on VK_KHR_cooperative_matrix (matmul_coopmat_khr_f16, same constants); the element-wise
 * loading kernel matmul_coopmat_f16 only on NV. */
#include "matmul_coopmat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    COOPMAT_MIN_DIM = 64,    /* smaller products leave most of a 64 tile idle: matmul_tiled */
    COOPMAT_BUSY_GROUPS = 256, /* 128 tiles when they alone keep an H200's 132 SMs busy */
    COOPMAT2_LONG_K = 2048     /* K steps of 64 for 64 x 64 blocks from here */
};

/* A block of Y per workgroup (bm x bn), per subgroup (wm x wn), and the K step. */
typedef struct coopmat_tile {
    uint32_t bm, bn, wm, wn, bk;
} coopmat_tile;

static bool tile_valid(coopmat_tile t)
{
    if (!t.bm || !t.bn || !t.wm || !t.wn || (t.bk != 32 && t.bk != 64)) return false;
    if (t.wm % 16 || t.wn % 16 || t.wm > 64 || t.wn > 64 || t.bm % t.wm || t.bn % t.wn) return false;
    uint32_t local = 32 * (t.bm / t.wm) * (t.bn / t.wn);
    if (local > 1024) return false;
    /* every invocation fetches the same number of 8-half runs of each operand, at most 8 */
    uint32_t a_runs = t.bm * t.bk / 8, b_runs = t.bn * t.bk / 8;
    return a_runs % local == 0 && b_runs % local == 0 && a_runs / local <= 8 && b_runs / local <= 8;
}

/* Shared bytes of the aligned kernel: padded A and B tiles (once or twice) and the staging of
 * one 16x16 fp32 accumulator per subgroup; the larger of the two layouts of each operand. */
static uint32_t shared_bytes(coopmat_tile t, bool double_buf)
{
    uint32_t a_km = t.bm * (t.bk / 8 + 1), a_mk = t.bk * (t.bm / 8 + 1);
    uint32_t b_nk = t.bn * (t.bk / 8 + 1), b_kn = t.bk * (t.bn / 8 + 1);
    uint32_t vecs = (a_km > a_mk ? a_km : a_mk) + (b_nk > b_kn ? b_nk : b_kn);
    return 16 * vecs * (double_buf ? 2 : 1) + 4 * 256 * (t.bm / t.wm) * (t.bn / t.wn);
}

/* The KHR kernel where the device has only that extension, or where VKINFER_COOPMAT=khr enabled
 * it beside the NV one (vk_device_open decides; measured on the H200, the two run at the same
 * speed, so NV stays the default there). */
static const char *aligned_shader(const vk_caps *caps)
{
    return caps->cooperative_matrix_khr ? "matmul_coopmat_khr_f16" : "matmul_coopmat_f16_aligned";
}

static bool choose_aligned(op_ctx *c, int64_t M, int64_t N, int64_t batches, mm_coopmat_kernel *k)
{
    /* 128 x 256 blocks of eight 64 x 64 warp tiles where they fill the GPU, 64 x 64 blocks of
     * four 32 x 32 warp tiles otherwise. Measured on the H200 (driver 580), every tile shape
     * within 10%: its VK_NV_cooperative_matrix products run at ~37 TFLOP/s even with no
     * loads at all, so the product, not the memory path, bounds this kernel there. */
    coopmat_tile t = {128, 256, 64, 64, 32};
    if ((M + 127) / 128 * ((N + 255) / 256) * batches < COOPMAT_BUSY_GROUPS) t = (coopmat_tile){64, 64, 32, 32, 32};
    /* VKINFER_COOPMAT_TILE=BMxBNxWMxWNxBK overrides (tuning on a new device) */
    const opt_dims *forced = &c->vk->opts.coopmat_tile;
    if (forced->n == 5) {
        coopmat_tile e = {forced->v[0], forced->v[1], forced->v[2], forced->v[3], forced->v[4]};
        if (tile_valid(e)) t = e;
    }
    uint32_t limit = c->vk->caps.props.limits.maxComputeSharedMemorySize;
    bool double_buf = shared_bytes(t, true) <= limit;
    if (!tile_valid(t) || shared_bytes(t, false) > limit) return false;
    k->shader = aligned_shader(&c->vk->caps);
    k->tile_m = t.bm;
    k->tile_n = t.bn;
    k->local = 32 * (t.bm / t.wm) * (t.bn / t.wn);
    k->n_spec = 15;
    uint32_t tail[6] = {0, t.bm, t.wm, t.wn, t.bk, double_buf}; /* ids 9..14; 9 set by the caller */
    memcpy(k->spec_tail, tail, sizeof tail);
    return true;
}

/* Issue 37's candidate, for bench/tuning/coopmat2_experiment.sh: VKINFER_COOPMAT2_EXP=dims runs
 * matmul_coopmat2_dims_*, which take M, N, K and the operand strides as specialization
 * constants (src/ops/matmul_record.c sets them), a pipeline per shape. Measured on the H200 at
 * 4096^3: 282 against 265 TFLOP/s fp16, 285 against 267 bf16 (cuBLAS 730); whether it becomes the
 * default waits for transformer shapes. vec4 (uvec4 views of aligned operands), acc16 (fp16
 * sums) and fullsg (full 32-wide subgroups) measured no faster and were removed. */
static void coopmat2_candidate(const op_ctx *c, bool bf16, mm_coopmat_kernel *k)
{
    if (!(c->vk->opts.coopmat2_exp & OPT_CM2_EXP_DIMS)) return;
    k->shader = bf16 ? "matmul_coopmat2_dims_bf16" : "matmul_coopmat2_dims_f16";
    k->n_spec = 22;
}

/* VK_NV_cooperative_matrix2's workgroup-scope kernel (matmul_coopmat2_f16): any strides, the
 * driver stages the tiles. Blocks of 128 x 256 on the largest workgroup the device offers where
 * they fill the GPU, 128 x 128 next, then 64 x 128 and 64 x 64 on the smallest; each a multiple
 * of that size's granularity. 64 x 64 blocks take K in steps of 64 where K is long and they are
 * few. Measured on the H200 (bench/tuning/tile_sweep.py): BERT-base's [1024,768]x[768,3072] 0.048
 * -> 0.037 ms with 64 x 128 blocks, [1024,3072]x[3072,768] 0.049 -> 0.042 ms with K steps of
 * 64; resnet50's batch-32 [128,1152]x[1152,25088] 0.090 -> 0.054 (64 x 128), [512,4608] x
 * [4608,1568] 0.127 -> 0.101 (K steps of 64), but [256,2304]x[2304,6272] (392 blocks) 0.057
 * with steps of 32 against 0.068 with 64; the 4096 cube keeps 128 x 256. VKINFER_COOPMAT2_TILE=BMxBNxBKxLOCAL overrides (tuning on
 * a new device). */
static bool choose_coopmat2(op_ctx *c, int64_t M, int64_t N, int64_t K, int64_t batches, uint32_t aligned,
                            bool bf16, mm_coopmat_kernel *k)
{
    const vk_caps *caps = &c->vk->caps;
    int big = -1, small = -1;
    for (int i = 0; i < 4 && caps->coopmat2_local[i]; i++) {
        if (big < 0 || caps->coopmat2_local[i] > caps->coopmat2_local[big]) big = i;
        if (small < 0 || caps->coopmat2_local[i] < caps->coopmat2_local[small]) small = i;
    }
    if (big < 0) return false;
    uint32_t bm = 128, bn = 256, bk = 32, local = caps->coopmat2_local[big];
    if ((M + 127) / 128 * ((N + 255) / 256) * batches < COOPMAT_BUSY_GROUPS) bn = 128;
    /* products of 64 rows or fewer (ResNet's layer1 convolutions, batched over the images)
     * take 64-row blocks: a 128-row one idles half its tensor cores */
    if (M <= 64 || (M + 127) / 128 * ((N + 127) / 128) * batches < COOPMAT_BUSY_GROUPS) {
        bm = 64;
        bn = (M + 63) / 64 * ((N + 127) / 128) * batches >= COOPMAT_BUSY_GROUPS ? 128 : 64;
        if (bn == 64 && K >= COOPMAT2_LONG_K && (M + 63) / 64 * ((N + 63) / 64) * batches < COOPMAT_BUSY_GROUPS) bk = 64;
        local = caps->coopmat2_local[small] >= 128 ? caps->coopmat2_local[small] : 128;
    }
    const opt_dims *forced = &c->vk->opts.coopmat2_tile;
    if (forced->n == 4) bm = forced->v[0], bn = forced->v[1], bk = forced->v[2], local = forced->v[3];
    bool offered = false;
    for (int i = 0; i < 4 && caps->coopmat2_local[i]; i++)
        offered |= caps->coopmat2_local[i] == local && bm % caps->coopmat2_gran_m[i] == 0 &&
                   bn % caps->coopmat2_gran_n[i] == 0 && bk % 16 == 0;
    if (!offered) return false;
    /* VKINFER_COOPMAT2_GROUP_M=G takes the blocks in columns G tall (the shader's GROUP_M) */
    uint32_t group_m = (uint32_t)c->vk->opts.coopmat2_group_m;
    /* K steps unrolled 16 at a time (the shader's UNROLL): measured on the H200 (bench/tuning/tile_sweep.py,
     * 4096^3 on 128 x 256 x 32 blocks, GPU ms of the product, alternating rounds): 2 steps 217.8 /
     * 218.9 TFLOP/s, 4 (until session 18) 245.4 / 245.0, 8 259.3 / 260.8 / 260.3 / 259.8, 12 256.9,
     * 16 268.4 / 267.9 / 267.4; BERT's [1024,768]x[768,3072] 0.043 ms with 4, 0.042 with 8 or 16,
     * resnet50's [256,2304]x[2304,6272] 0.077-0.081 with any. VKINFER_COOPMAT2_UNROLL=S (1 to 32)
     * overrides, for tuning. */
    uint32_t steps = (uint32_t)c->vk->opts.coopmat2_unroll;
    *k = (mm_coopmat_kernel){bf16 ? "matmul_coopmat2_bf16" : "matmul_coopmat2_f16", bm, bn, local, 15,
                             {0, bm, bk, aligned, group_m, steps}};
    coopmat2_candidate(c, bf16, k);
    return true;
}

bool mm_coopmat_choose(op_ctx *c, const int values[4], int64_t M, int64_t N, int64_t K, int64_t batches,
                       bool rows_of_8, uint32_t aligned, mm_coopmat_kernel *k, gpu_storage stores[4])
{
    const vk_caps *caps = &c->vk->caps;
    if (!caps->cooperative_matrix && !caps->cooperative_matrix_khr && !caps->cooperative_matrix2) return false;
    /* VKINFER_MATMUL_KERNELS=tiled keeps the scalar kernels, =coopmat_general the element-wise
     * loading coopmat kernel (comparisons on one device) */
    int force = c->vk->opts.matmul_kernels;
    if (force == OPT_KERNELS_TILED) return false;
    bool general = force == OPT_KERNELS_COOPMAT_GENERAL;
    /* the workgroup-scope kernel clamps its edge blocks itself: products from 32 up (ResNet's
     * 7x7 maps, N = 49, ran on matmul_tiled_f16 at 0.48 ms each) */
    int64_t min_dim = caps->cooperative_matrix2 && !general ? 32 : COOPMAT_MIN_DIM;
    if (M < min_dim || N < min_dim || K < min_dim) return false;
    if (2.0 * (double)M * (double)N * (double)K * (double)batches < (double)c->vk->opts.coopmat_min_flops) return false;
    gpu_storage half = op_half_storage(c, values, 3), ys = op_storage(c, values[3]);
    /* bfloat16 operands: only the workgroup-scope kernel, where the device offers them */
    if (half == GPU_BF16 && caps->cooperative_matrix2 && caps->cooperative_matrix2_bf16 && !general && ys == GPU_BF16 &&
        choose_coopmat2(c, M, N, K, batches, aligned, true, k)) {
        k->spec_tail[0] = 0; /* OUT_WORDS */
        stores[0] = stores[1] = stores[2] = stores[3] = GPU_BF16;
        return true;
    }
    if (half != GPU_F16) return false;
    /* fp32 words: a float32 output of the fp16 mode (graph outputs stay words) */
    if (ys != GPU_F16 && !(ys == GPU_W32 && op_value(c, values[3])->dtype == VKI_DTYPE_FLOAT)) return false;
    bool chosen = caps->cooperative_matrix2 && !general && choose_coopmat2(c, M, N, K, batches, aligned, false, k);
    if (!chosen && !general && rows_of_8 && (caps->cooperative_matrix || caps->cooperative_matrix_khr))
        chosen = choose_aligned(c, M, N, batches, k);
    if (!chosen) {
        if (!caps->cooperative_matrix) return false; /* the element-wise loading kernel exists on NV only */
        int64_t groups128 = (M + 127) / 128 * ((N + 127) / 128) * batches;
        uint32_t tile = groups128 >= COOPMAT_BUSY_GROUPS ? 128 : 64;
        *k = (mm_coopmat_kernel){"matmul_coopmat_f16", tile, tile, 128, 10, {0}};
    }
    k->spec_tail[0] = ys == GPU_W32; /* OUT_WORDS */
    stores[0] = stores[1] = stores[2] = GPU_F16;
    stores[3] = ys;
    return true;
}
