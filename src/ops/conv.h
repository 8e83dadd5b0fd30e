/* What the convolution files share: a convolution's geometry, its fused activation and the
 * kernel paths that conv.c chooses among. Internal to src/ops/conv*.c: conv.c (the ops, their
 * checks, the choice of path, the direct reference kernel), conv_gpu.c (GPU kernels),
 * conv_cpu.c (CPU-device kernels), conv_matmul.c (as matrix products), conv_winograd.c. */
#ifndef VKI_OPS_CONV_H
#define VKI_OPS_CONV_H

#include "op.h"

/* A convolution's shape facts; spatial arrays hold the first nsp entries. */
typedef struct conv_geom {
    int nsp; /* spatial dims, 1..3 */
    int64_t batch, cin, cout, groups;
    int64_t in[3], out[3], kernel[3], stride[3], dil[3], pad_begin[3];
} conv_geom;

/* A Relu, Clip, GELU, SiLU or Sigmoid that follows the conv and that the conv's kernels apply
 * (op_fuse_activation). */
typedef struct fused_act {
    bool on;
    float lo, hi;
} fused_act;

/* 1-D and 2-D convolutions as the 2-D kernels take them (a 1-D conv has height 1). */
typedef struct conv2d_view {
    int32_t ih, iw, oh, ow, ph, pw;
    uint32_t kh, kw, sh, sw, dh, dw;
} conv2d_view;

static inline conv2d_view conv_view_2d(const conv_geom *g)
{
    int last = g->nsp - 1;
    bool two = g->nsp == 2;
    conv2d_view v = {two ? (int32_t)g->in[0] : 1, (int32_t)g->in[last], two ? (int32_t)g->out[0] : 1,
                     (int32_t)g->out[last], two ? (int32_t)g->pad_begin[0] : 0, (int32_t)g->pad_begin[last],
                     two ? (uint32_t)g->kernel[0] : 1, (uint32_t)g->kernel[last], two ? (uint32_t)g->stride[0] : 1,
                     (uint32_t)g->stride[last], two ? (uint32_t)g->dil[0] : 1, (uint32_t)g->dil[last]};
    return v;
}

/* The implicit GEMM and depthwise kernels take 1-D and 2-D Conv. */
static inline bool conv_fast_paths(const op_ctx *c, const conv_geom *g, bool transposed)
{
    return !transposed && g->nsp <= 2 && !c->vk->opts.conv_reference; /* A/B checks of the fast paths */
}

/* CPU Vulkan drivers (lavapipe) get register-blocked kernels without shared memory
 * (shaders/conv2d_cpu.glsl): the GPU kernels' staging and barriers cost more than they save
 * there. */
/* The CPU-device kernels run on CPU devices; VKINFER_CONV_KERNELS=gpu|cpu overrides, so that
 * CI (on lavapipe) also tests the GPU kernels. */
static inline bool conv_cpu_device(const op_ctx *c) { return op_cpu_kernels(c, c->vk->opts.conv_kernels); }

/* The storage the kernels take X, W, B and Y in: a 16-bit float storage where W and B are
 * held in it and so is X or Y (a graph input or output next to half weights, as in the fp16
 * mode, is converted rather than widening the weights); 32-bit words otherwise. */
static inline gpu_storage conv_kernel_storage(op_ctx *c)
{
    int weights[2] = {op_in_index(c, 1), op_has_input(c, 2) ? op_in_index(c, 2) : -1};
    gpu_storage st = op_half_storage(c, weights, 2);
    if (st != GPU_W32 && op_storage(c, op_in_index(c, 0)) != st && op_storage(c, op_out_index(c, 0)) != st) return GPU_W32;
    return st;
}

/* ---- GPU kernels (conv_gpu.c) ---- */

/* The implicit GEMM's tiling, chosen once per node from the images one dispatch takes. */
typedef struct gemm_choice {
    bool usable; /* the tile grid fits the device's workgroup counts */
    uint32_t tm, tn, splits;
} gemm_choice;

gemm_choice conv_gemm_choose(op_ctx *c, const conv_geom *g, int64_t batch, uint64_t oh, uint64_t ow,
                             uint64_t kernel_hw);
/* The depthwise kernel (one input channel a group) for `batch` images: bindings `values` (X,
 * W, B or W again, Y; values[3] may be rebound to a Transpose's output that Y is stored
 * through) over windows `win` (NULL: whole), in storage st. */
vki_status conv_gpu_record_depthwise(op_ctx *c, const conv_geom *g, int64_t batch, const op_window *win, int *values,
                                     const fused_act *act, gpu_storage st);
/* The implicit GEMM, split over K into `partial` (fp32 words) and reduced when gemm->splits > 1. */
vki_status conv_gpu_record_gemm(op_ctx *c, const conv_geom *g, int64_t batch, const op_window *win, int *values,
                                const gemm_choice *gemm, int partial, const fused_act *act, gpu_storage st);

/* ---- CPU-device kernels (conv_cpu.c) ---- */

/* Whether the CPU kernels' grids for `batch` images fit the device's workgroup counts. */
bool conv_cpu_grid_fits(const op_ctx *c, const conv_geom *g, int64_t batch);
/* W repacked for conv2d_cpu_packed in storage st: the packed value, -1 when W is not a
 * constant, -2 out of host memory. */
int conv_cpu_pack_weights(op_ctx *c, const conv_geom *g, gpu_storage st);
/* A 1-D or 2-D convolution on the CPU kernels (depthwise, packed W from conv_cpu_pack_weights,
 * or W as it is where packed < 0), bindings and windows as conv_gpu_record_depthwise's. */
vki_status conv_cpu_record(op_ctx *c, const conv_geom *g, int64_t batch, const op_window *win, const int *values,
                           int packed, const fused_act *act, gpu_storage st);

/* ---- as matrix products (conv_matmul.c) ---- */

/* Whether a Conv should try conv_matmul_record first (2-D or 1-D, no groups). */
bool conv_matmul_wanted(const op_ctx *c, const conv_geom *g, bool transposed);
/* Conv as im2col and a MatMul product (or the transposed product on CPU devices); *taken
 * false (nothing recorded) where it does not apply. */
vki_status conv_matmul_record(op_ctx *c, const conv_geom *g, bool *taken);
/* ConvTranspose as a product and col2im_cpu's gather; *taken as conv_matmul_record's. */
vki_status conv_transpose_matmul_record(op_ctx *c, const conv_geom *g, bool *taken);

/* ---- Winograd (conv_winograd.c) ---- */

/* A 3x3, stride-1 2-D float32 convolution without groups on a CPU device as Winograd F(2x2,
 * 3x3): an input transform, 16 products on the CPU MatMul, an output transform with the bias
 * and the fused activation. *taken false (nothing recorded) where it does not apply. */
vki_status conv_winograd_record(op_ctx *c, const conv_geom *g, bool *taken);

#endif
