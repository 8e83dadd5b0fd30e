/* Winograd F(2x2, 3x3) and F(4x4, 3x3) convolutions (winograd_mode) for CPU Vulkan devices
 * (lavapipe) and GPUs' large layers. F(2x2):
 * Y = A^T [(G g G^T) . (B^T d B)] A per 2x2 output tile, as 16 products U[xi] [Cout, Cin] x
 * V[xi] [Cin, tiles] (the CPU MatMul, src/ops/matmul_cpu.c, on lavapipe): 16 multiply-adds per
 * tile and channel pair where im2col and one product spend 36, and V, 4x the input, is written
 * in place of im2col's columns, 9x the input (stores are what llvmpipe does worst: one lane at
 * a time). The weights are transformed on the host at plan time; shaders/winograd_in_cpu.comp
 * and winograd_out_cpu.comp transform the data, the latter adding the bias and the fused
 * activation. float32 only: the transforms' rounding is within fp32's (tests/models). */
#include "conv.h"
#include "matmul.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Below this many tiles (all images) or channels a product is too small to gain from the
 * transforms' two extra dispatches. On GPUs (WINO_LOCAL_GPU invocations a workgroup) only
 * products of WINO_MIN_GPU_MACS multiply-adds or more (Cout x tiles x Cin, one of the 16):
 * measured on the H200 (bench/tuning/gpu_profile.py, VKINFER_CONV_WINOGRAD=1 against im2col and one
 * product), every 3x3 layer of resnet50 at batch 32 (64 x 25088 x 64 to 512 x 512 x 512, 100M+
 * multiply-adds) took 1.4-2.4x less time (the model 16.2 -> 13.5 ms), while resnet18 at batch
 * 1 (64 x 784 x 64 to 512 x 16 x 512, 3-4M) went 0.61 -> 0.67 ms, layer4 0.033 -> 0.053 ms a
 * layer. */
enum { WINO_LOCAL = 8, WINO_LOCAL_GPU = 64, WINO_MIN_TILES = 32, WINO_MIN_CHANNELS = 16, WINO4_MIN_TILES = 32 };
#define WINO_MIN_GPU_MACS (16 * 1024 * 1024)

/* VKINFER_CONV_WINOGRAD=0 keeps im2col and the product, =1 takes Winograd wherever it applies,
 * small layers too (any device: CI on lavapipe forces it for the conformance tests); by default
 * CPU devices whose float32 products run the CPU MatMul, on layers of enough tiles and
 * channels, and GPUs on large products (WINO_MIN_GPU_MACS). */
static bool winograd_wanted(const op_ctx *c, bool *forced)
{
    const vki_options *o = &c->vk->opts;
    *forced = o->conv_winograd == 1;
    if (o->conv_winograd == 0) return false;
    if (*forced) return true;
    /* a kernel family asked for by name (VKINFER_CONV_KERNELS, VKINFER_CONV_REFERENCE) runs as asked */
    if (o->conv_kernels != OPT_AUTO || o->conv_reference) return false;
    return c->vk->caps.props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU || mm_cpu_kernels(c);
}

/* Which transform: F(4x4, 3x3) (36 products of 16 outputs each, 2.25 multiply-adds an output
 * and channel pair where F(2x2, 3x3) spends 4, V 2.25x the input where it is 4x). On GPUs
 * (which take Winograd only for large products, WINO_MIN_GPU_MACS) resnet50 at batch 32 ran
 * 12.19 / 12.26 ms with F(4x4) against 12.56 / 12.50 with F(2x2), alternating, on the H200
 * (eager CUDA 12.28-12.30); GPUs keep F(2x2) where F(4x4) leaves few tiles (the transposed form
 * was not measured there). On CPU devices, where F(4x4) leaves fewer than
 * WINO4_MIN_TILES tiles (all images), products with the tiles along N would be narrow (those of
 * at most 16 columns run transposed through a pack and a copy, src/ops/matmul_cpu.c, which cost
 * resnet18's 14x14 layers more than F(4x4) saved), so it runs transposed (WINO_F4T: the tiles
 * as rows, the output channels as columns; Cout a multiple of 4), F(2x2) where it cannot.
 * VKINFER_CONV_WINOGRAD_TILE=2|4|4t chooses. */
enum { WINO_F2, WINO_F4, WINO_F4T };
static int winograd_mode(const op_ctx *c, int64_t tiles4, int64_t cout)
{
    int tile = c->vk->opts.conv_winograd_tile;
    if (tile == OPT_WINOGRAD_F2) return WINO_F2;
    if (tile == OPT_WINOGRAD_F4) return WINO_F4;
    if (tile == OPT_WINOGRAD_F4T && cout % 4 == 0) return WINO_F4T;
    if (c->vk->caps.props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) return tiles4 >= WINO4_MIN_TILES ? WINO_F4 : WINO_F2;
    return tiles4 >= WINO4_MIN_TILES ? WINO_F4 : cout % 4 == 0 ? WINO_F4T : WINO_F2;
}

/* U[xi][co][ci] = (G g G^T)[xi] for W's 3x3 kernels, rows of k_pad (zeros past Cin), xi over the
 * (m + 2)^2 points of F(m x m, 3x3): G at 0, 1, -1 (m = 2) or 0, 1, -1, 2, -2, infinity (m = 4);
 * transposed: U^T[xi][ci][co], k_pad rows of Cout. */
static void transform_weights(const plan_value *w, int64_t cout, int64_t cin, int64_t k_pad, int m, bool transposed, float *u)
{
    static const double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    static const double G4[6][3] = {{1.0 / 4, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
    int n = m + 2;
    const double(*G)[3] = m == 4 ? G4 : G2;
    memset(u, 0, (size_t)(n * n * cout * k_pad) * sizeof *u);
    for (int64_t co = 0; co < cout; co++)
        for (int64_t ci = 0; ci < cin; ci++) {
            double gk[3][3], t[6][3];
            for (int i = 0; i < 9; i++) gk[i / 3][i % 3] = host_read_f64(w->dtype, w->host, (size_t)((co * cin + ci) * 9 + i));
            for (int a = 0; a < n; a++)
                for (int j = 0; j < 3; j++) t[a][j] = G[a][0] * gk[0][j] + G[a][1] * gk[1][j] + G[a][2] * gk[2][j];
            for (int a = 0; a < n; a++)
                for (int b = 0; b < n; b++)
                    u[transposed ? ((a * n + b) * k_pad + ci) * cout + co : ((a * n + b) * cout + co) * k_pad + ci] =
                        (float)(t[a][0] * G[b][0] + t[a][1] * G[b][1] + t[a][2] * G[b][2]);
        }
}

vki_status conv_winograd_record(op_ctx *c, const conv_geom *g, bool *taken)
{
    *taken = false;
    plan_value *x = op_in(c, 0), *w = op_in(c, 1), *b = op_in(c, 2);
    int y = op_out_index(c, 0);
    bool forced;
    if (!winograd_wanted(c, &forced) || g->nsp != 2 || g->groups != 1 || g->kernel[0] != 3 || g->kernel[1] != 3 ||
        g->stride[0] != 1 || g->stride[1] != 1 || g->dil[0] != 1 || g->dil[1] != 1 || x->dtype != VKI_DTYPE_FLOAT ||
        !w->host || x->view_offset || shape_numel(x->dims, x->rank) == 0 || op_storage(c, op_in_index(c, 0)) != GPU_W32 ||
        op_storage(c, y) != GPU_W32 ||
        (b && op_storage(c, op_in_index(c, 2)) != GPU_W32) ||
        (!forced && (g->cin < WINO_MIN_CHANNELS || g->cout < WINO_MIN_CHANNELS)))
        return VKI_OK;
    /* whether Winograd pays counts F(2x2) tiles, whichever transform runs; the transposed F(4x4)
     * also takes smaller maps of at least one whole tile (resnet18's 7x7 layer4) */
    int64_t oh = g->out[0], ow = g->out[1], all2 = g->batch * ((oh + 1) / 2) * ((ow + 1) / 2);
    int mode = winograd_mode(c, g->batch * ((oh + 3) / 4) * ((ow + 3) / 4), g->cout);
    int tm = mode == WINO_F2 ? 2 : 4, np = (tm + 2) * (tm + 2); /* output tile side, products */
    bool tr = mode == WINO_F4T;
    int64_t tiles_w = (ow + tm - 1) / tm, tiles = (oh + tm - 1) / tm * tiles_w;
    /* the products' tile count: t4 tiles along N (a multiple of 4), or all of them as rows */
    int64_t all = g->batch * tiles, t4 = tr ? all : (all + 3) / 4 * 4, k_pad = (g->cin + 3) / 4 * 4;
    int64_t v_numel = np * k_pad * t4, m_numel = np * g->cout * t4, x_numel = shape_numel(x->dims, x->rank);
    uint64_t range = op_max_binding_bytes(c), texels = c->vk->caps.props.limits.maxTexelBufferElements;
    /* X through a texel buffer of words, M of 4-word texels */
    bool gpu = c->vk->caps.props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    bool enough = all2 >= WINO_MIN_TILES || (tr && oh >= 4 && ow >= 4);
    if ((!forced && !enough) || (!forced && gpu && g->cout * all2 * g->cin < WINO_MIN_GPU_MACS) ||
        (uint64_t)v_numel * 4 > range || (uint64_t)m_numel * 4 > range || (uint64_t)x_numel * 4 > range ||
        (uint64_t)x_numel > texels || (uint64_t)m_numel / 4 > texels || (uint64_t)v_numel / 4 > texels ||
        (uint64_t)k_pad * t4 / 4 > UINT32_MAX || (uint64_t)g->cout * all > UINT32_MAX)
        return VKI_OK;

    int u_value, v_value, m_value;
    float *u = op_temp_const(c, VKI_DTYPE_FLOAT, np * g->cout * k_pad, &u_value);
    if (!u) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory transforming W");
    transform_weights(w, g->cout, g->cin, k_pad, tm, tr, u);
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, v_numel, &v_value));
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, m_numel, &m_value));
    *taken = true;

    struct {
        uint32_t count, cin, k_pad, t4, tiles, tiles_w, images;
        int32_t h, w, ph, pw;
    } in_push = {(uint32_t)(k_pad * t4 / 4), (uint32_t)g->cin, (uint32_t)k_pad, (uint32_t)t4, (uint32_t)tiles,
                 (uint32_t)tiles_w, (uint32_t)g->batch, (int32_t)g->in[0], (int32_t)g->in[1], (int32_t)g->pad_begin[0],
                 (int32_t)g->pad_begin[1]};
    uint32_t local = gpu ? WINO_LOCAL_GPU : WINO_LOCAL, spec[1] = {local}, gx, gy;
    int in_values[2] = {op_in_index(c, 0), v_value};
    gpu_storage stores[3] = {GPU_W32, GPU_W32, GPU_W32};
    op_grid_1d(in_push.count, local, &gx, &gy);
    static const char *in_names[3] = {"winograd_in_cpu", "winograd4_in_cpu", "winograd4t_in_cpu"};
    VKI_TRY(op_dispatch_stored(c, in_names[mode], spec, 1, &in_push, sizeof in_push, in_values, NULL, stores, 2, gx, gy, 1));

    /* M[xi] [Cout, t4] = U[xi] [Cout, k_pad] x V[xi] [k_pad, t4], the 16 (36) as one batched
     * product; transposed M^T[xi] [tiles, Cout] = V^T[xi] [tiles, k_pad] x U^T[xi] [k_pad, Cout] */
    mm_problem p = {.a_value = u_value, .b_value = v_value, .y_value = m_value, .M = g->cout, .N = t4, .K = k_pad,
                    .sam = k_pad, .sak = 1, .sbk = t4, .sbn = 1, .alpha = 1, .beta = 1, .lo = -INFINITY, .hi = INFINITY,
                    .nb = 1};
    p.bdims[0] = np;
    p.sa[0] = g->cout * k_pad;
    p.sb[0] = k_pad * t4;
    if (tr) {
        p.a_value = v_value, p.b_value = u_value, p.M = all, p.N = g->cout, p.sbk = g->cout;
        p.sa[0] = all * k_pad, p.sb[0] = k_pad * g->cout;
    }
    VKI_TRY(mm_record(c, &p));

    /* a residual Add of Y's shape that alone reads Y (ResNet's shortcut), then the activation */
    float lo = -INFINITY, hi = INFINITY;
    int other = -1, tail = op_epilogue_value(c), add = op_fuse_add_find(c, tail, &other);
    plan_value *o = add >= 0 ? op_value(c, other) : NULL, *yv = op_out(c, 0);
    bool residual = o && !o->host && o->rank == yv->rank && !memcmp(o->dims, yv->dims, sizeof yv->dims[0] * (size_t)yv->rank) &&
                    op_storage(c, other) == GPU_W32 && (uint64_t)shape_numel(o->dims, o->rank) * 4 <= range;
    bool act;
    if (residual) {
        op_fuse_claim(c, add, tail);
        act = op_fuse_activation_value(c, op_fused_output(c, add), &lo, &hi);
    } else {
        act = op_fuse_activation(c, 0, &lo, &hi);
    }
    struct {
        uint32_t count, cout, t4, tiles, tiles_w, images, oh, ow;
        float lo, hi;
    } out_push = {(uint32_t)(g->cout * t4 / 4), (uint32_t)g->cout, (uint32_t)t4, (uint32_t)tiles, (uint32_t)tiles_w,
                  (uint32_t)g->batch, (uint32_t)oh, (uint32_t)ow, lo, hi};
    uint32_t out_spec[5] = {local, b != NULL, op_act_code(act, lo, hi), ow % tm == 0, residual};
    int out_values[4] = {m_value, b ? op_in_index(c, 2) : m_value, y, residual ? other : m_value};
    gpu_storage out_stores[4] = {GPU_W32, GPU_W32, GPU_W32, GPU_W32};
    op_grid_1d(out_push.count, local, &gx, &gy);
    static const char *out_names[3] = {"winograd_out_cpu", "winograd4_out_cpu", "winograd4t_out_cpu"};
    return op_dispatch_stored(c, out_names[mode], out_spec, 5, &out_push, sizeof out_push, out_values, NULL, out_stores, 4, gx, gy,
                              1);
}
