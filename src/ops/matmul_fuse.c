/* The nodes after a MatMul/Gemm product that its kernels apply where they store Y, claimed at
 * plan time: a constant scale, a bias or residual Add and an activation (mm_fuse_epilogues,
 * mm_fuse_residual), a following Transpose whose layout the store takes (mm_store_transposed:
 * attention and the depthwise convolution store through it too) and, after a split-K product,
 * a LayerNormalization or ConvNeXt's layer scale and residual joined to its reduce pass
 * (mm_splitk_layer_norm, mm_splitk_layer_scale). */
#include "matmul.h"
#include "movement.h"
#include "normalization.h"
#include "../plan/plan.h"

#include <math.h>
#include <string.h>

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
    if (!mm_cpu_kernels(c) && shape_numel(y->dims, y->rank) <= mm_gemv_max_rows(c) * p->N &&
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

int mm_scale_reader(op_ctx *c, int v, double *f)
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
    int n = mm_scale_reader(c, last, &f);
    if (n < 0) return last;
    p->alpha *= (float)f;
    p->beta *= (float)f;
    op_fuse_claim(c, n, last);
    return op_fused_output(c, n);
}

void mm_fuse_epilogues(op_ctx *c, mm_problem *p)
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

/* Keep in step with shaders/matmul_splitk_ln.comp. */
typedef struct mm_splitk_ln_push {
    uint32_t rows, N, slices, M, scm, scn;
    float alpha, beta, eps;
} mm_splitk_ln_push;

/* A LayerNormalization's rows of up to this many elements can join a split-K reduce pass
 * (8 values an invocation, 256 invocations a row) */
enum { MM_SPLITK_LN_MAX = 2048 };

vki_status mm_splitk_layer_norm(op_ctx *c, const mm_problem *p, int partial, int64_t slices, const int *values,
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

vki_status mm_splitk_layer_scale(op_ctx *c, const mm_problem *p, int partial, int64_t slices, int64_t z_count,
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
