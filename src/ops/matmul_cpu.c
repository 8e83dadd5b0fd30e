/* MatMul and Gemm on CPU Vulkan devices (lavapipe): a register-blocked kernel without shared
 * memory or barriers that reads A and B as uniform texel buffers of RGBA32F texels
 * (shaders/matmul_cpu.glsl says why; matmul_cpu_lanes hands A's texels between lanes by
 * subgroupShuffle). B is repacked into column blocks at plan time
 * when it is a constant (weights), read in place when its rows (k) or its columns (K^T) are
 * whole texels, else packed by a copy dispatch (shaders/matmul_cpu_pack.comp); A is read in
 * place when its rows are whole texels, else padded the same two ways. */
#include "matmul.h"
#include "movement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keep in step with the Push block of shaders/matmul_cpu.glsl. */
typedef struct mm_cpu_push {
    uint32_t M, N, K4, a_row, b_row, scm, scn;
    float alpha, beta;
    uint32_t bd1, bd2, sa0, sa1, sa2, sb0, sb1, sb2;
    uint32_t a_base, b_base, y_base, batch_base;
    float lo, hi;
    mm_store_layout y; /* Y_LAYOUT: where Y(z, m, n) goes */
} mm_cpu_push;

/* Keep in step with the Push block of shaders/matmul_cpu_pack.comp. */
typedef struct mm_pack_push {
    uint32_t count, rows, cols, srow, scol, K4, bd1, bd2, s0, s1, s2, base;
} mm_pack_push;

/* Keep in step with the Push block of shaders/matmul_cpu_small.comp. */
typedef struct mm_small_push {
    uint32_t M, N, K, sam, sak, sbk, sbn, scm, scn;
    float alpha, beta;
    uint32_t bd1, bd2, sa0, sa1, sa2, sb0, sb1, sb2, batch_base, batches;
    float lo, hi;
    uint32_t a0, b0;
    mm_store_layout y; /* where Y(z, m, n) goes */
} mm_small_push;

enum { MM_PACK_LOCAL = 64 };

bool mm_cpu_kernels(const op_ctx *c)
{
    int force = c->vk->opts.matmul_kernels;
    if (force == OPT_KERNELS_GPU || force == OPT_KERNELS_SGEMM) return false;
    if (force == OPT_KERNELS_CPU) return true;
    return c->vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

/* The register block: rm rows x rn columns of Y per invocation, lx invocations (one SIMD
 * vector of llvmpipe: its subgroup) per workgroup along the columns. Per 4 k an invocation
 * fetches rm texels of A and rn of B for 4 rm rn multiply-adds, and perf samples on the JIT
 * code put 44% of the time in the fetches at 16 x 8, so the block is as large as compiles
 * fast; the accumulators spill to the stack past about 24 registers either way. Times of
 * [563,512] x [512,512] and a 1024 cube on llvmpipe (2 cores, 256-bit), the least loaded of
 * three alternating rounds on a shared machine: 16 x 8 12.0 / 100 ms, 8 x 16 9.2 / 98, 32 x 8
 * 8.9 / 72, 16 x 16 7.6 / 63 (28-39 GFLOP/s); 16 x 16 compiles in 40-50 ms, 32 x 16 and 16 x
 * 32 in 75-85 ms and ran no faster. Products of few rows take the smallest power of two rows
 * that covers them, narrow ones fewer columns, so as not to compute what does not exist. */
typedef struct mm_cpu_tiling {
    uint32_t rm, rn, lx;
    bool a_lanes; /* matmul_cpu_lanes: A fetched a lane each for rm's whole groups of lx rows */
} mm_cpu_tiling;

/* Small products (fewer than MM_CPU_SMALL_OUTPUTS elements of Y in all: a policy's layers at
 * batch 1 to 20) take at most 8 rows: a block's setup, spills and epilogue are paid per
 * workgroup, and the transformer policy's [20,64] x [64,128] products took 105-122 us with 16
 * rows against 53-57 with 8 (VKINFER_CPU_MM_BLOCK, --cpu-threads 0; all its products 0.52 ->
 * 0.30 ms). Batched ones count every batch's outputs: attention's products per head are small
 * but many (8 heads of [128,128] x [128,32] P V at 8 x 4 blocks, least of 4-5 profiled runs:
 * Q K^T and P V of a 4-layer d256 encoder 3.0-3.6 -> 2.4-2.5 ms with 16 rows; 8 heads of
 * [300,300] x [300,64] 2.5-3.8 -> 2.3-2.4 ms). */
enum { MM_CPU_SMALL_OUTPUTS = 32768 };
/* ... unless their K is long: then the k loop is what costs, not a block's setup and stores, and
 * larger blocks fetch less per multiply-add (Diffusion Policy's encoder at 96x96 crops, batch 2:
 * its last stage's [9,4608] x [4608,512] products per image, 1.6-3.1 ms each with 5-row blocks,
 * one llvmpipe thread) */
enum { MM_CPU_SMALL_K = 1024 };

/* Mesa 25's llvmpipe makes each texel fetch an indirect call that saves every live vector
 * register (Mesa 22.3's was cheaper), so there large products take 32 x 32 blocks: half the
 * fetches per multiply-add. Mesa 25.0.7, 2 cores, `VKINFER_CPU_MM_BLOCK`, least of 3 runs:
 * the 1024 cube 75.8 ms at 16 x 16, 67.5 at 32 x 16, 65.5 at 16 x 32, 59.0 at 32 x 32; on Mesa
 * 22.3 32 x 32 took 64.8 against 36.6. Mesa 23 and 24 were not measured and keep 16 x 16.
 * VKINFER_CPU_MM_WIDE=1|0 forces the choice (tests on Debian 12's Mesa run the wide blocks). */
static bool wide_blocks(const op_ctx *c)
{
    if (c->vk->opts.cpu_mm_wide != OPT_AUTO) return c->vk->opts.cpu_mm_wide;
    return c->vk->caps.llvmpipe_mesa_major >= 25;
}

/* A's texels fetched a lane each and handed round by subgroupShuffle (matmul_cpu_lanes)
 * where the workgroup is one subgroup with shuffles: A's fetches were half of a block's, at a
 * fetch per row and 4 k, and now are one per lx rows; the block's rows are rounded up to whole
 * lx where that adds at most a quarter. The 1024 cube and [563,512] x [512,512] (both inputs) on
 * one llvmpipe thread (Mesa 22.3, `--cpu-threads 0`, least of 6 runs, three alternations):
 * 66-74 / 8.8-9.0 ms without, 62-64 / 7.5-7.7 with at 16 x 16, 57-58 / 7.0-7.1 at 32 x 8 (32 x
 * 16, 24 x 16, 16 x 32, 40 x 8, 48 x 8, 64 x 8, 32 x 4 slower: 68-78 / 8.3-10.3). The blocks stay
 * 16 x 16: over 15 shapes of the CNNs, transformers and TD-MPC with B a constant (least of 4
 * alternating passes, the VM's spread 1.3-2.5x), 32 x 8 won on 4 and lost on 8 (the cube 52.7 against
 * 48.6 ms, 1x1 convolutions of K 16-24 up to 18% slower), and in whole graphs it was mixed
 * (docs/history/benchmarks-notebook.md, session 24), so the columns and narrow rules are the same with and
 * without. On Mesa 25.0.7 the cube went 112 -> 82 ms (32 x 32 there). VKINFER_CPU_MM_A_LANES=0
 * keeps a fetch per row (comparisons). */
static bool a_lanes_ok(const op_ctx *c, uint32_t lx)
{
    if (!c->vk->opts.cpu_mm_a_lanes) return false;
    return c->vk->caps.subgroup_shuffle && c->vk->caps.subgroup_size == lx;
}

static mm_cpu_tiling choose_tiling(const op_ctx *c, const mm_problem *p)
{
    int64_t outputs = p->M * p->N; /* over all batches: attention's heads bring workgroups enough */
    for (int i = 0; i < p->nb; i++) outputs *= p->bdims[i];
    uint32_t sg = c->vk->caps.subgroup_size, lx = sg >= 4 && sg <= 16 ? sg : 8;
    bool small = outputs < MM_CPU_SMALL_OUTPUTS && p->K < MM_CPU_SMALL_K, wide = !small && wide_blocks(c), lanes = a_lanes_ok(c, lx);
    uint32_t most = small ? 8 : wide ? 32 : 16;
    /* the rows shared out evenly over the fewest blocks of at most `most`: a 6x6 map's 36 rows
     * as 3 of 12, not 3 of 16 (a convolution's transposed product, src/ops/conv.c) */
    int64_t blocks = p->M > 0 ? (p->M + most - 1) / most : 1;
    uint32_t rm = (uint32_t)((p->M + blocks - 1) / blocks);
    if (rm < 1) rm = 1;
    mm_cpu_tiling t = {rm, 16, lx, false};
    /* with lanes, whole groups of lx rows where that adds at most a quarter, else the rows past
     * the last whole group fetched a row each (a 3x3 map's 9 pixels: 8 through the lanes and 1) */
    uint32_t rm_lanes = (rm + lx - 1) / lx * lx;
    if (lanes && 4 * rm_lanes <= 5 * rm) t.rm = rm_lanes;
    t.a_lanes = lanes && t.rm >= lx;
    if (wide && p->N > t.lx * 16) t.rn = 32; /* a workgroup's columns fill the wide blocks */
    /* narrow products fewer columns; larger ones keep 16 down to N = 8 lx (mobilenet_v2's
     * [384,64] x [64,196] took 0.70 ms with 8 columns, 0.48 with 16) */
    if (p->N < (small ? 2 * t.lx * 16 : t.lx * 8 + 1)) t.rn = p->N > 4 * t.lx ? 8 : 4;
    /* A read along m (A_T) comes in texels of 4 rows */
    if (p->sak != 1 && mm_cpu_a_t(p)) t.rm = (t.rm + 3) / 4 * 4;
    const opt_dims *block = &c->vk->opts.cpu_mm_block; /* RMxRN: tuning */
    if (block->n == 2) t.rm = block->v[0], t.rn = block->v[1], t.a_lanes = lanes && block->v[0] >= lx;
    return t;
}

/* B packed on the host, per distinct batch matrix of B, per workgroup's `groups` of lx blocks
 * of rn columns: [K4 * 4][lx][rn], zero-padded. Returns the value, -1 if B is not a host
 * constant, -2 out of memory. */
static int pack_b_on_host(op_ctx *c, const mm_problem *p, const mm_cpu_tiling *t, int64_t K4, int64_t groups)
{
    plan_value *b = op_value(c, p->b_value);
    if (!b->host) return -1;
    int64_t per = p->K * p->N, n_mat = per ? shape_numel(b->dims, b->rank) / per : 0;
    int64_t rn = t->rn, lx = t->lx, packed_per = groups * K4 * 4 * lx * rn;
    int value;
    float *dst = op_temp_const(c, VKI_DTYPE_FLOAT, n_mat * packed_per, &value);
    if (!dst) return -2;
    /* in 64 x 64 blocks, so that neither side's reads or writes stride through all of B (the
     * transposed products' weights are read along k); float32 read as itself, through memcpy:
     * an initializer's raw bytes need not be 4-byte aligned in the file's buffer (fuzz_model) */
    const unsigned char *f32 = b->dtype == VKI_DTYPE_FLOAT ? b->host : NULL;
    for (int64_t bi = 0; bi < n_mat; bi++)
        for (int64_t k0 = 0; k0 < p->K; k0 += 64)
            for (int64_t n0 = 0; n0 < p->N; n0 += 64)
                for (int64_t k = k0; k < k0 + 64 && k < p->K; k++)
                    for (int64_t n = n0; n < n0 + 64 && n < p->N; n++) {
                        size_t from = (size_t)(bi * per + k * p->sbk + n * p->sbn);
                        float v;
                        if (f32) memcpy(&v, f32 + from * sizeof v, sizeof v);
                        else v = (float)host_read_f64(b->dtype, b->host, from);
                        dst[bi * packed_per + ((n / (lx * rn) * K4 * 4 + k) * lx + n / rn % lx) * rn + n % rn] = v;
                    }
    return value;
}

/* A padded on the host to rows of K4 texels, per distinct batch matrix of A, when it is a
 * constant whose rows cannot be read in place (a convolution's weights with Cin*kh*kw not a
 * multiple of 4). Returns the value, -1 if A is not a host constant, -2 out of memory. */
static int pack_a_on_host(op_ctx *c, const mm_problem *p, int64_t K4)
{
    plan_value *a = op_value(c, p->a_value);
    if (!a->host) return -1;
    int64_t per = p->M * p->K, n_mat = per ? shape_numel(a->dims, a->rank) / per : 0;
    int value;
    float *dst = op_temp_const(c, VKI_DTYPE_FLOAT, n_mat * p->M * K4 * 4, &value);
    if (!dst) return -2;
    for (int64_t ai = 0; ai < n_mat; ai++)
        for (int64_t m = 0; m < p->M; m++)
            for (int64_t k = 0; k < K4 * 4; k++)
                dst[(ai * p->M + m) * K4 * 4 + k] =
                    k < p->K ? (float)host_read_f64(a->dtype, a->host, (size_t)(ai * per + m * p->sam + k * p->sak)) : 0.0f;
    return value;
}

/* Copies operand `input` (0: A, 1: B) of every product batch into the packed layout. */
static vki_status pack_on_device(op_ctx *c, const mm_problem *p, int input, const int64_t bd[3], const int64_t st[3],
                                 const mm_cpu_tiling *t, int64_t K4, int64_t count, int *value)
{
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, count, value));
    bool is_b = input == 1;
    mm_pack_push push = {(uint32_t)count, (uint32_t)(is_b ? p->K : p->M), (uint32_t)(is_b ? p->N : p->K),
                         (uint32_t)(is_b ? p->sbk : p->sam), (uint32_t)(is_b ? p->sbn : p->sak), (uint32_t)K4,
                         (uint32_t)bd[1], (uint32_t)bd[2], (uint32_t)st[0], (uint32_t)st[1], (uint32_t)st[2],
                         (uint32_t)(is_b ? p->b0 : p->a0)};
    uint32_t spec[4] = {MM_PACK_LOCAL, is_b, t->rn, t->lx};
    int values[2] = {input ? p->b_value : p->a_value, *value};
    uint32_t gx, gy;
    /* A a row per invocation (matmul_cpu_pack_rows.comp), the lanes on adjacent rows, where
     * its source fits a texel buffer of words: ACT's attention P ([8, 302, 302]) 6.3 ms a layer
     * on lavapipe an element per invocation (docs/history/benchmarks-notebook.md, session 23).
     * VKINFER_CPU_MM_PACK_ROWS=0 keeps the element kernel, for comparisons. */
    if (!is_b && c->vk->opts.cpu_mm_pack_rows &&
        (uint64_t)op_bound_numel(c, p->a_value) <= c->vk->caps.props.limits.maxTexelBufferElements) {
        push.count = (uint32_t)(count / (K4 * 4));
        uint32_t spec_rows[1] = {t->lx};
        op_grid_1d(push.count, t->lx, &gx, &gy);
        return op_dispatch(c, "matmul_cpu_pack_rows", spec_rows, 1, &push, sizeof push, values, 2, gx, gy, 1);
    }
    op_grid_1d((uint64_t)count, MM_PACK_LOCAL, &gx, &gy);
    return op_dispatch(c, "matmul_cpu_pack", spec, 4, &push, sizeof push, values, 2, gx, gy, 1);
}

/* p on shaders/matmul_cpu_small.comp: A and B read in place at their strides. */
static vki_status record_small(op_ctx *c, const mm_problem *p, const int64_t bd[3], const int64_t sa[3],
                               const int64_t sb[3], int64_t z_count)
{
    plan_value *y = op_value(c, p->y_value);
    uint32_t lx = c->vk->caps.subgroup_size >= 4 && c->vk->caps.subgroup_size <= 16 ? c->vk->caps.subgroup_size : 8;
    /* lanes over (batch, column block): as many batches a dispatch as keep x within the grid */
    int64_t blocks = (p->N + 3) / 4, gy = (p->M + 3) / 4, per = 65535 * (int64_t)lx / blocks;
    if (per < 1) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: %lld column blocks", (long long)blocks);
    mm_small_push push = {(uint32_t)p->M, (uint32_t)p->N, (uint32_t)p->K, (uint32_t)p->sam, (uint32_t)p->sak,
                          (uint32_t)p->sbk, (uint32_t)p->sbn, (uint32_t)p->scm, (uint32_t)p->scn, p->alpha, p->beta,
                          (uint32_t)bd[1], (uint32_t)bd[2], (uint32_t)sa[0], (uint32_t)sa[1], (uint32_t)sa[2],
                          (uint32_t)sb[0], (uint32_t)sb[1], (uint32_t)sb[2], 0, 0, p->lo, p->hi, (uint32_t)p->a0,
                          (uint32_t)p->b0, mm_dense_layout(z_count, p->M, p->N)};
    uint32_t spec[4] = {lx, op_dtype_code(y->dtype), p->has_c, op_act_code(p->clamp, p->lo, p->hi)};
    int values[4] = {p->a_value, p->b_value, p->has_c ? p->c_value : p->a_value, p->y_value};
    /* a Transpose after it (attention's heads moved back beside the sequence, after P V) stored
     * through: not a copy of its own */
    if (p->readers_value > 0 && !p->has_r && !p->y_t)
        VKI_TRY(mm_store_transposed(c, p->readers_value - 1, p->y_value, y->dims, y->rank, z_count, p->M, p->N, GPU_W32,
                                    &push.y, &values[3]));
    for (int64_t z0 = 0, gz; z0 < z_count; z0 += gz) {
        gz = z_count - z0 < per ? z_count - z0 : per;
        push.batch_base = (uint32_t)z0;
        push.batches = (uint32_t)gz;
        uint32_t gx = (uint32_t)((gz * blocks + lx - 1) / lx);
        VKI_TRY(op_dispatch(c, "matmul_cpu_small", spec, 4, &push, sizeof push, values, 4, gx, (uint32_t)gy, 1));
        op_note_flops(c, mm_flops(p, gz));
    }
    return VKI_OK;
}

/* Narrow products (at most MM_CPU_NARROW columns and many rows: a 1-D U-Net's convolutions at
 * batch 1, [2048, 10240] x [10240, 4]) leave all but one lane of a workgroup idle, its lanes
 * running along N. They run transposed, Y^T = B^T A^T (A's rows become the columns the lanes
 * share out; the weights A are repacked at plan time as any constant B is), stored transposed
 * into Y's layout (Y_T) where the kernel reads their A in place, else into a scratch that one
 * strided copy puts back in Y's layout (a fused residual is added after either). Measured on
 * lavapipe (2 cores): Diffusion Policy's U-Net denoising step (LeRobot 0.6.1, 1 GB of weights)
 * 766 -> 190 ms (docs/history/benchmarks-notebook.md).
 * *taken false: not such a product, or the transposed one is not taken either. */
enum { MM_CPU_NARROW = 16 };

static vki_status record_transposed(op_ctx *c, const mm_problem *p, bool *taken)
{
    *taken = false;
    /* Y held in 32-bit words: the scratch is what the kernel writes, and the copy back moves
     * words without converting them */
    if (!c->vk->opts.cpu_mm_transpose || p->y_t || p->N > MM_CPU_NARROW || p->M < 64 || p->M < 4 * p->N ||
        op_storage(c, p->y_value) != GPU_W32)
        return VKI_OK;
    if (p->has_r) { /* R lies as Y does, not as Y^T: the product (transposed), then an Add */
        *taken = true;
        return mm_record_then_add(c, p);
    }
    plan_value *y = op_value(c, p->y_value);
    mm_problem q = *p;
    q.M = p->N, q.N = p->M;
    q.a_value = p->b_value, q.sam = p->sbn, q.sak = p->sbk;
    q.b_value = p->a_value, q.sbk = p->sak, q.sbn = p->sam;
    q.a0 = p->b0, q.b0 = p->a0;
    q.scm = p->scn, q.scn = p->scm;
    memcpy(q.sa, p->sb, sizeof q.sa);
    memcpy(q.sb, p->sa, sizeof q.sb);
    /* the transposed product stores Y^T transposed, i.e. in Y's own layout (Y_T), where it
     * reads its A (X, or p's B) in place: no scratch and no copy back (the 1-D U-Net policy's
     * ConvTranspose: its copy took 34 of the network's 164 us on lavapipe, --cpu-threads 0).
     * VKINFER_CPU_MM_Y_T=0 keeps the scratch and the copy, for comparisons. */
    if (c->vk->opts.cpu_mm_y_t) {
        mm_problem r = q;
        r.y_t = true;
        r.y_value = p->y_value;
        VKI_TRY(mm_record_cpu(c, &r, taken));
        if (*taken) return VKI_OK;
    }
    int64_t z = 1;
    for (int i = 0; i < p->nb; i++) z *= p->bdims[i];
    VKI_TRY(op_temp(c, y->dtype, z * p->M * p->N, &q.y_value));
    VKI_TRY(mm_record_cpu(c, &q, taken));
    if (!*taken) return VKI_OK;
    strided_copy back = {.rank = 3, .dims = {z, p->M, p->N}, .in_strides = {p->M * p->N, 1, p->M},
                         .out_strides = {p->M * p->N, p->N, 1}};
    return copy_values(c, q.y_value, p->y_value, &back, op_storage(c, p->y_value));
}

vki_status mm_record_cpu(op_ctx *c, const mm_problem *p, bool *taken)
{
    *taken = false;
    plan_value *a = op_value(c, p->a_value), *b = op_value(c, p->b_value), *y = op_value(c, p->y_value);
    plan_value *cv = p->has_c ? op_value(c, p->c_value) : NULL;
    if (!dtype_is_float(y->dtype) || p->nb > MM_SHADER_BATCH_DIMS || p->K == 0) return VKI_OK;
    VKI_TRY(record_transposed(c, p, taken));
    if (*taken) return VKI_OK;
    mm_cpu_tiling t = choose_tiling(c, p);
    /* workgroups of lx column blocks; B is packed per workgroup, zero-padded past N */
    int64_t K4 = (p->K + 3) / 4, gx = (p->N + t.lx * t.rn - 1) / (t.lx * t.rn), gy = (p->M + t.rm - 1) / t.rm;
    if (gx > 65535 || gy > 65535) return VKI_OK;

    int64_t bd[3] = {1, 1, 1}, sa[3] = {0, 0, 0}, sb[3] = {0, 0, 0};
    for (int i = 0; i < p->nb; i++) {
        int slot = 3 - p->nb + i;
        bd[slot] = p->bdims[i];
        sa[slot] = p->sa[i];
        sb[slot] = p->sb[i];
    }
    int64_t z_count = bd[0] * bd[1] * bd[2];
    /* (a strided Slice's view, from its first element a0 or b0: in place where that is a texel's) */
    bool a_direct = p->sak == 1 && p->K % 4 == 0 && p->sam % 4 == 0 && sa[0] % 4 == 0 && sa[1] % 4 == 0 && sa[2] % 4 == 0 &&
                    p->a0 % 4 == 0;
    /* A read in place along m (A_T: a 1x1 convolution's transposed product reading X as it is) */
    bool a_t = !a_direct && mm_cpu_a_t(p) && t.rm % 4 == 0 && sa[0] % 4 == 0 && sa[1] % 4 == 0 && sa[2] % 4 == 0;
    bool a_host = !a_direct && !a_t && a->host && p->M * p->K > 0;
    bool b_host = b->host && p->K * p->N > 0;
    /* B's rows read in place as texels; constant weights are repacked all the same, for free */
    bool b_direct = !b_host && p->sbn == 1 && p->K % 4 == 0 && p->sbk % 4 == 0 && sb[0] % 4 == 0 && sb[1] % 4 == 0 &&
                    sb[2] % 4 == 0 && p->b0 % 4 == 0;
    /* N not a multiple of 4: in place only where every row is padded to whole texels inside
     * the buffer (Conv's im2col columns on CPU devices); the columns past N are never stored */
    int64_t n_texels = (p->N + 3) / 4 * 4;
    if (b_direct && p->N % 4)
        b_direct = p->sbk >= n_texels && (bd[0] - 1) * sb[0] + (bd[1] - 1) * sb[1] + (bd[2] - 1) * sb[2] +
                   (p->K - 1) * p->sbk + n_texels <= op_bound_numel(c, p->b_value) - p->b0;
    /* B whose columns are whole texels along k (attention's K^T, a view of K: sbk 1) is read in
     * place too, a texel per column and 4 k (B_KT), instead of packed by a copy dispatch first
     * (VKINFER_CPU_MM_KT=0: packed, for comparisons) */
    bool b_kt = !b_host && !b_direct && c->vk->opts.cpu_mm_kt && p->sbk == 1 && p->K % 4 == 0 &&
                p->sbn % 4 == 0 && sb[0] % 4 == 0 && sb[1] % 4 == 0 && sb[2] % 4 == 0 && p->b0 % 4 == 0;
    /* Small products whose A or B the register-blocked kernel would first copy on the device
     * (attention's Q K^T and P V at short sequences, through transposed views): read in place
     * by matmul_cpu_small, whose speed (a few GFLOP/s) beats a copy dispatch's cost (about
     * 10 us on lavapipe, plus the copy) up to about 32768 + 4 * (elements copied) multiply-adds;
     * a K^T read in place (B_KT) is no copy (the policy transformer's [10,16] x [16,10] Q K^T:
     * 11-19 us on matmul_cpu_small, 11 us on matmul_cpu) */
    bool a_copy = !a_direct && !a_host && !a_t, b_copy = !b_direct && !b_host && !b_kt;
    if (p->y_t && (a_copy || b_copy || !(a_direct || a_t))) return VKI_OK; /* a transposed Y needs A in place */
    int64_t copied = (a_copy ? z_count * p->M * p->K : 0) + (b_copy ? z_count * p->K * p->N : 0);
    uint64_t words = c->vk->caps.props.limits.maxTexelBufferElements;
    if ((a_copy || b_copy) && p->M * p->N * p->K * z_count <= 32768 + 4 * copied &&
        (uint64_t)op_bound_numel(c, p->a_value) <= words && (uint64_t)op_bound_numel(c, p->b_value) <= words &&
        p->M <= 65535 * 4 && (uint64_t)shape_numel(y->dims, y->rank) * 4 <= op_max_binding_bytes(c) &&
        (!cv || (uint64_t)shape_numel(cv->dims, cv->rank) * 4 <= op_max_binding_bytes(c))) {
        *taken = true;
        if (p->has_r) return mm_record_then_add(c, p); /* matmul_cpu_small takes no residual */
        return record_small(c, p, bd, sa, sb, z_count);
    }
    int64_t a_matrices = a_host ? shape_numel(a->dims, a->rank) / (p->M * p->K) : z_count;
    int64_t b_matrices = b_host ? shape_numel(b->dims, b->rank) / (p->K * p->N) : z_count;
    int64_t a_packed = a_matrices * p->M * K4 * 4, b_packed = b_matrices * gx * K4 * 4 * t.lx * t.rn;
    /* A and B (or their packed copies) are bound whole as texel buffers, C and Y as storage
     * buffers: larger ones take the GPU kernels' windows */
    uint64_t range = op_max_binding_bytes(c), texels = c->vk->caps.props.limits.maxTexelBufferElements;
    int64_t a_numel = a_direct || a_t ? op_bound_numel(c, p->a_value) : a_packed;
    int64_t b_numel = b_direct || b_kt ? op_bound_numel(c, p->b_value) : b_packed;
    if ((uint64_t)a_numel / 4 > texels || (uint64_t)b_numel / 4 > texels || a_numel > UINT32_MAX || b_numel > UINT32_MAX)
        return VKI_OK;
    if ((uint64_t)shape_numel(y->dims, y->rank) * 4 > range || shape_numel(y->dims, y->rank) > UINT32_MAX) return VKI_OK;
    if (cv && (uint64_t)shape_numel(cv->dims, cv->rank) * 4 > range) return VKI_OK;

    mm_cpu_push push = {
        .M = (uint32_t)p->M, .N = (uint32_t)p->N, .K4 = (uint32_t)K4, .scm = (uint32_t)p->scm, .scn = (uint32_t)p->scn,
        .alpha = p->alpha, .beta = p->beta, .bd1 = (uint32_t)bd[1], .bd2 = (uint32_t)bd[2], .lo = p->lo, .hi = p->hi,
    };
    int a_value = a_host ? pack_a_on_host(c, p, K4) : -1, b_value;
    if (a_value == -2) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory padding A");
    if (a_direct || a_t) {
        a_value = p->a_value;
        push.a_base = (uint32_t)(p->a0 / 4);
        push.a_row = (uint32_t)((a_t ? p->sak : p->sam) / 4); /* A_T: texels between k and k + 1 */
        push.sa0 = (uint32_t)(sa[0] / 4), push.sa1 = (uint32_t)(sa[1] / 4), push.sa2 = (uint32_t)(sa[2] / 4);
    } else if (a_value >= 0) {
        /* batch strides of A count whole matrices of M*K; the padded ones M*K4 texels */
        int64_t per = p->M * p->K, per_padded = p->M * K4;
        push.a_row = (uint32_t)K4;
        push.sa0 = (uint32_t)(sa[0] / per * per_padded), push.sa1 = (uint32_t)(sa[1] / per * per_padded);
        push.sa2 = (uint32_t)(sa[2] / per * per_padded);
    } else {
        VKI_TRY(pack_on_device(c, p, 0, bd, sa, &t, K4, a_packed, &a_value));
        push.a_row = (uint32_t)K4;
        push.sa2 = (uint32_t)(p->M * K4), push.sa1 = push.sa2 * (uint32_t)bd[2], push.sa0 = push.sa1 * (uint32_t)bd[1];
    }
    int64_t per_matrix = gx * K4 * t.lx * t.rn; /* texels of one packed matrix */
    b_value = b_direct || b_kt ? -1 : pack_b_on_host(c, p, &t, K4, gx);
    push.b_row = (uint32_t)(t.lx * t.rn / 4);
    if (b_value == -2) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory repacking B");
    if (b_value >= 0) {
        /* batch strides of B count whole matrices of K*N; the packed ones whole packed blocks */
        int64_t per = p->K * p->N;
        push.sb0 = (uint32_t)(sb[0] / per * per_matrix), push.sb1 = (uint32_t)(sb[1] / per * per_matrix);
        push.sb2 = (uint32_t)(sb[2] / per * per_matrix);
    } else if (b_direct || b_kt) {
        b_value = p->b_value;
        push.b_base = (uint32_t)(p->b0 / 4);
        push.b_row = (uint32_t)((b_kt ? p->sbn : p->sbk) / 4);
        push.sb0 = (uint32_t)(sb[0] / 4), push.sb1 = (uint32_t)(sb[1] / 4), push.sb2 = (uint32_t)(sb[2] / 4);
    } else {
        VKI_TRY(pack_on_device(c, p, 1, bd, sb, &t, K4, b_packed, &b_value));
        push.sb2 = (uint32_t)per_matrix, push.sb1 = push.sb2 * (uint32_t)bd[2], push.sb0 = push.sb1 * (uint32_t)bd[1];
    }

    bool y_vec4 = !p->y_t && p->N % 4 == 0 && push.y_base % 4 == 0;
    /* without C (R), binding 2 (4) repeats Y's input A: the shader never reads it */
    int values[5] = {a_value, b_value, p->has_c ? p->c_value : a_value, p->y_value, p->has_r ? p->r_value : a_value};
    /* a Transpose after it (attention's heads moved back beside the sequence, after P V) stored
     * through (Y_LAYOUT): not a copy of its own */
    bool y_layout = false;
    if (p->readers_value > 0 && !p->has_r && !p->y_t && push.y_base == 0) {
        VKI_TRY(mm_store_transposed(c, p->readers_value - 1, p->y_value, y->dims, y->rank, z_count, p->M, p->N, GPU_W32,
                                    &push.y, &values[3]));
        y_layout = values[3] != p->y_value;
        mm_store_layout *l = &push.y;
        if (y_layout) y_vec4 = y_vec4 && l->a % 4 == 0 && l->a2 % 4 == 0 && l->b % 4 == 0 && l->nb % 4 == 0 && l->c % 4 == 0;
    }
    /* C constant along N (a convolution's bias) or along M (a Linear's): loaded once per row or
     * column (C_ALONG); VKINFER_CPU_MM_C_ALONG=0 loads it per element, for comparisons */
    uint32_t c_along = !p->has_c || !c->vk->opts.cpu_mm_c_along ? 0 : p->scn == 0 ? 1 : p->scm == 0 ? 2 : 0;
    uint32_t spec[14] = {t.lx, op_dtype_code(y->dtype), t.rm, t.rn, p->has_c, op_act_code(p->clamp, p->lo, p->hi), b_direct,
                         y_vec4, p->has_r, p->y_t, b_kt, c_along, a_t, y_layout};
    const char *kernel = t.a_lanes ? "matmul_cpu_lanes" : "matmul_cpu";
    for (int64_t z0 = 0, gz; z0 < z_count; z0 += gz) {
        gz = z_count - z0 < 65535 ? z_count - z0 : 65535;
        push.batch_base = (uint32_t)z0;
        VKI_TRY(op_dispatch(c, kernel, spec, 14, &push, sizeof push, values, 5, (uint32_t)gx, (uint32_t)gy,
                            (uint32_t)gz));
        op_note_flops(c, mm_flops(p, gz));
    }
    *taken = true;
    return VKI_OK;
}

bool mm_cpu_a_t(const mm_problem *p)
{
    return p->sam == 1 && p->sak % 4 == 0 && p->M % 4 == 0 && p->K % 4 == 0 && p->a0 % 4 == 0 && p->M > 1 && p->K > 1;
}

bool mm_cpu_fits(op_ctx *c, const mm_problem *p, int64_t a_numel)
{
    plan_value *y = op_value(c, p->y_value);
    if (!dtype_is_float(y->dtype) || p->nb > MM_SHADER_BATCH_DIMS || p->K == 0 || p->K % 4 ||
        !((p->sak == 1 && p->sam % 4 == 0) || mm_cpu_a_t(p)))
        return false;
    mm_cpu_tiling t = choose_tiling(c, p);
    if (p->sak != 1 && t.rm % 4) return false; /* A_T's row blocks are whole texels */
    int64_t K4 = p->K / 4, gx = (p->N + t.lx * t.rn - 1) / (t.lx * t.rn), gy = (p->M + t.rm - 1) / t.rm, n_mat = 1;
    for (int i = 0; i < p->nb; i++) {
        n_mat *= p->bdims[i];
        if (p->sa[i] % 4) return false;
    }
    int64_t b_packed = n_mat * gx * K4 * 4 * t.lx * t.rn;
    int64_t y_numel = shape_numel(y->dims, y->rank);
    uint64_t range = op_max_binding_bytes(c), texels = c->vk->caps.props.limits.maxTexelBufferElements;
    return gx <= 65535 && gy <= 65535 && (uint64_t)a_numel / 4 <= texels && (uint64_t)b_packed / 4 <= texels &&
           a_numel <= UINT32_MAX && b_packed <= UINT32_MAX && (uint64_t)y_numel * 4 <= range && y_numel <= UINT32_MAX;
}

/* Per workgroup and 4 k: each of its lx invocations fetches rm texels of A and rn of B (about 40
 * instructions a fetch on llvmpipe, shaders/matmul_cpu.glsl) and applies 4 rm rn multiply-adds
 * to spilled accumulators (about 1.5 instructions each); the padding past M and N is computed too. */
double mm_cpu_cost(const op_ctx *c, int64_t M, int64_t N, int64_t K)
{
    mm_problem p = {.M = M, .N = N, .K = K};
    mm_cpu_tiling t = choose_tiling(c, &p);
    double blocks = (double)((M + t.rm - 1) / t.rm) * (double)((N + t.lx * t.rn - 1) / (t.lx * t.rn));
    /* lanes: a fetch per lx rows and a shuffle per row and k; the rows past them a fetch each */
    double a_fetches = t.a_lanes ? 40.0 * (t.rm / t.lx + t.rm % t.lx) + 4.0 * t.rm : 40.0 * t.rm;
    return blocks * (double)((K + 3) / 4) * (a_fetches + 40.0 * t.rn + 6.0 * t.rm * t.rn);
}
