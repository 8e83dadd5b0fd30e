/* Conv and ConvTranspose as matrix products on MatMul's kernels (src/ops/matmul_record.c, and
 * the CPU MatMul of src/ops/matmul_cpu.c on CPU devices): im2col and one product per image or
 * one over the batch, the transposed product for small maps on CPU devices, and ConvTranspose
 * as a product and a gather (col2im). conv.c tries them before the convolution kernels. */
#include "binary.h"
#include "conv.h"
#include "matmul.h"
#include "movement.h"

#include <math.h>
#include <string.h>

/* ---- a convolution as a matrix product ----
 * On GPUs a 2-D convolution without groups runs as MatMul's kernels (src/ops/matmul_record.c):
 * Y[n] = W [Cout, Cin*kh*kw] x col[n] [Cin*kh*kw, OH*OW], where col is X itself for a 1x1,
 * stride-1, unpadded convolution and an im2col copy of X otherwise. The product kernels are
 * the fastest the device has (register-blocked tiles, split K, cooperative matrices for
 * halves): measured on the H200, conv2d_gemm reached 3.8 TFLOP/s on resnet50 where
 * matmul_tiled reaches 27. The column buffer costs kh*kw times X's memory (liveness-shared);
 * where it does not fit one binding, the convolution kernels run instead.
 * VKINFER_CONV_KERNELS=gemm forces this path (CI on lavapipe), =gpu or =cpu the others. */
bool conv_matmul_wanted(const op_ctx *c, const conv_geom *g, bool transposed)
{
    if (transposed || g->groups != 1 || g->nsp > 2 || !conv_fast_paths(c, g, transposed)) return false;
    int force = c->vk->opts.conv_kernels;
    if (force != OPT_AUTO) return force == OPT_KERNELS_GEMM || force == OPT_KERNELS_GEMM_BATCH;
    /* CPU devices too, for float32 (conv_matmul_record declines other storage there): im2col and
     * the texel-buffer MatMul (matmul_cpu.c) took resnet18's 3x3 layers from 31-81 ms
     * (conv2d_cpu_packed) to 9-58 ms each on lavapipe (docs/history/benchmarks-notebook.md) */
    return true;
}

typedef struct im2col_push {
    uint32_t count, cin, h, w, kh, kw, oh, ow;
    uint32_t sh, sw, dh, dw;
    int32_t ph, pw;
    uint32_t col_stride; /* elements from one row (k) of the columns to the next */
    uint32_t col_image;  /* elements from one image's columns to the next */
    uint32_t k_pad;      /* im2col_cpu only: rows of columns per image, K padded to a multiple of 4 */
} im2col_push;

/* Y [batch, cout, ohw] (the node's output) from Y' [cout, batch * ohw] (value yt), both held in
 * storage st: one strided copy. */
static vki_status copy_image_major(op_ctx *c, int yt, gpu_storage st, int64_t batch, int64_t cout, int64_t ohw)
{
    strided_copy s = {.rank = 3, .dims = {batch, cout, ohw}, .in_strides = {ohw, batch * ohw, 1},
                      .out_strides = {cout * ohw, ohw, 1}};
    return copy_values(c, yt, op_out_index(c, 0), &s, st);
}

/* W [Cout, K] copied on the host into rows of k_pad (zero-padded), for the CPU MatMul to read
 * in place; -1 if W is not a host constant, -2 out of memory. */
static int pad_weights(op_ctx *c, const conv_geom *g, int64_t K, int64_t k_pad)
{
    plan_value *w = op_in(c, 1);
    if (!w->host) return -1;
    int value;
    float *dst = op_temp_const(c, VKI_DTYPE_FLOAT, g->cout * k_pad, &value);
    if (!dst) return -2;
    for (int64_t m = 0; m < g->cout; m++)
        for (int64_t k = 0; k < k_pad; k++)
            dst[m * k_pad + k] = k < K ? (float)host_read_f64(w->dtype, w->host, (size_t)(m * K + k)) : 0.0f;
    return value;
}

/* The bias (input 2), one per output channel, as the product's C: channels along Y's rows, or
 * along its columns for the transposed products (per_column). */
static void bias_as_c(op_ctx *c, mm_problem *p, bool per_column)
{
    if (!op_has_input(c, 2)) return;
    p->has_c = true;
    p->c_value = op_in_index(c, 2);
    p->scm = per_column ? 0 : 1;
    p->scn = per_column ? 1 : 0;
}

/* On CPU devices, a convolution whose output pixels are few against its output channels
 * (ResNet's 14x14 maps and smaller at batch 1: 36 pixels per image at 6x6) runs as the
 * transposed product Y^T [pixels, Cout] = colT [pixels, K] x W^T [K, Cout], so that the CPU
 * MatMul's lanes, which run along the columns, share out the channels instead of a few pixels
 * (shaders/matmul_cpu.glsl): shaders/im2col_t_cpu.comp writes colT, W^T is packed at plan time as
 * any constant B is, and the product stores Y in its own layout (Y_T). Taken where
 * mm_cpu_cost finds it cheaper by a tenth, and always for maps of at most 16 pixels (which the
 * untransposed product would otherwise run transposed through a copy of the columns and a copy
 * back). VKINFER_CPU_CONV_TRANSPOSE=0 never takes it, =1 wherever it applies (tests). */
static vki_status record_cpu_transposed(op_ctx *c, const conv_geom *g, gpu_storage st, bool *taken)
{
    *taken = false;
    int always_opt = c->vk->opts.cpu_conv_transpose;
    plan_value *x = op_in(c, 0), *w = op_in(c, 1);
    int two = g->nsp == 2, last = g->nsp - 1;
    int64_t h = two ? g->in[0] : 1, wd = g->in[last], oh = two ? g->out[0] : 1, ow = g->out[last];
    int64_t kh = two ? g->kernel[0] : 1, kw = g->kernel[last];
    int64_t K = g->cin * kh * kw, ohw = oh * ow, k_pad = (K + 3) / 4 * 4;
    if (always_opt == 0 || !w->host || st != GPU_W32 || shape_numel(w->dims, w->rank) != g->cout * K) return VKI_OK;
    bool always = always_opt == 1;
    if (!always && ohw > 16 && mm_cpu_cost(c, ohw, g->cout, k_pad) >= 0.9 * mm_cpu_cost(c, g->cout, ohw, k_pad))
        return VKI_OK;
    int64_t col_numel = g->batch * ohw * k_pad;
    uint64_t range = op_max_binding_bytes(c), texels = c->vk->caps.props.limits.maxTexelBufferElements;
    if (col_numel > UINT32_MAX || (uint64_t)col_numel * 4 > range || (uint64_t)shape_numel(x->dims, x->rank) > texels ||
        g->batch * ohw > UINT32_MAX)
        return VKI_OK;
    mm_problem p = {.y_value = op_out_index(c, 0), .M = ohw, .N = g->cout, .K = k_pad, .sam = k_pad, .sak = 1, .sbk = 1,
                    .sbn = k_pad, .alpha = 1, .beta = 1, .nb = 1, .y_t = true};
    p.bdims[0] = g->batch;
    p.sa[0] = ohw * k_pad;
    bias_as_c(c, &p, true);
    /* a 1x1 convolution of stride 1 reads X as it is, A(pixel, channel) = X[channel][pixel]
     * along the pixels (matmul_cpu's A_T), where its pixels and channels come in 4s: no im2col
     * copy (mobilenet_v2's 14x14 layers) */
    bool pointwise = kh == 1 && kw == 1 && (!two || g->stride[0] == 1) && g->stride[last] == 1 && oh == h && ow == wd &&
                     (!two || g->pad_begin[0] == 0) && g->pad_begin[last] == 0 && !x->permuted && k_pad == K;
    mm_problem q = p;
    q.sam = 1, q.sak = ohw, q.sa[0] = g->cin * ohw;
    bool in_place = pointwise && mm_cpu_a_t(&q) && mm_cpu_fits(c, &q, shape_numel(x->dims, x->rank));
    if (in_place) {
        p = q;
        p.a_value = op_in_index(c, 0);
    } else {
        if (!mm_cpu_fits(c, &p, col_numel)) return VKI_OK;
        VKI_TRY(op_temp(c, x->dtype, col_numel, &p.a_value));
        im2col_push push = {(uint32_t)(g->batch * ohw), (uint32_t)g->cin, (uint32_t)h, (uint32_t)wd, (uint32_t)kh,
                            (uint32_t)kw, (uint32_t)oh, (uint32_t)ow, (uint32_t)(two ? g->stride[0] : 1),
                            (uint32_t)g->stride[last], (uint32_t)(two ? g->dil[0] : 1), (uint32_t)g->dil[last],
                            (int32_t)(two ? g->pad_begin[0] : 0), (int32_t)g->pad_begin[last], (uint32_t)k_pad,
                            (uint32_t)(ohw * k_pad), (uint32_t)k_pad};
        uint32_t spec[1] = {8}, gx, gy;
        int values[2] = {op_in_index(c, 0), p.a_value};
        gpu_storage stores[2] = {GPU_W32, GPU_W32};
        op_grid_1d(push.count, 8, &gx, &gy);
        VKI_TRY(op_dispatch_stored(c, "im2col_t_cpu", spec, 1, &push, sizeof push, values, NULL, stores, 2, gx, gy, 1));
    }
    p.b_value = op_in_index(c, 1);
    if (k_pad != K) {
        p.b_value = pad_weights(c, g, K, k_pad);
        if (p.b_value == -2) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory padding W");
    }
    /* a residual Add after Y (ResNet's shortcut), R read where Y is stored, and the activation */
    int fused_last = mm_fuse_residual(c, &p, op_epilogue_value(c));
    p.clamp = op_fuse_activation_value(c, fused_last, &p.lo, &p.hi);
    VKI_TRY(mm_record_cpu(c, &p, taken));
    if (!*taken) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: the transposed product was declined");
    return VKI_OK;
}

vki_status conv_matmul_record(op_ctx *c, const conv_geom *g, bool *taken)
{
    *taken = false;
    plan_value *x = op_in(c, 0), *w = op_in(c, 1);
    int two = g->nsp == 2, last = g->nsp - 1;
    int64_t h = two ? g->in[0] : 1, wd = g->in[last], oh = two ? g->out[0] : 1, ow = g->out[last];
    int64_t kh = two ? g->kernel[0] : 1, kw = g->kernel[last];
    int64_t K = g->cin * kh * kw, ohw = oh * ow;
    bool direct = kh == 1 && kw == 1 && g->stride[0] == 1 && g->stride[last] == 1 && g->pad_begin[0] == 0 &&
                  g->pad_begin[last] == 0 && oh == h && ow == wd;
    if (shape_numel(w->dims, w->rank) != g->cout * K) return VKI_OK;
    mm_problem p = {.a_value = op_in_index(c, 1), .b_value = op_in_index(c, 0), .y_value = op_out_index(c, 0),
                    .M = g->cout, .N = ohw, .K = K, .sam = K, .sak = 1, .sbk = ohw, .sbn = 1, .alpha = 1, .beta = 1, .nb = 1};
    p.bdims[0] = g->batch;
    p.sa[0] = 0;
    p.sb[0] = K * ohw;
    bias_as_c(c, &p, false);
    /* the columns are held as the product will read them (X stands in for them: same dtype),
     * so that no scratch value needs converting */
    gpu_storage st = mm_storage(c, &p);
    int force = c->vk->opts.conv_kernels;
    bool forced = force == OPT_KERNELS_GEMM || force == OPT_KERNELS_GEMM_BATCH;
    /* on CPU devices only float32 products take the CPU MatMul (matmul_cpu.c); the others keep
     * the conv kernels made for CPUs */
    bool cpu = mm_cpu_kernels(c) && st == GPU_W32;
    if (c->vk->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && !cpu && !forced) return VKI_OK;
    if (cpu) {
        VKI_TRY(record_cpu_transposed(c, g, st, taken));
        if (*taken) return VKI_OK;
    }
    /* the CPU MatMul reads whole texels of 4 k: constant weights and the columns are padded to
     * K4 * 4 rows with zeros, so that neither needs a copy at run time */
    int64_t k_pad = K;
    if (cpu && !direct && K % 4 && w->host && (uint64_t)g->batch * ((K + 3) / 4 * 4) * oh <= UINT32_MAX)
        k_pad = (K + 3) / 4 * 4;
    bool coopmat2 = st == GPU_F16 && c->vk->caps.cooperative_matrix2;
    /* Small maps (ResNet's 28x28 and below) run as one product over the whole batch,
     * Y' [Cout, N*OH*OW] = W x col [K, N*OH*OW], then a copy into Y [N, Cout, OH*OW]: per image
     * the products were too small to fill the H200 (layer4's 512 x 49 x 4608: 45 TFLOP/s).
     * VKINFER_CONV_KERNELS=gemm_batch forces it (CI on lavapipe). */
    bool batched = g->batch > 1 && !cpu && (force == OPT_KERNELS_GEMM_BATCH || (coopmat2 && ohw <= 1024));
    /* halves on a device with VK_NV_cooperative_matrix2: the column rows padded to a multiple
     * of 8 (16 bytes), which its kernel loads 16 bytes at a time (the same product read 3-4x
     * faster aligned on the H200). A 1x1 convolution whose maps are not (ResNet's and
     * MobileNet's 14x14 and 7x7) reads X in place all the same: a padded copy of X cost more
     * than the unaligned loads. H200, fp16 mode at batch 1, the padded copy against reading in
     * place (bench/tuning/env_sweep.sh, two passes): mobilenet_v2
     * 0.619 / 0.608 -> 0.498 / 0.520 ms (115 -> 93 dispatches), efficientnet_b0 0.973 / 0.968
     * -> 0.794 / 0.748 (206 -> 152), resnet50 1.098 / 1.074 -> 1.016 / 1.003 (159 -> 142; its
     * products 0.579 -> 0.602 ms of GPU time, its copies 0.234 -> 0.125). */
    int64_t n_cols = batched ? g->batch * ohw : ohw; /* columns of one product */
    bool pad_rows = coopmat2 && n_cols % 8 && !direct;
    if (pad_rows || batched) direct = false;
    /* on CPU devices a 1x1 convolution whose maps are not whole texels (MobileNet's 7x7) reads
     * X through im2col_cpu's padded copy: the CPU MatMul would otherwise pack X into blocks of
     * its column tiles (49 columns padded to 128, with index arithmetic per element: 0.5-1.3 ms
     * a layer on lavapipe against ~0.1 for the copy) */
    if (cpu && direct && ohw % 4) direct = false;
    /* on CPU devices the rows of the columns are whole texels (4 floats, zeros past the map),
     * so that the CPU MatMul reads them in place instead of packing them first (ResNet's 7x7
     * maps) */
    int64_t col_stride = pad_rows ? (n_cols + 7) / 8 * 8 : cpu && !direct ? (n_cols + 3) / 4 * 4 : n_cols; /* row to row */
    int64_t col_image = batched ? ohw : k_pad * col_stride;                /* one image's columns to the next */
    int64_t col_numel = direct ? 0 : batched ? K * col_stride : g->batch * k_pad * col_stride;
    uint64_t range = op_max_binding_bytes(c);
    /* im2col binds X and the columns whole: where either is larger than one binding, the
     * convolution kernels run instead (they split the work along the batch) */
    if (col_numel > UINT32_MAX || (uint64_t)col_numel * storage_size(st) > range ||
        (!direct && (uint64_t)shape_numel(x->dims, x->rank) * storage_size(st) > range))
        return VKI_OK;
    if (k_pad != K) {
        int padded = pad_weights(c, g, K, k_pad);
        if (padded == -2) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory padding W");
        p.a_value = padded;
        p.K = p.sam = k_pad; /* the columns' image stride (col_image) counts k_pad rows too */
    }
    if (!direct) {
        int col;
        VKI_TRY(op_temp(c, x->dtype, col_numel, &col));
        op_value(c, col)->storage = st; /* the product reads it as it reads W */
        /* an invocation per run of 8 k of one output pixel (shaders/im2col.glsl) */
        int64_t invocations = g->batch * ((K + 7) / 8) * ohw;
        im2col_push push = {(uint32_t)invocations, (uint32_t)g->cin, (uint32_t)h, (uint32_t)wd, (uint32_t)kh, (uint32_t)kw,
                            (uint32_t)oh, (uint32_t)ow, (uint32_t)(two ? g->stride[0] : 1), (uint32_t)g->stride[last],
                            (uint32_t)(two ? g->dil[0] : 1), (uint32_t)g->dil[last], (int32_t)(two ? g->pad_begin[0] : 0),
                            (int32_t)g->pad_begin[last], (uint32_t)col_stride, (uint32_t)col_image, (uint32_t)k_pad};
        uint32_t spec[1] = {256}, gx, gy;
        int values[2] = {op_in_index(c, 0), col};
        gpu_storage stores[2] = {st, st};
        if (cpu && col_stride % 4 == 0 &&
            (uint64_t)shape_numel(x->dims, x->rank) <= c->vk->caps.props.limits.maxTexelBufferElements) {
            /* a row of k per invocation, one SIMD vector of llvmpipe per workgroup, X read as a
             * texel buffer (shaders/im2col_cpu.comp); the generic kernel where X has more words
             * than the device's texel buffers hold */
            push.count = (uint32_t)(g->batch * k_pad);
            spec[0] = 8;
            op_grid_1d(push.count, 8, &gx, &gy);
            VKI_TRY(op_dispatch_stored(c, "im2col_cpu", spec, 1, &push, sizeof push, values, NULL, stores, 2, gx, gy, 1));
        } else {
            if (cpu) spec[0] = 64; /* within every device's workgroup limit, as im2col_cpu */
            op_grid_1d((uint64_t)invocations, spec[0], &gx, &gy);
            VKI_TRY(op_dispatch_stored(c, op_variant(c, "im2col", st), spec, 1, &push, sizeof push, values, NULL, stores,
                                       2, gx, gy, 1));
        }
        p.b_value = col;
        p.sbk = col_stride;
        p.sb[0] = col_image;
    }
    /* a residual Add after Y (ResNet's shortcut) and the activation after it into the product's
     * epilogue; the batched form below applies them in its copy into Y's layout */
    int fused_last = batched ? op_epilogue_value(c) : mm_fuse_residual(c, &p, op_epilogue_value(c));
    p.clamp = op_fuse_activation_value(c, fused_last, &p.lo, &p.hi);
    *taken = true;
    if (!batched) return mm_record(c, &p);
    /* one product over the batch into Y' [Cout, N*OH*OW], then Y' copied into Y */
    plan_value *y = op_out(c, 0);
    int yt;
    VKI_TRY(op_temp(c, y->dtype, g->cout * n_cols, &yt));
    op_value(c, yt)->storage = st;
    p.y_value = yt;
    p.N = n_cols;
    p.nb = 0;
    VKI_TRY(mm_record(c, &p));
    /* a residual Add of Y's shape that alone reads Y (ResNet's shortcut), and a Relu after it:
     * applied by the pass that puts Y' into Y's layout instead of passes of their own */
    int other, add = op_fuse_add_find(c, op_epilogue_value(c), &other);
    plan_value *o = add >= 0 ? op_value(c, other) : NULL;
    if (o && !o->host && !o->permuted && !o->view_scale && o->rank == y->rank &&
        !memcmp(o->dims, y->dims, (size_t)y->rank * sizeof *y->dims) &&
        (uint64_t)shape_numel(y->dims, y->rank) * storage_size(st) <= op_max_binding_bytes(c)) {
        op_fuse_claim(c, add, op_epilogue_value(c));
        float lo = -INFINITY, hi = INFINITY;
        bool clamp = op_fuse_clamp_value(c, op_fused_output(c, add), &lo, &hi);
        int64_t dims[3] = {g->batch, g->cout, ohw}, strides[3] = {ohw, g->batch * ohw, 1};
        return binary_add_strided(c, yt, strides, other, op_out_index(c, 0), dims, 3, st, clamp, lo, hi);
    }
    return copy_image_major(c, yt, st, g->batch, g->cout, ohw);
}

/* ---- ConvTranspose as a product and a gather ----
 * col[n] [Cout*kh*kw, IH*IW] = W^T [Cout*kh*kw, Cin] x X[n] [Cin, IH*IW] on the MatMul kernels
 * (the CPU MatMul on CPU devices, src/ops/matmul_cpu.c; the GPU ones elsewhere), then each
 * output row sums the taps that reach it (shaders/col2im_cpu.comp). The reference kernel
 * (shaders/conv.glsl) divides by the strides per tap and lane, which llvmpipe runs one lane
 * at a time: the 1-D U-Net policy test's ConvTranspose1d (32 -> 16 channels, 4 taps, length
 * 16) took 4.3 ms there, and 0.053 ms of the H200's 0.13 for the whole policy (an invocation
 * per output element walking Cin x taps). float32 without groups, 1-D and 2-D; others keep
 * the reference. */
typedef struct col2im_push {
    uint32_t rows, cout, has_bias;
    int32_t ih, iw, oh, ow, ph, pw;
    float lo, hi;
} col2im_push;

vki_status conv_transpose_matmul_record(op_ctx *c, const conv_geom *g, bool *taken)
{
    *taken = false;
    plan_value *x = op_in(c, 0), *w = op_in(c, 1);
    bool cpu = conv_cpu_device(c);
    if ((cpu && !mm_cpu_kernels(c)) || c->vk->opts.conv_reference || g->groups != 1 || g->nsp > 2 ||
        x->dtype != VKI_DTYPE_FLOAT || conv_kernel_storage(c) != GPU_W32)
        return VKI_OK;
    int two = g->nsp == 2, last = g->nsp - 1;
    int64_t ih = two ? g->in[0] : 1, iw = g->in[last], oh = two ? g->out[0] : 1, ow = g->out[last];
    int64_t kh = two ? g->kernel[0] : 1, kw = g->kernel[last], M = g->cout * kh * kw, ihw = ih * iw;
    int64_t col_numel = g->batch * M * ihw, rows = g->batch * g->cout * oh;
    if (shape_numel(w->dims, w->rank) != g->cin * M || col_numel > UINT32_MAX || rows > UINT32_MAX ||
        (uint64_t)col_numel * 4 > op_max_binding_bytes(c) || (uint64_t)rows * (uint64_t)ow * 4 > op_max_binding_bytes(c))
        return VKI_OK;
    int col;
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, col_numel, &col));
    mm_problem p = {.a_value = op_in_index(c, 1), .b_value = op_in_index(c, 0), .y_value = col, .M = M, .N = ihw,
                    .K = g->cin, .sam = 1, .sak = M, .sbk = ihw, .sbn = 1, .alpha = 1, .beta = 1, .nb = 1};
    p.bdims[0] = g->batch;
    p.sb[0] = g->cin * ihw;
    if (cpu) {
        VKI_TRY(mm_record_cpu(c, &p, taken));
        if (!*taken) return VKI_OK;
    } else {
        VKI_TRY(mm_record(c, &p));
        *taken = true;
    }
    col2im_push push = {(uint32_t)rows, (uint32_t)g->cout, op_has_input(c, 2), (int32_t)ih, (int32_t)iw, (int32_t)oh,
                        (int32_t)ow, (int32_t)(two ? g->pad_begin[0] : 0), (int32_t)g->pad_begin[last], -INFINITY, INFINITY};
    bool clamp = op_fuse_clamp(c, 0, &push.lo, &push.hi);
    uint32_t spec[8] = {64, (uint32_t)kh, (uint32_t)kw, (uint32_t)(two ? g->stride[0] : 1), (uint32_t)g->stride[last],
                        (uint32_t)(two ? g->dil[0] : 1), (uint32_t)g->dil[last], op_act_code(clamp, push.lo, push.hi)};
    /* without a bias, binding 1 repeats the columns: the shader never reads it */
    int values[3] = {col, op_has_input(c, 2) ? op_in_index(c, 2) : col, op_out_index(c, 0)};
    uint32_t gx, gy;
    op_grid_1d((uint64_t)rows, 64, &gx, &gy);
    return op_dispatch(c, "col2im_cpu", spec, 8, &push, sizeof push, values, 3, gx, gy, 1);
}
