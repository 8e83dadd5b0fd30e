/* MatMul and Gemm on CPU Vulkan devices (lavapipe): register-blocked kernels without shared
 * memory or barriers (shaders/matmul_cpu.comp). B is repacked into column blocks, at plan time
 * when it is a constant (weights), else by a copy dispatch (shaders/matmul_cpu_pack.comp); A
 * is read in place when its rows are whole vec4s, else copied the same way. */
#include "matmul.h"

#include <stdlib.h>
#include <string.h>

/* Keep in step with the Push block of shaders/matmul_cpu.comp. */
typedef struct mm_cpu_push {
    uint32_t M, N, K4, a_row, b_row, scm, scn;
    float alpha, beta;
    uint32_t bd1, bd2, sa0, sa1, sa2, sb0, sb1, sb2;
    uint32_t a_base, b_base, y_base, batch_base;
    float lo, hi;
} mm_cpu_push;

/* Keep in step with the Push block of shaders/matmul_cpu_pack.comp. */
typedef struct mm_pack_push {
    uint32_t count, rows, cols, srow, scol, K4, bd1, bd2, s0, s1, s2, base;
} mm_pack_push;

enum { MM_PACK_LOCAL = 64 };

bool mm_cpu_kernels(const op_ctx *c)
{
    const char *force = getenv("VKINFER_MATMUL_KERNELS");
    if (force && !strcmp(force, "gpu")) return false;
    if (force && !strcmp(force, "cpu")) return true;
    return c->vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

/* The register block: rq groups of a subgroup's worth of rows x rn columns per invocation, lx
 * invocations per workgroup along the columns. Device time of [563,512] x [512,512] on llvmpipe
 * (2 cores, 256-bit, subgroup 8), one profiled run each on a shared machine: 32 rows x 8
 * columns 27 ms, 16 x 8 38 ms, 32 x 16 31 ms; 64 rows take minutes to compile in LLVM and run
 * 13x (64 x 4) to 180x (64 x 8) slower. Products of few rows take fewer row groups, so as not
 * to compute rows that do not exist. */
typedef struct mm_cpu_tiling {
    uint32_t rq, rn, lx;
} mm_cpu_tiling;

static mm_cpu_tiling choose_tiling(const op_ctx *c, const mm_problem *p)
{
    int64_t sg = c->vk->caps.subgroup_size, groups = (p->M + sg - 1) / sg;
    mm_cpu_tiling t = {groups < 4 ? (uint32_t)groups : 4, 8, sg < 8 ? 8 : (uint32_t)sg};
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
    for (int64_t bi = 0; bi < n_mat; bi++)
        for (int64_t k = 0; k < p->K; k++)
            for (int64_t n = 0; n < p->N; n++)
                dst[bi * packed_per + ((n / (lx * rn) * K4 * 4 + k) * lx + n / rn % lx) * rn + n % rn] =
                    (float)host_read_f64(b->dtype, b->host, (size_t)(bi * per + k * p->sbk + n * p->sbn));
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
                         (uint32_t)bd[1], (uint32_t)bd[2], (uint32_t)st[0], (uint32_t)st[1], (uint32_t)st[2], 0};
    uint32_t spec[4] = {MM_PACK_LOCAL, is_b, t->rn, t->lx};
    int values[2] = {input ? p->b_value : p->a_value, *value};
    uint32_t gx, gy;
    op_grid_1d((uint64_t)count, MM_PACK_LOCAL, &gx, &gy);
    return op_dispatch(c, "matmul_cpu_pack", spec, 4, &push, sizeof push, values, 2, gx, gy, 1);
}

vki_status mm_record_cpu(op_ctx *c, const mm_problem *p, bool *taken)
{
    *taken = false;
    plan_value *a = op_value(c, p->a_value), *b = op_value(c, p->b_value), *y = op_value(c, p->y_value);
    plan_value *cv = p->has_c ? op_value(c, p->c_value) : NULL;
    /* the shader hands rows from lane to lane for subgroups of 4 to 16 lanes (8 on AVX2) */
    uint32_t lanes = c->vk->caps.subgroup_size;
    if (!dtype_is_float(y->dtype) || p->nb > MM_SHADER_BATCH_DIMS || p->K == 0 || lanes < 4 || lanes > 16 ||
        (lanes & (lanes - 1)))
        return VKI_OK;
    mm_cpu_tiling t = choose_tiling(c, p);
    uint32_t sg = c->vk->caps.subgroup_size, rm = t.rq * sg;
    /* workgroups of lx column blocks; B is packed per workgroup, zero-padded past N */
    int64_t K4 = (p->K + 3) / 4, gx = (p->N + t.lx * t.rn - 1) / (t.lx * t.rn), gy = (p->M + rm - 1) / rm;
    if (gx > 65535 || gy > 65535) return VKI_OK;

    int64_t bd[3] = {1, 1, 1}, sa[3] = {0, 0, 0}, sb[3] = {0, 0, 0};
    for (int i = 0; i < p->nb; i++) {
        int slot = 3 - p->nb + i;
        bd[slot] = p->bdims[i];
        sa[slot] = p->sa[i];
        sb[slot] = p->sb[i];
    }
    int64_t z_count = bd[0] * bd[1] * bd[2];
    /* every operand and packed copy is bound whole: larger ones take the GPU kernels' windows */
    uint64_t range = op_max_binding_bytes(c);
    bool a_direct = p->sak == 1 && p->K % 4 == 0 && p->sam % 4 == 0 && sa[0] % 4 == 0 && sa[1] % 4 == 0 && sa[2] % 4 == 0;
    bool b_host = b->host && p->K * p->N > 0;
    /* B's rows read in place as vec4s; constant weights are repacked all the same, for free */
    bool b_direct = !b_host && p->sbn == 1 && p->N % 4 == 0 && p->K % 4 == 0 && p->sbk % 4 == 0 && sb[0] % 4 == 0 &&
                    sb[1] % 4 == 0 && sb[2] % 4 == 0;
    int64_t b_matrices = b_host ? shape_numel(b->dims, b->rank) / (p->K * p->N) : z_count;
    int64_t a_packed = z_count * p->M * K4 * 4, b_packed = b_matrices * gx * K4 * 4 * t.lx * t.rn;
    int64_t sizes[5] = {shape_numel(a->dims, a->rank), shape_numel(b->dims, b->rank), shape_numel(y->dims, y->rank),
                        a_direct ? 0 : a_packed, b_direct ? 0 : b_packed};
    for (int i = 0; i < 5; i++)
        if ((uint64_t)sizes[i] * 4 > range || sizes[i] > UINT32_MAX) return VKI_OK;
    if (cv && (uint64_t)shape_numel(cv->dims, cv->rank) * 4 > range) return VKI_OK;

    mm_cpu_push push = {
        .M = (uint32_t)p->M, .N = (uint32_t)p->N, .K4 = (uint32_t)K4, .scm = (uint32_t)p->scm, .scn = (uint32_t)p->scn,
        .alpha = p->alpha, .beta = p->beta, .bd1 = (uint32_t)bd[1], .bd2 = (uint32_t)bd[2], .lo = p->lo, .hi = p->hi,
    };
    int a_value = p->a_value, b_value;
    if (a_direct) {
        push.a_row = (uint32_t)(p->sam / 4);
        push.sa0 = (uint32_t)(sa[0] / 4), push.sa1 = (uint32_t)(sa[1] / 4), push.sa2 = (uint32_t)(sa[2] / 4);
    } else {
        VKI_TRY(pack_on_device(c, p, 0, bd, sa, &t, K4, a_packed, &a_value));
        push.a_row = (uint32_t)K4;
        push.sa2 = (uint32_t)(p->M * K4), push.sa1 = push.sa2 * (uint32_t)bd[2], push.sa0 = push.sa1 * (uint32_t)bd[1];
    }
    int64_t per_matrix = gx * K4 * t.lx * t.rn; /* vec4s of one packed matrix */
    b_value = b_direct ? -1 : pack_b_on_host(c, p, &t, K4, gx);
    push.b_row = (uint32_t)(t.lx * t.rn / 4);
    if (b_value == -2) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory repacking B");
    if (b_value >= 0) {
        /* batch strides of B count whole matrices of K*N; the packed ones whole packed blocks */
        int64_t per = p->K * p->N;
        push.sb0 = (uint32_t)(sb[0] / per * per_matrix), push.sb1 = (uint32_t)(sb[1] / per * per_matrix);
        push.sb2 = (uint32_t)(sb[2] / per * per_matrix);
    } else if (b_direct) {
        b_value = p->b_value;
        push.b_row = (uint32_t)(p->sbk / 4);
        push.sb0 = (uint32_t)(sb[0] / 4), push.sb1 = (uint32_t)(sb[1] / 4), push.sb2 = (uint32_t)(sb[2] / 4);
    } else {
        VKI_TRY(pack_on_device(c, p, 1, bd, sb, &t, K4, b_packed, &b_value));
        push.sb2 = (uint32_t)per_matrix, push.sb1 = push.sb2 * (uint32_t)bd[2], push.sb0 = push.sb1 * (uint32_t)bd[1];
    }

    uint32_t spec[8] = {t.lx, op_dtype_code(y->dtype), t.rq, t.rn, p->has_c, p->clamp, sg, b_direct};
    /* without C, binding 2 repeats Y's input A: the shader never reads it */
    int values[4] = {a_value, b_value, p->has_c ? p->c_value : a_value, p->y_value};
    for (int64_t z0 = 0, gz; z0 < z_count; z0 += gz) {
        gz = z_count - z0 < 65535 ? z_count - z0 : 65535;
        push.batch_base = (uint32_t)z0;
        VKI_TRY(op_dispatch(c, "matmul_cpu", spec, 8, &push, sizeof push, values, 4, (uint32_t)gx, (uint32_t)gy,
                            (uint32_t)gz));
    }
    *taken = true;
    return VKI_OK;
}
