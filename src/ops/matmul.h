/* What MatMul/Gemm's files share: one (batched) product as strides. src/ops/matmul.c reads the
 * nodes into it, matmul_fuse.c claims the nodes after it that its kernels apply,
 * matmul_record.c chooses its GPU kernel and records it, matmul_cpu.c holds the kernels for CPU
 * Vulkan devices. Conv (src/ops/conv*.c) records its products and transposed stores through it. */
#ifndef VKI_OPS_MATMUL_H
#define VKI_OPS_MATMUL_H

#include "op.h"

enum { MM_MAX_BATCH = VKI_MAX_RANK, MM_SHADER_BATCH_DIMS = 3 };
enum { MM_LOCAL = 128 }; /* invocations per workgroup in the shaders */

/* One (batched) product, all strides in elements. Y is contiguous [batch..., M, N]. */
typedef struct mm_problem {
    int a_value, b_value, y_value; /* A, B and Y: MatMul/Gemm's inputs 0, 1 and output 0, or a
                                    * convolution's weights, image columns and output */
    int64_t M, N, K;
    int64_t sam, sak, sbk, sbn; /* A(m,k) = A[a0 + m*sam + k*sak], B(k,n) = B[b0 + k*sbk + n*sbn] */
    int64_t a0, b0;             /* A's and B's first elements: 0, or a strided Slice read in place
                                 * (a view's view_elem: attention's q, k and v cut from one
                                 * projection, src/ops/movement.c) */
    bool has_c;
    int c_value;                /* C's value: Gemm's input 2, or a fused Add's other operand */
    int64_t scm, scn;           /* C(m,n) = C[m*scm + n*scn]; 0 where C is broadcast */
    float alpha, beta;
    bool clamp;                 /* a fused Relu/Clip: store min(max(r, lo), hi) */
    float lo, hi;
    bool has_r;                 /* a residual R of Y's shape and layout added before the activation */
    int r_value;                /* (a fused Add's other operand): Y = act(alpha A B + beta C + R) */
    int readers_value;          /* 1 + the value Y's readers read once the claimed epilogue nodes are
                                 * applied (mm_fuse_epilogues); 0: not known (then no LayerNormalization
                                 * after a split-K product joins its reduce pass) */
    bool y_t;                   /* Y (and R) held transposed, [batch][N][M]: only mm_record_cpu takes it
                                 * (Conv's transposed products on CPU devices, src/ops/conv.c) */
    int nb;                     /* batch dims of Y, outermost first, size-1 dims dropped */
    int64_t bdims[MM_MAX_BATCH], sa[MM_MAX_BATCH], sb[MM_MAX_BATCH];
} mm_problem;

/* Where a kernel stores element (z, m, n) of its dense [Z][M][N] output: (z % zb) * a +
 * (z / zb) * a2 + m * b + (n / nb) * c + n % nb (dense: mm_dense_layout). Keep in step with the
 * y_* push constants of shaders/attention_tile.comp, attention_rows.glsl and
 * matmul_cpu_small.comp. */
typedef struct mm_store_layout {
    uint32_t a, zb, a2, b, nb, c;
} mm_store_layout;

mm_store_layout mm_dense_layout(int64_t Z, int64_t M, int64_t N);

/* Keep in step with shaders/matmul_splitk_reduce.glsl. */
typedef struct mm_reduce_push {
    uint32_t count, slices, M, N, scm, scn;
    float alpha, beta;
    uint32_t y_base;
    float lo, hi;
    mm_store_layout y; /* Y_LAYOUT's (spec 7) */
} mm_reduce_push;

/* A kernel writing value y (elements in the order of a dense [Z][M][N]) whose readers see
 * value v (y, or a view of it through claimed epilogue nodes; dims vd, rank vr): where a
 * Transpose alone reads v, directly or through one Reshape that alone reads v, and its output
 * order is such a layout with n's innermost run contiguous (attention's [heads, S, D] -> [S,
 * heads, D] before the out-projection, or [B, H, S, D] -> [B, S, H, D]: z cut in two), claims
 * the Transpose as computed (op_claim_computed) and sets *l and *out (the value to bind in y's
 * place, the Transpose's output); else leaves them. The Transpose's output must be held in
 * `written`, the storage the kernel writes (a claimed output is never converted after the
 * kernel). VKINFER_TRANSPOSED_STORES=0, or fusion off: never. */
vki_status mm_store_transposed(op_ctx *c, int v, int y, const int64_t *vd, int vr, int64_t Z, int64_t M, int64_t N,
                               gpu_storage written, mm_store_layout *l, int *out);

/* As mm_store_transposed, for kernels that store an element at a time: n's innermost run may
 * have any stride (l->nb 1, n at n * l->c), as for a depthwise convolution's [N, C, H, W]
 * output (z, m, n = image, channel, pixel) transposed to [N, H, W, C] (ConvNeXt's block before
 * its channels-last LayerNormalization). */
vki_status mm_store_transposed_any(op_ctx *c, int v, int y, const int64_t *vd, int vr, int64_t Z, int64_t M, int64_t N,
                                   gpu_storage written, mm_store_layout *l, int *out);

/* Whether MatMul/Gemm take the CPU-device kernels: on CPU devices (lavapipe), unless
 * VKINFER_MATMUL_KERNELS=gpu|cpu says otherwise (so that CI on lavapipe tests both). */
bool mm_cpu_kernels(const op_ctx *c);

/* The storage the product kernels read and write for p's operands (16-bit variants where A, B,
 * C and Y allow them). A caller that makes an operand first (Conv's im2col columns) holds it in
 * this storage, so that nothing needs converting. */
gpu_storage mm_storage(op_ctx *c, const mm_problem *p);

/* The floating-point operations of `batches` of p's products (2 M N K each), for the profile. */
double mm_flops(const mm_problem *p, int64_t batches);

/* The batches of p from batch dim `from` on: the product of their sizes. */
int64_t mm_batch_count(const mm_problem *p, int from);

/* Records p (the node's dispatches) with the kernel the device and shapes call for. Used by
 * MatMul, Gemm and, for convolutions as matrix products, Conv (src/ops/conv.c). */
vki_status mm_record(op_ctx *c, const mm_problem *p);

/* Records p on matmul_gemv_wide (src/ops/matmul_gemv.c) where it takes it: one product (no
 * batch dims) of at most 8 rows without R, whose weight B it reads in 16-byte runs (its columns
 * or its rows contiguous and aligned to them), on GPU kernels, VKINFER_MM_GEMV_WIDE on. Sets
 * *taken; records nothing where it does not take p. */
vki_status mm_record_gemv_wide(op_ctx *c, const mm_problem *p, bool *taken);

/* Products of at most this many rows take matmul_gemv on GPUs (VKINFER_MM_GEMV_ROWS, 16 by
 * default; measured on the H200: see docs/history/benchmarks-notebook.md) */
int64_t mm_gemv_max_rows(const op_ctx *c);

/* p's product without R and its activation into a scratch value, then one pass adding R and
 * applying the activation into Y: for the kernels that do not take a residual. */
vki_status mm_record_then_add(op_ctx *c, const mm_problem *p);

/* Takes a following Add of `last` (Y, or an Add already fused after it) with an operand of Y's
 * shape into p as its residual R, where that operand is a GPU tensor of Y's layout and Y fits one
 * binding; returns the value after it (`last` where nothing was taken). */
int mm_fuse_residual(op_ctx *c, mm_problem *p, int last);

/* Epilogues the kernels apply where they store Y: a following Add of a bias (one N-vector,
 * any shape of it, or a scalar) or of a residual of Y's shape when Y is one [M,N] product
 * (C has no batch strides) becomes C, where Y has none yet (MatMul, Gemm without C); then a
 * Relu/Clip or a GELU after Y (or after that Add) becomes the clamp (op_fuse_activation_value). */
void mm_fuse_epilogues(op_ctx *c, mm_problem *p);

/* The Mul or Div by a constant scalar that alone reads value v (*f its factor), or -1. */
int mm_scale_reader(op_ctx *c, int v, double *f);

/* The split-K reduce pass's fusions, called by mm_record after the slices: `values` are the
 * product's bindings (A, B, C, Y, R, as mm_record binds them), `act` its op_act_code. */

/* After a float32 split-K product's slices (its raw sums in `partial`): where a
 * LayerNormalization reads the finished Y (through the claimed bias and residual Adds, among
 * other readers: a pre-norm transformer's residual stream) along rows of Y's N columns, with
 * plan-time Scale and B, one dispatch adds the slices as the reduce pass does, stores Y and
 * normalizes each row into the LayerNormalization's output, which it claims
 * (shaders/matmul_splitk_ln.comp). ViT-B/16 has two a block. *taken false: not this case,
 * nothing recorded. VKINFER_SPLITK_LN=0 keeps the two passes (for measuring). */
vki_status mm_splitk_layer_norm(op_ctx *c, const mm_problem *p, int partial, int64_t slices, const int *values,
                                uint32_t act, bool *taken);

/* After a float32 split-K product's slices: where Y (through its claimed bias Add) is read only
 * by a Transpose, that only by a Mul by a plan-time constant varying along Y's columns alone (a
 * per-channel factor), and that only by an Add of a residual of the Transpose's shape (ConvNeXt's
 * block end: the NHWC product permuted back to NCHW, times the layer scale, plus the block's
 * input), the reduce pass applies the factor and the residual and stores through the
 * Transpose's layout into the Add's output, claiming the three nodes (no binary_chain pass of
 * their own). The factor, alpha, beta and the bias are folded into one plan-time constant of
 * 2 N values. *taken false: not this case. VKINFER_SPLITK_CHAIN=0 keeps the passes (measuring). */
vki_status mm_splitk_layer_scale(op_ctx *c, const mm_problem *p, int partial, int64_t slices, int64_t z_count,
                                 const int *values, uint32_t act, bool *taken);

/* Records p with the CPU-device kernels (shaders/matmul_cpu*). Sets *taken = false and
 * records nothing when they do not take p (integer products, operands or packed copies larger
 * than one binding, more than three batch dims): the caller then records the GPU kernels.
 * Fused epilogues (p->c_value, p->clamp) are already claimed by the caller. */
vki_status mm_record_cpu(op_ctx *c, const mm_problem *p, bool *taken);
/* Whether mm_record_cpu takes p on its register-blocked kernel, where A (a_numel elements) is
 * read in place (rows of whole texels, or along m: mm_cpu_a_t) and B is a host constant: what a caller checks before it
 * makes A (Conv's transposed columns; p->a_value may be unset). */
bool mm_cpu_fits(op_ctx *c, const mm_problem *p, int64_t a_numel);
/* Whether the CPU MatMul reads p's A in place along m (shaders/matmul_cpu.glsl A_T: sam 1, M, K,
 * sak and the first element multiples of 4), as a 1x1 convolution's transposed product reads X. */
bool mm_cpu_a_t(const mm_problem *p);
/* A relative cost of an M x N x K product on the CPU MatMul's kernel (its register blocks over
 * Y with the padding they compute, and their texel fetches): for choosing an orientation. */
double mm_cpu_cost(const op_ctx *c, int64_t M, int64_t N, int64_t K);

#endif
