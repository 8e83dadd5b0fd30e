/* MatMul and Gemm: Y = alpha * A B + beta * C over strided operands, so that transposes and
 * broadcast batch dims (stride 0) cost no copies. This file reads a node into one product
 * (mm_problem: batch dims broadcast, merged and folded into rows; small constant products
 * evaluated on the host) and takes MatMul -> Softmax -> MatMul as one attention dispatch;
 * matmul_fuse.c claims the nodes after the product that its kernels apply, matmul_record.c
 * chooses its kernel and records it. */
#include "matmul.h"
#include "movement.h"

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

/* Host evaluation for constant inputs (shape arithmetic, tiny constant subgraphs). */
static void fold_on_host(op_ctx *c, const mm_problem *p)
{
    plan_value *a = op_in(c, 0), *b = op_in(c, 1), *cv = p->has_c ? op_value(c, p->c_value) : NULL;
    plan_value *y = op_out(c, 0);
    void *out = op_output_host(c, 0);
    bool is_float = dtype_is_float(y->dtype);
    int64_t batches = mm_batch_count(p, 0);
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

/* A batch dim that B broadcasts over and along which A's rows continue evenly ([563,1,512] x
 * [512,512]) is more rows of one product: Y is contiguous, so its rows continue too. */
static void fold_batch_into_rows(mm_problem *p)
{
    while (p->nb > 0 && p->sb[p->nb - 1] == 0 && p->sa[p->nb - 1] == p->M * p->sam && !p->has_c) {
        p->M *= p->bdims[p->nb - 1];
        p->nb--;
    }
}

static vki_status finish(op_ctx *c, mm_problem *p)
{
    merge_batch_dims(p);
    fold_batch_into_rows(p);
    int64_t work = mm_batch_count(p, 0) * p->M * p->N * (p->K ? p->K : 1);
    if (op_all_inputs_const(c) && work <= 65536) {
        fold_on_host(c, p);
        return VKI_OK;
    }
    p->a_value = op_in_index(c, 0);
    p->b_value = op_in_index(c, 1);
    p->y_value = op_out_index(c, 0);
    mm_fuse_epilogues(c, p);
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
enum {
    ATTN_ROWS_MAX_KEYS = 1024,
    ATTN_ROWS_GPU_KEYS = 64,
    ATTN_TILE_HEAD = 64,       /* attention_tile's head sizes; attention_tile_d128 to 128, _d256 (16-bit words) to 256 */
    ATTN_TILE_HEAD_128 = 128,
    ATTN_TILE_MAX_HEAD = 256,
    ATTN_TILE_BLOCKS = 96,
    ATTN_TILE_HALF_KEYS = 256, /* 16-bit words take attention_tile by default above this */
};

typedef struct attn_rows_push {
    uint32_t M, S, D, E;
    uint32_t sqm, sqd, skd, sks, svs, sve;
    float alpha;
    uint32_t bd1, bd2;
    uint32_t sq0, sq1, sq2, sk0, sk1, sk2, sv0, sv1, sv2;
    uint32_t q0, k0, v0;
    mm_store_layout y; /* where Y(z, m, e) goes */
} attn_rows_push;

/* shaders/attention_tile.glsl's: two batch dims at most, and the mask's strides (within the
 * 128 bytes of push constants every kernel may take) */
typedef struct attn_tile_push {
    uint32_t M, S, D, E;
    uint32_t sqm, sqd, skd, sks, svs, sve;
    float alpha;
    uint32_t bd2;
    uint32_t sq1, sq2, sk1, sk2, sv1, sv2;
    uint32_t q0, k0, v0;
    uint32_t smm, sm1, sm2, mk0; /* the mask's query, outer and inner batch strides, first element */
    mm_store_layout y;
} attn_tile_push;
_Static_assert(sizeof(attn_tile_push) <= VK_PUSH_BYTES, "attention_tile's push constants");

/* The additive mask of the scores [bdims..., M, N] (the Add between the product, or its scale,
 * and the Softmax) as attention_tile reads it: a float value of the scores' dtype planned
 * already, broadcast within their shape, its keys dense (stride 1). Its strides for the slots
 * of the batch dims the kernel indexes (slot_dim: the product's batch dim of slots 1 and 2, -1
 * for none), its query stride and first element; false where it is not such a mask. */
static bool attention_mask_strides(op_ctx *c, int mask, vki_dtype dt, int nb, const int64_t *bdims, int64_t M, int64_t N,
                                   const int *slot_dim, uint32_t *smm, uint32_t *sm1, uint32_t *sm2, uint32_t *mk0)
{
    plan_value *mv = op_value(c, mask);
    if (!mv->shaped || mv->dtype != dt || mv->view_scale || mv->split_inner || mv->rank < 1 || mv->rank > nb + 2)
        return false;
    int64_t sdims[VKI_MAX_RANK], ms[VKI_MAX_RANK];
    for (int d = 0; d < nb; d++) sdims[d] = bdims[d];
    sdims[nb] = M, sdims[nb + 1] = N;
    if (!op_broadcasts_within(mv, sdims, nb + 2) || mv->dims[mv->rank - 1] != N) return false;
    value_strides(mv, ms);
    if (ms[mv->rank - 1] != 1 && N > 1) return false;
    int off = nb + 2 - mv->rank; /* the mask's dim of the scores' dim d is d - off */
    *smm = mv->rank >= 2 && mv->dims[mv->rank - 2] != 1 ? (uint32_t)ms[mv->rank - 2] : 0;
    uint32_t *slot_stride[2] = {sm1, sm2};
    for (int k = 0; k < 2; k++) {
        int d = slot_dim[k], md = d - off;
        *slot_stride[k] = d >= 0 && md >= 0 && mv->dims[md] != 1 ? (uint32_t)ms[md] : 0;
    }
    /* a batch dim of the mask that is not 1 must be one the kernel indexes */
    for (int md = 0; md < mv->rank - 2; md++)
        if (mv->dims[md] != 1 && md + off != slot_dim[0] && md + off != slot_dim[1]) return false;
    *mk0 = (uint32_t)(mv->permuted ? mv->view_elem : 0);
    return true;
}

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
    int scale_node = mm_scale_reader(c, y1, &scale);
    int scores = scale_node >= 0 ? op_graph_node(c, scale_node)->outputs[0] : y1;
    /* then an additive mask (attention_tile only): Add(scores, mask) */
    int mask_node = op_only_reader(c, scores, "Add"), mask = -1, masked = scores;
    if (mask_node >= 0) {
        const ir_node *an = op_graph_node(c, mask_node);
        if (an->n_inputs != 2 || (an->inputs[0] == scores) == (an->inputs[1] == scores)) return VKI_OK;
        mask = an->inputs[0] == scores ? an->inputs[1] : an->inputs[0];
        masked = an->outputs[0];
    }
    int sm = op_only_reader(c, masked, "Softmax");
    if (sm < 0) return VKI_OK;
    const ir_node *smn = op_graph_node(c, sm);
    int rank = nb + 2;
    int64_t axis = ir_attr_int(smn, "axis", c->opset < 13 ? 1 : -1);
    if (axis < 0) axis += rank;
    if (axis != rank - 1 || smn->n_outputs < 1) return VKI_OK;
    int p_value = smn->outputs[0], probs = p_value;
    /* rows masked whole give zeros, not NaN: Where(IsNaN(P), 0, P) (attention_tile only) */
    int isnan_node = -1, guard = op_nan_guard_reader(c, p_value, &isnan_node);
    if (guard >= 0) probs = op_graph_node(c, guard)->outputs[0];
    int mm2 = op_only_reader(c, probs, "MatMul");
    if (mm2 < 0) return VKI_OK;
    const ir_node *mn = op_graph_node(c, mm2);
    if (mn->n_inputs != 2 || mn->inputs[0] != probs || mn->inputs[1] == probs || mn->inputs[1] < 0) return VKI_OK;
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
    int used = 0, slot_dim[3] = {-1, -1, -1};
    int64_t z_count = 1;
    for (int d = nb - 1; d >= 0; d--) {
        int vd = d - (nb - (v->rank - 2));
        int64_t vsize = vd >= 0 ? v->dims[vd] : 1;
        if (vsize != bdims[d] && vsize != 1) return VKI_OK;
        if (bdims[d] == 1) continue;
        if (used == 3) return VKI_OK;
        int slot = 2 - used++;
        zb[slot] = bdims[d], q3[slot] = sa[d], k3[slot] = sb[d], v3[slot] = vsize == 1 ? 0 : vs[vd], slot_dim[slot] = d;
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
    /* attention_tile's heads of up to 64 on 30.7 KB (32 query rows) or 23.5 KB (16), of up to 128
     * (attention_tile_d128: 16 rows, keys in chunks of 16) on 26.3 KB, of up to 256 on 16-bit
     * words (attention_tile_d256: 8 rows, K and V staged as 16-bit words) on 25.1 KB. 16-bit words (the fp16
     * mode, bfloat16 models) take it by default above ATTN_TILE_HALF_KEYS keys, where the three
     * dispatches' scores [heads, M, N] in 16 bits cost a pass each way and their rounding (a
     * bfloat16 VLA's prefix of 1025 tokens: 1.2e-2 from one attention layer, against 6.5e-3
     * for PyTorch's fused attention, whose scores stay fp32); below it the products'
     * tensor-core kernels keep the three dispatches (BERT's and ViT's 128 and 197). */
    uint32_t shared_bytes = c->vk->caps.props.limits.maxComputeSharedMemorySize;
    int64_t head = p->K > E ? p->K : E;
    uint32_t dmax = head <= ATTN_TILE_HEAD ? 64 : head <= ATTN_TILE_HEAD_128 ? 128 : 256;
    bool fits = head <= (st == GPU_W32 ? ATTN_TILE_HEAD_128 : ATTN_TILE_MAX_HEAD) &&
                shared_bytes >= (dmax == 64 ? 24576u : dmax == 128 ? 26880u : 25728u) && used <= 2 &&
                (double)z_count * (double)p->M * (double)E < 4294967296.0;
    /* 32-bit element indices into every operand (its binding from its root's start) */
    int bound[4] = {in_values[0], in_values[1], vv, mask};
    for (int i = 0; i < 4 && fits; i++)
        if (bound[i] >= 0 && (double)op_bound_numel(c, bound[i]) >= 4294967296.0) fits = false;
    bool tile = fits && (forced_tile ||
                         (!cpu && !forced && p->N > (st == GPU_W32 ? ATTN_ROWS_GPU_KEYS : ATTN_TILE_HALF_KEYS)));
    uint32_t smm = 0, sm1 = 0, sm2 = 0, mk0 = 0;
    if ((mask >= 0 || guard >= 0) && !tile) return VKI_OK; /* attention_rows takes neither */
    if (mask >= 0 && !attention_mask_strides(c, mask, a->dtype, nb, bdims, p->M, p->N, &slot_dim[1], &smm, &sm1, &sm2, &mk0))
        return VKI_OK;
    if (!tile && (p->N > ATTN_ROWS_MAX_KEYS || (!forced && (cpu || p->N > ATTN_ROWS_GPU_KEYS)))) return VKI_OK;
    if (p->M > 65535 || z_count > 65535 || E < 1) return VKI_OK;
    int64_t ydims[VKI_MAX_RANK];
    for (int d = 0; d < nb; d++) ydims[d] = bdims[d];
    ydims[nb] = p->M, ydims[nb + 1] = E;
    VKI_TRY(op_set_output(c, 0, a->dtype, rank, ydims));
    if (scale_node >= 0) op_fuse_claim(c, scale_node, y1);
    if (mask >= 0) op_fuse_claim(c, mask_node, scores);
    op_fuse_claim(c, sm, masked);
    if (guard >= 0) {
        op_fuse_claim(c, isnan_node, p_value);
        op_fuse_claim(c, guard, p_value);
    }
    op_fuse_claim(c, mm2, probs);
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
        if (dmax > 64) qb = dmax == 128 ? 16 : 8;
        attn_tile_push tp = {
            push.M, push.S, push.D, push.E, push.sqm, push.sqd, push.skd, push.sks, push.svs, push.sve, push.alpha,
            (uint32_t)zb[2], (uint32_t)q3[1], (uint32_t)q3[2], (uint32_t)k3[1], (uint32_t)k3[2], (uint32_t)v3[1],
            (uint32_t)v3[2], push.q0, push.k0, push.v0, smm, sm1, sm2, mk0, push.y};
        uint32_t spec_tile[4] = {qb / 2 * 16, qb, mask >= 0, guard >= 0};
        int tile_values[5] = {values[0], values[1], values[2], values[3], mask >= 0 ? mask : values[0]};
        gpu_storage tile_stores[5] = {st, st, st, st, st};
        VKI_TRY(op_dispatch_stored(c, op_variant(c, dmax == 64 ? "attention_tile" : dmax == 128 ? "attention_tile_d128" : "attention_tile_d256", st), spec_tile, 4, &tp,
                                   sizeof tp, tile_values, NULL, tile_stores, 5, (uint32_t)((p->M + qb - 1) / qb),
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
