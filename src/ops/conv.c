/* Conv and ConvTranspose (1-D, 2-D, 3-D; groups, strides, dilations, pads, auto_pad). The
 * geometry is resolved here once; the dispatch picks a shader: on GPUs an implicit GEMM for
 * 1-D/2-D Conv (split over K when a layer has too few tiles) and a depthwise kernel when each
 * group has one input channel; on CPU devices (lavapipe) register-blocked conv2d_cpu* kernels
 * over weights repacked at plan time; the direct N-d kernel (shaders/conv.glsl) for everything
 * else, ConvTranspose included. */
#include "binary.h"
#include "conv.h"
#include "matmul.h"
#include "movement.h"
#include "op.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

/* Inputs X, W (and B) of either op: float, matching dtypes, ranks 3..5, kernel_shape. */
static vki_status check_inputs(op_ctx *c, conv_geom *g)
{
    VKI_TRY(op_require_inputs(c, 2, 3));
    for (int i = 0; i < 3; i++) VKI_TRY(op_require_float(c, i));
    plan_value *x = op_in(c, 0), *w = op_in(c, 1), *b = op_in(c, 2);
    if (w->dtype != x->dtype || (b && b->dtype != x->dtype))
        return op_error(c, VKI_ERROR_MODEL, "X, W and B must share one dtype");
    if (x->rank < 3 || x->rank > 5)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "X has rank %d; 1-D, 2-D and 3-D convolutions (rank 3 to 5) are supported", x->rank);
    if (w->rank != x->rank) return op_error(c, VKI_ERROR_SHAPE, "W must have the rank of X (%d), has %d", x->rank, w->rank);
    g->nsp = x->rank - 2;
    g->batch = x->dims[0];
    g->cin = x->dims[1];
    g->groups = ir_attr_int(c->node, "group", 1);
    if (g->groups < 1 || g->cin % g->groups)
        return op_error(c, VKI_ERROR_SHAPE, "group %lld does not divide the %lld input channels", (long long)g->groups, (long long)g->cin);
    for (int d = 0; d < g->nsp; d++) {
        g->in[d] = x->dims[2 + d];
        g->kernel[d] = w->dims[2 + d];
    }
    const int64_t *ks;
    int nk = ir_attr_ints(c->node, "kernel_shape", &ks);
    if (nk >= 0) {
        bool same = nk == g->nsp;
        for (int d = 0; same && d < nk; d++) same = ks[d] == g->kernel[d];
        if (!same) return op_error(c, VKI_ERROR_SHAPE, "kernel_shape does not match W's spatial dims");
    }
    VKI_TRY(op_attr_ints_n(c, "strides", g->nsp, 1, 1, INT64_MAX, g->stride));
    VKI_TRY(op_attr_ints_n(c, "dilations", g->nsp, 1, 1, INT64_MAX, g->dil));
    if (shape_numel(x->dims, x->rank) > UINT32_MAX || shape_numel(w->dims, w->rank) > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "inputs over 2^32 elements are not supported");
    return VKI_OK;
}

/* auto_pad as one of "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID". */
static vki_status read_auto_pad(op_ctx *c, const char **mode)
{
    *mode = ir_attr_string(c->node, "auto_pad", "NOTSET");
    if (strcmp(*mode, "NOTSET") && strcmp(*mode, "SAME_UPPER") && strcmp(*mode, "SAME_LOWER") && strcmp(*mode, "VALID"))
        return op_error(c, VKI_ERROR_MODEL, "auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", *mode);
    return VKI_OK;
}

static vki_status check_bias(op_ctx *c, int64_t cout)
{
    plan_value *b = op_in(c, 2);
    if (b && (b->rank != 1 || b->dims[0] != cout))
        return op_error(c, VKI_ERROR_SHAPE, "B must be 1-D of the %lld output channels", (long long)cout);
    return VKI_OK;
}

/* The fast path's tiling, chosen once per node from the images one dispatch takes. */
typedef struct gemm_choice {
    bool usable; /* the tile grid fits the device's workgroup counts */
    uint32_t tm, tn, splits;
} gemm_choice;

static gemm_choice choose_gemm(op_ctx *c, const conv_geom *g, int64_t batch, uint64_t oh, uint64_t ow, uint64_t kernel_hw)
{
    int64_t cin_g = g->cin / g->groups, cout_g = g->cout / g->groups;
    uint64_t pixels = (uint64_t)batch * oh * ow, K = (uint64_t)cin_g * kernel_hw;
    /* big tiles reuse loads best; small layers take small tiles to fill the device */
    gemm_choice ch = {false, 8, 4, 1};
    if (((pixels + 63) / 64) * (((uint64_t)cout_g + 63) / 64) * (uint64_t)g->groups < 512) ch.tm = 4, ch.tn = 2;
    uint64_t tiles_n = (pixels + 16 * ch.tn - 1) / (16 * ch.tn), tiles_m = ((uint64_t)cout_g + 8 * ch.tm - 1) / (8 * ch.tm);
    /* too few tiles for a big GPU (late layers at batch 1): split K, at least 256 deep each */
    uint64_t tiles = tiles_n * tiles_m * (uint64_t)g->groups, splits = 1;
    while (tiles * splits * 2 <= 512 && K / (splits * 2) >= 256 && splits < 16) splits *= 2;
    /* the partial sums are one binding: fewer splits where they would not fit */
    uint64_t out_bytes = pixels * (uint64_t)g->cout * 4;
    while (splits > 1 && out_bytes * splits > op_max_binding_bytes(c)) splits /= 2;
    ch.splits = (uint32_t)splits;
    ch.usable = tiles_n <= 65535 && tiles_m <= 65535 && (uint64_t)g->groups * splits <= 65535;
    return ch;
}

/* The implicit GEMM and depthwise kernels take 1-D and 2-D Conv. */
static bool fast_paths(const op_ctx *c, const conv_geom *g, bool transposed)
{
    return !transposed && g->nsp <= 2 && !c->vk->opts.conv_reference; /* A/B checks of the fast paths */
}

/* A Relu, Clip, GELU, SiLU or Sigmoid that follows the conv and that the conv's kernels apply
 * (op_fuse_activation). */
typedef struct fused_act {
    bool on;
    float lo, hi;
} fused_act;

/* CPU Vulkan drivers (lavapipe) get register-blocked kernels without shared memory
 * (shaders/conv2d_cpu.glsl): the GPU kernels' staging and barriers cost more than they save
 * there. */
/* The CPU-device kernels run on CPU devices; VKINFER_CONV_KERNELS=gpu|cpu overrides, so that
 * CI (on lavapipe) also tests the GPU kernels. */
static bool cpu_device(const op_ctx *c) { return op_cpu_kernels(c, c->vk->opts.conv_kernels); }

/* The CPU kernels' blocking: OCB output channels x PXB pixels per invocation, LX lanes. */
typedef struct cpu_tiling {
    uint32_t lx, ocb, pxb, ohb; /* ohb: output rows an invocation (depthwise) */
} cpu_tiling;

static cpu_tiling choose_cpu_tiling(const op_ctx *c, const conv_geom *g)
{
    /* measured on llvmpipe (2 cores, AVX2): an invocation's accumulators live in vector
     * registers or spill to the stack, cheaply next to a per-lane load, so the blocks are large;
     * layers of 64 channels or more take 32 at once. Depthwise convs block pixels only. */
    int64_t cout_g = g->cout / g->groups;
    cpu_tiling t = {8, cout_g >= 64 ? 32 : 16, 8, 1};
    if (cout_g <= 4) t.ocb = 4;
    /* depthwise layers of stride 1 took 16 pixels an invocation (each kernel row's input span,
     * PXB + 2 for 3x3, loaded once for more outputs: mobilenet_v2's depthwise layers summed 21.4 /
     * 22.9 / 32.5 -> 17.1 / 19.6 / 17.4 ms on lavapipe against 8). 2-D ones now take 8 pixels of
     * 2 output rows (OHB): an input row is loaded once for both rows whose windows cover it, 4
     * rows for 2 outputs rows where two invocations loaded 6. mobilenet_v2's depthwise layers
     * summed, one lavapipe thread, 4 alternating profiled runs: 35.4-38.4 ms (16 pixels of one
     * row) -> 23.4-35.1 (8 of 2 rows); 16 pixels of 2 rows (spilled) and 3 rows were slower.
     * VKINFER_CPU_DW_ROWS (1-4) and VKINFER_CPU_DW_PXB (4, 8, 16) override, for tuning. */
    if (g->cin == g->groups && g->stride[g->nsp - 1] == 1) t.pxb = 16;
    if (g->cin == g->groups && g->nsp == 2) t.ohb = 2, t.pxb = 8;
    const vki_options *o = &c->vk->opts;
    if (g->cin == g->groups && g->nsp == 2 && o->cpu_dw_rows != OPT_AUTO) t.ohb = (uint32_t)o->cpu_dw_rows;
    if (g->cin == g->groups && o->cpu_dw_pxb != OPT_AUTO) t.pxb = (uint32_t)o->cpu_dw_pxb;
    return t;
}

/* Whether the CPU kernels' grids for `batch` images fit the device's workgroup counts. */
static bool cpu_grid_fits(const op_ctx *c, const conv_geom *g, int64_t batch)
{
    cpu_tiling t = choose_cpu_tiling(c, g);
    uint64_t oh = g->nsp == 2 ? (uint64_t)g->out[0] : 1, ow = (uint64_t)g->out[g->nsp - 1];
    uint64_t columns = (uint64_t)batch * ((oh + t.ohb - 1) / t.ohb) * ((ow + t.pxb - 1) / t.pxb);
    uint64_t cout_g = (uint64_t)(g->cout / g->groups);
    uint64_t rows = g->cin == g->groups ? (uint64_t)g->cout : (cout_g + t.ocb - 1) / t.ocb;
    return (columns + t.lx - 1) / t.lx <= 65535 && rows <= 65535 && g->groups <= 65535;
}

/* The packed CPU kernel reads W as [group][block of ocb channels][k][ocb], zero-padded past
 * the last channel. The copy keeps W's dtype and is held in the kernel's storage `st` (halves
 * for the 16-bit variants, so that a half model's weights stay half; the upload narrows).
 * Returns the packed value, or -1 when W is not a constant (the plain CPU kernel then reads W
 * as it is). */
static int pack_cpu_weights(op_ctx *c, const conv_geom *g, uint32_t ocb, gpu_storage st)
{
    plan_value *w = op_in(c, 1);
    if (!op_input_is_const(c, 1) || !w->host) return -1;
    int64_t cout_g = g->cout / g->groups, blocks = (cout_g + ocb - 1) / ocb;
    int64_t K = shape_numel(w->dims + 1, w->rank - 1);
    size_t elem = vki_dtype_size(w->dtype);
    int packed;
    uint8_t *dst = op_temp_const(c, w->dtype, g->groups * blocks * K * ocb, &packed);
    if (!dst) return -2;
    op_value(c, packed)->storage = st;
    const uint8_t *src = w->host;
    for (int64_t gi = 0; gi < g->groups; gi++)
        for (int64_t oc = 0; oc < cout_g; oc++)
            for (int64_t k = 0; k < K; k++)
                memcpy(dst + (size_t)(((gi * blocks + oc / ocb) * K + k) * ocb + oc % ocb) * elem,
                       src + (size_t)((gi * cout_g + oc) * K + k) * elem, elem);
    return packed;
}

/* 1-D and 2-D convolutions as the 2-D kernels take them (a 1-D conv has height 1). */
typedef struct conv2d_view {
    int32_t ih, iw, oh, ow, ph, pw;
    uint32_t kh, kw, sh, sw, dh, dw;
} conv2d_view;

static conv2d_view view_2d(const conv_geom *g)
{
    int last = g->nsp - 1;
    bool two = g->nsp == 2;
    conv2d_view v = {two ? (int32_t)g->in[0] : 1, (int32_t)g->in[last], two ? (int32_t)g->out[0] : 1,
                     (int32_t)g->out[last], two ? (int32_t)g->pad_begin[0] : 0, (int32_t)g->pad_begin[last],
                     two ? (uint32_t)g->kernel[0] : 1, (uint32_t)g->kernel[last], two ? (uint32_t)g->stride[0] : 1,
                     (uint32_t)g->stride[last], two ? (uint32_t)g->dil[0] : 1, (uint32_t)g->dil[last]};
    return v;
}

/* Float32 depthwise convolutions on CPU devices (shaders/conv2d_cpu_dw_planes.glsl): the lanes of a
 * workgroup are adjacent output planes, the workgroup one block of PXB columns and RB rows,
 * which a lane walks keeping the input rows under its window in registers. 16-bit storage and
 * inputs too large for a texel buffer keep conv2d_cpu_depthwise(_tx) below (lanes along a
 * row's columns; VKINFER_CPU_DW=rows takes it for float32 too, for tests and comparisons). */
typedef struct dw_planes_tiling {
    uint32_t lx, pxb, rb;
} dw_planes_tiling;

static dw_planes_tiling dw_planes_choose(const op_ctx *c, const conv_geom *g)
{
    /* 16 columns of 16 rows a lane: the input row spans (PXB + 2 for 3x3) are fetched once for
     * more outputs; rows narrower than 16 take 8 or 4 columns, so that lanes do not compute
     * columns past the row. Least of 5 alternating profiled runs, lavapipe, 2 cores, 3x3
     * layers of mobilenet_v2's shapes with a fused ReLU6 (conv2d_cpu_depthwise_tx, 8 pixels
     * of 2 rows a lane along the columns -> this kernel at 8 x 8 -> 16 x 16): 32 x 112 x 112
     * 1.67 -> 0.79 -> 0.51 ms, 144 x 56 x 56 1.30 -> 0.70 -> 0.65, 96 x 112 x 112 stride 2
     * 1.33 -> 0.82 -> 0.84-0.97, 384 x 14 x 14 0.38 -> 0.39 -> 0.25-0.32 (onnxruntime, 2
     * threads: 0.20, 0.23, 0.28, 0.09). Rows of 4 to 112 a lane measured within the VM's drift
     * of one another past 8. VKINFER_CPU_DW_PXB (4, 8, 16) and VKINFER_CPU_DW_RB (1-4096)
     * override, for tests and tuning. */
    const conv2d_view v = view_2d(g);
    const vki_options *o = &c->vk->opts;
    dw_planes_tiling t = {8, v.ow > 8 ? 16 : v.ow > 4 ? 8 : 4, (uint32_t)o->cpu_dw_rb};
    if (o->cpu_dw_pxb != OPT_AUTO) t.pxb = (uint32_t)o->cpu_dw_pxb;
    return t;
}

/* The kernel's grid: planes along x (LX a workgroup), column blocks times row chunks along y. */
static bool cpu_dw_planes_fits(op_ctx *c, const conv_geom *g, int64_t batch, const op_window *win)
{
    const conv2d_view v = view_2d(g);
    dw_planes_tiling t = dw_planes_choose(c, g);
    uint64_t planes = (uint64_t)batch * (uint64_t)g->cout;
    uint64_t blocks = ((uint64_t)v.ow + t.pxb - 1) / t.pxb * (((uint64_t)v.oh + t.rb - 1) / t.rb);
    uint64_t x_words = win ? win[0].size / 4 : (uint64_t)shape_numel(op_in(c, 0)->dims, op_in(c, 0)->rank);
    uint64_t w_words = (uint64_t)shape_numel(op_in(c, 1)->dims, op_in(c, 1)->rank);
    uint32_t texels = c->vk->caps.props.limits.maxTexelBufferElements;
    return (planes + t.lx - 1) / t.lx <= 65535 && blocks <= 65535 && x_words <= texels && w_words <= texels &&
           op_in(c, 0)->dtype == VKI_DTYPE_FLOAT;
}

static vki_status record_cpu_dw_planes(op_ctx *c, const conv_geom *g, int64_t batch, const op_window *win,
                                       const int *values, const fused_act *act)
{
    const gpu_storage stores[4] = {GPU_W32, GPU_W32, GPU_W32, GPU_W32};
    const conv2d_view v = view_2d(g);
    dw_planes_tiling t = dw_planes_choose(c, g);
    uint32_t col_blocks = (uint32_t)(((int64_t)v.ow + t.pxb - 1) / t.pxb);
    uint32_t row_chunks = (uint32_t)(((int64_t)v.oh + t.rb - 1) / t.rb);
    /* windows that never leave the input skip the bounds checks; column blocks reach past OW
     * to a multiple of PXB */
    int64_t ow_span = (int64_t)col_blocks * t.pxb;
    bool padded = v.ph > 0 || v.pw > 0 || (int64_t)(v.oh - 1) * v.sh + (int64_t)(v.kh - 1) * v.dh >= v.ih ||
                  (ow_span - 1) * v.sw + (int64_t)(v.kw - 1) * v.dw >= v.iw;
    bool vec4_y = v.ow % 4 == 0 && t.pxb % 4 == 0 && !win;
    /* rows of whole texels: X read 4 columns a fetch (every window row then starts at the same
     * place in its texel, MIS); VKINFER_CPU_DW_X4=0 reads words, for tests and comparisons */
    bool x_vec4 = v.iw % 4 == 0 && t.pxb % 4 == 0 && c->vk->opts.cpu_dw_x4;
    uint32_t spec[13] = {t.lx, t.pxb, v.kh, v.kw, v.sh, v.sw, v.dh, v.dw, op_act_code(act->on, act->lo, act->hi),
                         padded, vec4_y, t.rb, (uint32_t)((4 - v.pw % 4) % 4)};
    struct {
        uint32_t planes, cin, cout, cout_g, has_bias;
        int32_t ih, iw, oh, ow, ph, pw;
        uint32_t col_blocks;
        float lo, hi;
    } push = {(uint32_t)(batch * g->cout), (uint32_t)g->cin, (uint32_t)g->cout, (uint32_t)(g->cout / g->groups),
              op_has_input(c, 2), v.ih, v.iw, v.oh, v.ow, v.ph, v.pw, col_blocks, act->lo, act->hi};
    uint64_t gx = ((uint64_t)batch * (uint64_t)g->cout + t.lx - 1) / t.lx;
    return op_dispatch_stored(c, x_vec4 ? "conv2d_cpu_dw_planes_v4" : "conv2d_cpu_dw_planes", spec, 13, &push, sizeof push,
                              values, win, stores, 4,
                              (uint32_t)gx, col_blocks * row_chunks, 1);
}

static vki_status record_cpu(op_ctx *c, const conv_geom *g, int64_t batch, const op_window *win, const int *values,
                             int packed, const fused_act *act, gpu_storage st)
{
    const gpu_storage stores[4] = {st, st, st, st};
    int64_t cin_g = g->cin / g->groups, cout_g = g->cout / g->groups;
    const conv2d_view v = view_2d(g);
    cpu_tiling t = choose_cpu_tiling(c, g);
    /* windows that never leave the input skip the bounds checks; the packed kernel loads
     * whole row spans, which reach past OW to a multiple of pxb */
    int64_t ow_span = packed >= 0 || cin_g == 1 ? ((int64_t)v.ow + t.pxb - 1) / t.pxb * t.pxb : v.ow;
    int64_t oh_span = ((int64_t)v.oh + t.ohb - 1) / t.ohb * t.ohb; /* depthwise row blocks reach past OH */
    bool padded = v.ph > 0 || v.pw > 0 || (oh_span - 1) * v.sh + (int64_t)(v.kh - 1) * v.dh >= v.ih ||
                  (ow_span - 1) * v.sw + (int64_t)(v.kw - 1) * v.dw >= v.iw;
    uint32_t dt = op_dtype_code(op_in(c, 0)->dtype);
    uint32_t spec[12] = {t.lx, dt, v.kh, v.kw, v.sh, v.sw, v.dh, v.dw, t.ocb, t.pxb, op_act_code(act->on, act->lo, act->hi),
                        padded};
    uint64_t tiles_m = ((uint64_t)cout_g + t.ocb - 1) / t.ocb;
    struct {
        uint32_t work, cin, cin_g, cout, cout_g, has_bias;
        int32_t ih, iw, oh, ow, ph, pw;
        float lo, hi;
    } push = {0, (uint32_t)g->cin, (uint32_t)cin_g, (uint32_t)g->cout, (uint32_t)cout_g,
              op_has_input(c, 2), v.ih, v.iw, v.oh, v.ow, v.ph, v.pw, act->lo, act->hi};
    /* VKINFER_CPU_DW=rows: conv2d_cpu_depthwise for float32 too */
    if (cin_g == 1 && st == GPU_W32 && c->vk->opts.cpu_dw != OPT_CPU_DW_ROWS && cpu_dw_planes_fits(c, g, batch, win))
        return record_cpu_dw_planes(c, g, batch, win, values, act);
    if (cin_g == 1) {
        /* depthwise: W as it is, one channel per workgroup row */
        uint64_t columns = (uint64_t)batch * (((uint64_t)v.oh + t.ohb - 1) / t.ohb) * (((uint64_t)v.ow + t.pxb - 1) / t.pxb);
        push.work = (uint32_t)columns;
        /* 32-bit words: X through a texel buffer where its words fit one (mobilenet_v2's
         * depthwise layers 35.8 -> 25.1 ms summed on lavapipe, least of 6 alternating profiled
         * rounds at load 9) */
        uint64_t x_words = win ? win[0].size / 4 : (uint64_t)shape_numel(op_in(c, 0)->dims, op_in(c, 0)->rank);
        bool texel_x = st == GPU_W32 && x_words <= c->vk->caps.props.limits.maxTexelBufferElements;
        /* whole runs of 4 outputs as one store (the PXB pixels of a row are 4-aligned) */
        uint32_t spec_dw[14];
        memcpy(spec_dw, spec, sizeof spec);
        spec_dw[12] = texel_x && v.ow % 4 == 0 && t.pxb % 4 == 0 && !win;
        spec_dw[13] = t.ohb;
        return op_dispatch_stored(c, texel_x ? "conv2d_cpu_depthwise_tx" : op_variant(c, "conv2d_cpu_depthwise", st), spec_dw,
                                  14, &push, sizeof push, values,
                                  win, stores, 4, (uint32_t)((columns + t.lx - 1) / t.lx), (uint32_t)g->cout, 1);
    }
    if (packed >= 0) {
        /* the packed weights are bound whole, X and Y as the caller's windows */
        int pvalues[4] = {values[0], packed, values[2], values[3]};
        op_window pwin[4];
        if (win) {
            memcpy(pwin, win, sizeof pwin);
            pwin[1] = (op_window){0, 0};
        }
        /* pointwise layers whose planes are whole vec4s read X and write Y 4 pixels at a time */
        bool pointwise = v.kh == 1 && v.kw == 1 && v.sh == 1 && v.sw == 1 && v.ph == 0 && v.pw == 0 && v.oh == v.ih && v.ow == v.iw;
        bool vec4_planes = pointwise && (int64_t)v.oh * v.ow % 4 == 0;
        uint64_t plane4 = (uint64_t)v.oh * (uint64_t)v.ow / 4, px4 = t.pxb / 4;
        uint64_t columns = vec4_planes ? (uint64_t)batch * ((plane4 + px4 - 1) / px4)
                                       : (uint64_t)batch * (uint64_t)v.oh * (((uint64_t)v.ow + t.pxb - 1) / t.pxb);
        push.work = (uint32_t)columns;
        return op_dispatch_stored(c, op_variant(c, vec4_planes ? "conv2d_cpu_1x1" : "conv2d_cpu_packed", st), spec, 12,
                                  &push, sizeof push, pvalues, win ? pwin : NULL, stores, 4,
                                  (uint32_t)((columns + t.lx - 1) / t.lx), (uint32_t)tiles_m, (uint32_t)g->groups);
    }
    uint64_t pixels = (uint64_t)batch * (uint64_t)v.oh * (uint64_t)v.ow;
    push.work = (uint32_t)pixels;
    uint64_t tiles_n = (pixels + t.lx * t.pxb - 1) / (t.lx * t.pxb);
    return op_dispatch_stored(c, op_variant(c, "conv2d_cpu", st), spec, 12, &push, sizeof push, values, win, stores, 4,
                              (uint32_t)tiles_n, (uint32_t)tiles_m, (uint32_t)g->groups);
}

/* Records Y = conv(X, W) + B for `batch` images: bindings X and Y (and split-K's `partial`)
 * are windows of that many images, so the shaders see a batch of `batch`. X, W, B and Y are
 * bound in storage st (the kernels' 16-bit variants for halves); split-K's partial sums are
 * fp32 words in every variant. */
static vki_status record_images_kernels(op_ctx *c, const conv_geom *g, bool transposed, int64_t batch, const op_window *win,
                                        const gemm_choice *gemm, int partial, bool cpu, int cpu_packed, const fused_act *act,
                                        gpu_storage st)
{
    gpu_storage stores[4] = {st, st, st, st};
    plan_value *x = op_in(c, 0);
    int64_t count = batch * g->cout;
    for (int d = 0; d < g->nsp; d++) count *= g->out[d];
    bool has_bias = op_has_input(c, 2);
    /* without B the weights stand in at binding 2; the shaders then never read it */
    int values[4] = {op_in_index(c, 0), op_in_index(c, 1), has_bias ? op_in_index(c, 2) : op_in_index(c, 1), op_out_index(c, 0)};
    uint32_t dt = op_dtype_code(x->dtype);
    int64_t cin_g = g->cin / g->groups, cout_g = g->cout / g->groups;
    uint32_t gx, gy;
    bool fast = fast_paths(c, g, transposed);

    const conv2d_view v = view_2d(g);

    if (fast && cpu && (cpu_packed >= 0 || cin_g == 1))
        return record_cpu(c, g, batch, win, values, cpu_packed, act, st);
    if (fast && cin_g == 1) {
        uint32_t spec[10] = {128, dt, v.kh, v.kw, v.sh, v.sw, v.dh, v.dw, op_act_code(act->on, act->lo, act->hi), 0};
        struct {
            uint32_t count, cin, cout, multiplier, has_bias;
            int32_t ih, iw, oh, ow, ph, pw;
            float lo, hi;
            mm_store_layout y;
        } push = {(uint32_t)count, (uint32_t)g->cin, (uint32_t)g->cout, (uint32_t)cout_g, has_bias, v.ih, v.iw, v.oh, v.ow,
                  v.ph, v.pw, act->lo, act->hi, mm_dense_layout(batch, g->cout, (int64_t)v.oh * v.ow)};
        /* a Transpose alone reading Y (ConvNeXt's NCHW -> NHWC before its LayerNormalization)
         * stored through: no copy of its own. Y whole (no windows), no fused activation (the
         * Transpose would read the activation's output) */
        if (!win && !act->on) {
            plan_value *y = op_out(c, 0);
            VKI_TRY(mm_store_transposed_any(c, op_out_index(c, 0), op_out_index(c, 0), y->dims, y->rank, batch, g->cout,
                                            (int64_t)v.oh * v.ow, st, &push.y, &values[3]));
            spec[9] = values[3] != op_out_index(c, 0);
        }
        op_grid_1d((uint64_t)count, 128, &gx, &gy);
        return op_dispatch_stored(c, op_variant(c, "conv2d_depthwise", st), spec, 10, &push, sizeof push, values, win,
                                  stores, 4, gx, gy, 1);
    }
    if (fast && cpu) return record_cpu(c, g, batch, win, values, -1, act, st);
    if (fast && gemm->usable) {
        uint64_t pixels = (uint64_t)batch * (uint64_t)v.oh * (uint64_t)v.ow;
        uint64_t K = (uint64_t)cin_g * v.kh * v.kw;
        uint32_t tm = gemm->tm, tn = gemm->tn, splits = gemm->splits;
        uint64_t tiles_n = (pixels + 16 * tn - 1) / (16 * tn), tiles_m = ((uint64_t)cout_g + 8 * tm - 1) / (8 * tm);
        uint32_t k_chunk = (uint32_t)(((K + splits - 1) / splits + 15) / 16 * 16);
        uint32_t act_code = op_act_code(act->on, act->lo, act->hi); /* compiled in (fused_act.glsl) */
        uint32_t spec[12] = {128, dt, v.kh, v.kw, v.sh, v.sw, v.dh, v.dw, tm, tn, splits, splits == 1 ? act_code : 0};
        struct {
            uint32_t pixels, cin, cin_g, cout, cout_g, has_bias;
            int32_t ih, iw, oh, ow, ph, pw;
            uint32_t k_chunk;
            float lo, hi;
        } push = {(uint32_t)pixels, (uint32_t)g->cin, (uint32_t)cin_g, (uint32_t)g->cout, (uint32_t)cout_g, has_bias,
                  v.ih, v.iw, v.oh, v.ow, v.ph, v.pw, k_chunk, act->lo, act->hi};
        op_window gemm_win[4];
        if (win) memcpy(gemm_win, win, sizeof gemm_win);
        if (splits > 1) {
            values[3] = partial;
            gemm_win[3] = (op_window){0, 0};
            stores[3] = GPU_W32;
        }
        VKI_TRY(op_dispatch_stored(c, op_variant(c, "conv2d_gemm", st), spec, 12, &push, sizeof push, values,
                                   win ? gemm_win : NULL, stores, 4, (uint32_t)tiles_n, (uint32_t)tiles_m,
                                   (uint32_t)(g->groups * splits)));
        if (splits == 1) return VKI_OK;
        uint32_t rspec[3] = {128, dt, act_code};
        struct { uint32_t count, out_plane, cout, splits, has_bias; float lo, hi; } rpush = {
            (uint32_t)count, (uint32_t)(v.oh * v.ow), (uint32_t)g->cout, splits, has_bias, act->lo, act->hi};
        int rvalues[3] = {partial, values[2], op_out_index(c, 0)};
        op_window rwin[3] = {{0, 0}, {0, 0}, win ? win[3] : (op_window){0, 0}};
        op_grid_1d((uint64_t)count, 128, &gx, &gy);
        gpu_storage rstores[3] = {GPU_W32, st, st};
        return op_dispatch_stored(c, op_variant(c, "conv_splitk_reduce", st), rspec, 3, &rpush, sizeof rpush, rvalues,
                                  win ? rwin : NULL, rstores, 3, gx, gy, 1);
    }
    /* the reference: spatial dims right-aligned into (d, h, w) */
    struct {
        uint32_t count, cin, cin_g, cout, cout_g, has_bias;
        float lo, hi;
        int32_t in[4], out[4], kernel[4], stride[4], dil[4], pad[4];
    } push = {(uint32_t)count, (uint32_t)g->cin, (uint32_t)cin_g, (uint32_t)g->cout, (uint32_t)cout_g, has_bias,
              act->lo, act->hi};
    for (int d = 0; d < 3; d++) {
        int s = d - (3 - g->nsp); /* the source spatial dim, or < 0 for a size-1 dim */
        push.in[d] = s < 0 ? 1 : (int32_t)g->in[s];
        push.out[d] = s < 0 ? 1 : (int32_t)g->out[s];
        push.kernel[d] = s < 0 ? 1 : (int32_t)g->kernel[s];
        push.stride[d] = s < 0 ? 1 : (int32_t)g->stride[s];
        push.dil[d] = s < 0 ? 1 : (int32_t)g->dil[s];
        push.pad[d] = s < 0 ? 0 : (int32_t)g->pad_begin[s];
    }
    uint32_t spec[4] = {128, dt, transposed, op_act_code(act->on, act->lo, act->hi)};
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    return op_dispatch_stored(c, op_variant(c, "conv", st), spec, 4, &push, sizeof push, values, win, stores, 4, gx, gy, 1);
}

/* record_images_kernels with the profile's operation count on its first dispatch (the
 * convolution's; a split-K reduce follows it) */
static vki_status record_images(op_ctx *c, const conv_geom *g, bool transposed, int64_t batch, const op_window *win,
                                const gemm_choice *gemm, int partial, bool cpu, int cpu_packed, const fused_act *act,
                                gpu_storage st)
{
    int first = op_dispatch_mark(c);
    VKI_TRY(record_images_kernels(c, g, transposed, batch, win, gemm, partial, cpu, cpu_packed, act, st));
    /* per output (input, transposed) element: cin/groups (cout/groups) taps times the kernel */
    double macs = (double)batch * (double)(transposed ? g->cin : g->cout) * (double)(transposed ? g->cout / g->groups : g->cin / g->groups);
    for (int d = 0; d < g->nsp; d++) macs *= (double)(transposed ? g->in[d] : g->out[d]) * (double)g->kernel[d];
    op_note_flops_at(c, first, 2 * macs);
    return VKI_OK;
}

/* The storage the kernels take X, W, B and Y in: a 16-bit float storage where W and B are
 * held in it and so is X or Y (a graph input or output next to half weights, as in the fp16
 * mode, is converted rather than widening the weights); 32-bit words otherwise. */
static gpu_storage kernel_storage(op_ctx *c)
{
    int weights[2] = {op_in_index(c, 1), op_has_input(c, 2) ? op_in_index(c, 2) : -1};
    gpu_storage st = op_half_storage(c, weights, 2);
    if (st != GPU_W32 && op_storage(c, op_in_index(c, 0)) != st && op_storage(c, op_out_index(c, 0)) != st) return GPU_W32;
    return st;
}

/* ---- a convolution as a matrix product ----
 * On GPUs a 2-D convolution without groups runs as MatMul's kernels (src/ops/matmul.c):
 * Y[n] = W [Cout, Cin*kh*kw] x col[n] [Cin*kh*kw, OH*OW], where col is X itself for a 1x1,
 * stride-1, unpadded convolution and an im2col copy of X otherwise. The product kernels are
 * the fastest the device has (register-blocked tiles, split K, cooperative matrices for
 * halves): measured on the H200, conv2d_gemm reached 3.8 TFLOP/s on resnet50 where
 * matmul_tiled reaches 27. The column buffer costs kh*kw times X's memory (liveness-shared);
 * where it does not fit one binding, the convolution kernels run instead.
 * VKINFER_CONV_KERNELS=gemm forces this path (CI on lavapipe), =gpu or =cpu the others. */
static bool matmul_path_wanted(const op_ctx *c, const conv_geom *g, bool transposed)
{
    if (transposed || g->groups != 1 || g->nsp > 2 || !fast_paths(c, g, transposed)) return false;
    int force = c->vk->opts.conv_kernels;
    if (force != OPT_AUTO) return force == OPT_KERNELS_GEMM || force == OPT_KERNELS_GEMM_BATCH;
    /* CPU devices too, for float32 (record_as_matmul declines other storage there): im2col and
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

static vki_status record_as_matmul(op_ctx *c, const conv_geom *g, bool *taken)
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
     * place (bench/env_sweep.sh, two passes): mobilenet_v2
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

static vki_status record_transposed(op_ctx *c, const conv_geom *g, bool *taken)
{
    *taken = false;
    plan_value *x = op_in(c, 0), *w = op_in(c, 1);
    bool cpu = cpu_device(c);
    if ((cpu && !mm_cpu_kernels(c)) || c->vk->opts.conv_reference || g->groups != 1 || g->nsp > 2 ||
        x->dtype != VKI_DTYPE_FLOAT || kernel_storage(c) != GPU_W32)
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

/* Whether constant o broadcasts against a convolution's output [N, Cout, spatial...] (rank
 * out_rank) as one value per output channel (or one for all). */
static bool per_channel(const plan_value *o, int out_rank, int64_t cout)
{
    if (!o->shaped || !o->host || !dtype_is_float(o->dtype) || o->permuted || o->view_scale || o->rank > out_rank)
        return false;
    for (int d = 0; d < o->rank; d++) {
        int axis = out_rank - o->rank + d;
        if (o->dims[d] != 1 && !(axis == 1 && o->dims[d] == cout)) return false;
    }
    return true;
}

/* The node as the kernels see it once fold_channel_affine has replaced its W and B. */
typedef struct folded_node {
    ir_node node;
    int inputs[3];
} folded_node;

/* Conv -> Mul by a constant per output channel [-> Add of one]: FrozenBatchNorm2d (the
 * torchvision layer that LeRobot's ACT backbone uses), whose scale and shift both PyTorch
 * exporters leave as a Mul and an Add where they fold a BatchNormalization into the Conv. Folded
 * into W and the bias at plan time, y * s + t = conv(x, W * s) + (b * s + t), and the Mul and
 * the Add claimed as views of Y: further fusion (a residual Add, a Relu) goes on after them
 * (op_epilogue_value). ACT on lavapipe had 20 such chains, 12% of its time
 * (docs/history/benchmarks-notebook.md). */
static vki_status fold_channel_affine(op_ctx *c, const conv_geom *g, folded_node *f)
{
    plan_value *w = op_in(c, 1), *b = op_in(c, 2);
    int y = op_out_index(c, 0), out_rank = 2 + g->nsp;
    if (!op_fusion_on(c) || !w->host || (b && !b->host) || !dtype_is_float(w->dtype)) return VKI_OK;
    int mul = op_only_reader(c, y, "Mul");
    const ir_node *mn = mul >= 0 ? op_graph_node(c, mul) : NULL;
    if (!mn || mn->n_inputs != 2) return VKI_OK;
    int s = mn->inputs[0] == y ? mn->inputs[1] : mn->inputs[0], t = -1, tail = mn->outputs[0];
    if (s < 0 || s == y || !per_channel(op_value(c, s), out_rank, g->cout)) return VKI_OK;
    int add = op_only_reader(c, tail, "Add");
    if (add >= 0) {
        const ir_node *an = op_graph_node(c, add);
        t = an->n_inputs == 2 ? (an->inputs[0] == tail ? an->inputs[1] : an->inputs[0]) : -1;
        if (t < 0 || t == tail || !per_channel(op_value(c, t), out_rank, g->cout)) add = -1, t = -1;
    }
    plan_value *sv = op_value(c, s), *tv = t >= 0 ? op_value(c, t) : NULL;
    int64_t w_numel = shape_numel(w->dims, w->rank), per = g->cout ? w_numel / g->cout : 0;
    int w_value, b_value;
    void *wd = op_temp_const(c, w->dtype, w_numel, &w_value);
    void *bd = wd ? op_temp_const(c, w->dtype, g->cout, &b_value) : NULL;
    if (!bd) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory folding a per-channel Mul into W");
    for (int64_t co = 0; co < g->cout; co++) {
        double sc = host_read_f64(sv->dtype, sv->host, shape_numel(sv->dims, sv->rank) > 1 ? (size_t)co : 0);
        double sh = tv ? host_read_f64(tv->dtype, tv->host, shape_numel(tv->dims, tv->rank) > 1 ? (size_t)co : 0) : 0;
        for (int64_t i = 0; i < per; i++)
            host_write_f64(w->dtype, wd, (size_t)(co * per + i), host_read_f64(w->dtype, w->host, (size_t)(co * per + i)) * sc);
        host_write_f64(w->dtype, bd, (size_t)co, (b ? host_read_f64(b->dtype, b->host, (size_t)co) : 0) * sc + sh);
    }
    /* held as W is (16-bit storage, the fp16 mode) */
    plan_value *nw = op_value(c, w_value), *nb = op_value(c, b_value);
    nw->rank = w->rank;
    memcpy(nw->dims, w->dims, sizeof nw->dims);
    nw->storage = nb->storage = w->storage;
    op_fuse_claim(c, mul, y);
    if (add >= 0) {
        op_fuse_claim(c, add, tail);
        tail = op_graph_node(c, add)->outputs[0];
    }
    /* the last claimed value looks as Y does, for op_fuse_add_find's broadcast check */
    plan_value *yv = op_out(c, 0), *last = op_value(c, tail);
    last->dtype = yv->dtype;
    last->storage = yv->storage;
    last->rank = yv->rank;
    memcpy(last->dims, yv->dims, sizeof last->dims);
    last->shaped = true;
    c->epilogue_from = tail + 1;
    f->node = *c->node;
    f->inputs[0] = op_in_index(c, 0);
    f->inputs[1] = w_value;
    f->inputs[2] = b_value;
    f->node.inputs = f->inputs;
    f->node.n_inputs = 3;
    c->node = &f->node;
    return VKI_OK;
}

static vki_status record_kernels(op_ctx *c, const conv_geom *g, bool transposed, int64_t count);

/* Records the shaders for g. A batch too large for one binding runs as several dispatches over
 * windows of whole images (weights and bias bound whole). */
static vki_status record(op_ctx *c, const conv_geom *g, bool transposed)
{
    plan_value *x = op_in(c, 0);
    int64_t out_dims[5] = {g->batch, g->cout};
    for (int d = 0; d < g->nsp; d++) out_dims[2 + d] = g->out[d];
    VKI_TRY(op_set_output(c, 0, x->dtype, 2 + g->nsp, out_dims));
    int64_t count = shape_numel(out_dims, 2 + g->nsp);
    if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "outputs over 2^32 elements are not supported");
    if (count == 0) return VKI_OK;
    const ir_node *node = c->node;
    folded_node folded;
    vki_status st = transposed ? VKI_OK : fold_channel_affine(c, g, &folded);
    if (st == VKI_OK) st = record_kernels(c, g, transposed, count);
    c->node = node; /* the graph's node again, not the local copy with folded W and B */
    return st;
}

static vki_status record_kernels(op_ctx *c, const conv_geom *g, bool transposed, int64_t count)
{
    plan_value *x = op_in(c, 0);
    if (!transposed) {
        bool taken;
        VKI_TRY(conv_winograd_record(c, g, &taken));
        if (taken) return VKI_OK;
    }
    if (matmul_path_wanted(c, g, transposed)) {
        bool taken;
        VKI_TRY(record_as_matmul(c, g, &taken));
        if (taken) return VKI_OK;
    }
    if (transposed) {
        bool taken;
        VKI_TRY(record_transposed(c, g, &taken));
        if (taken) return VKI_OK;
    }
    gpu_storage st = kernel_storage(c);
    uint64_t elem = storage_size(st); /* windows are in the kernel's storage */
    uint64_t x_image = (uint64_t)shape_numel(x->dims + 1, x->rank - 1) * elem, y_image = (uint64_t)(count / g->batch) * elem;
    uint64_t image_bytes[2] = {x_image, y_image};
    int64_t chunk = op_batch_chunk(c, g->batch, image_bytes, 2);
    if (chunk <= 0)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "windows of whole images of X (%llu bytes each) and Y (%llu bytes each) "
                        "cannot both fit the device's maxStorageBufferRange (%llu bytes) and start at multiples of %llu "
                        "bytes; convolutions split their work only along the batch", (unsigned long long)x_image,
                        (unsigned long long)y_image, (unsigned long long)op_max_binding_bytes(c),
                        (unsigned long long)op_binding_alignment(c));
    uint64_t oh = g->nsp == 2 ? (uint64_t)g->out[0] : 1, ow = (uint64_t)g->out[g->nsp - 1];
    uint64_t kernel_hw = (g->nsp == 2 ? (uint64_t)g->kernel[0] : 1) * (uint64_t)g->kernel[g->nsp - 1];
    gemm_choice gemm = choose_gemm(c, g, chunk, oh, ow, kernel_hw);
    fused_act act = {false, -INFINITY, INFINITY};
    act.on = op_fuse_activation(c, 0, &act.lo, &act.hi);
    int partial = -1;
    bool cpu = fast_paths(c, g, transposed) && cpu_device(c) && cpu_grid_fits(c, g, chunk);
    bool gemm_path = fast_paths(c, g, transposed) && g->cin != g->groups && gemm.usable && !cpu;
    if (gemm_path && gemm.splits > 1) VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, chunk * (count / g->batch) * (int64_t)gemm.splits, &partial));
    int cpu_packed = -1;
    if (cpu && g->cin != g->groups) {
        cpu_packed = pack_cpu_weights(c, g, choose_cpu_tiling(c, g).ocb, st);
        if (cpu_packed == -2) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory repacking W");
    }
    if (chunk == g->batch) return record_images(c, g, transposed, g->batch, NULL, &gemm, partial, cpu, cpu_packed, &act, st);
    for (int64_t start = 0; start < g->batch; start += chunk) {
        int64_t n = g->batch - start < chunk ? g->batch - start : chunk;
        op_window win[4] = {{(uint64_t)start * x_image, (uint64_t)n * x_image}, {0, 0}, {0, 0},
                            {(uint64_t)start * y_image, (uint64_t)n * y_image}};
        VKI_TRY(record_images(c, g, transposed, n, win, &gemm, partial, cpu, cpu_packed, &act, st));
    }
    return VKI_OK;
}

static vki_status plan_conv(op_ctx *c)
{
    conv_geom g;
    memset(&g, 0, sizeof g);
    VKI_TRY(check_inputs(c, &g));
    plan_value *w = op_in(c, 1);
    g.cout = w->dims[0];
    if (w->dims[1] * g.groups != g.cin)
        return op_error(c, VKI_ERROR_SHAPE, "W has %lld input channels per group; X's %lld channels in %lld groups need %lld",
                        (long long)w->dims[1], (long long)g.cin, (long long)g.groups, (long long)(g.cin / g.groups));
    if (g.cout % g.groups)
        return op_error(c, VKI_ERROR_SHAPE, "group %lld does not divide the %lld output channels", (long long)g.groups, (long long)g.cout);
    VKI_TRY(check_bias(c, g.cout));
    const char *auto_pad;
    VKI_TRY(read_auto_pad(c, &auto_pad));
    int64_t pads[6];
    VKI_TRY(op_attr_ints_n(c, "pads", 2 * g.nsp, 0, 0, INT64_MAX, pads));
    for (int d = 0; d < g.nsp; d++) {
        int64_t span = (g.kernel[d] - 1) * g.dil[d] + 1;
        if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
            g.out[d] = (g.in[d] + g.stride[d] - 1) / g.stride[d];
            int64_t total = (g.out[d] - 1) * g.stride[d] + span - g.in[d];
            if (total < 0) total = 0;
            g.pad_begin[d] = !strcmp(auto_pad, "SAME_UPPER") ? total / 2 : total - total / 2;
        } else {
            int64_t pb = 0, pe = 0;
            if (!strcmp(auto_pad, "NOTSET")) pb = pads[d], pe = pads[g.nsp + d];
            g.pad_begin[d] = pb;
            g.out[d] = floor_div(g.in[d] + pb + pe - span, g.stride[d]) + 1;
        }
        if (g.out[d] < 1 && g.in[d] > 0)
            return op_error(c, VKI_ERROR_SHAPE, "the kernel (span %lld) does not fit spatial dim %d of size %lld with its padding",
                            (long long)span, d, (long long)g.in[d]);
        if (g.out[d] < 0) g.out[d] = 0;
    }
    return record(c, &g, false);
}

static vki_status plan_conv_transpose(op_ctx *c)
{
    conv_geom g;
    memset(&g, 0, sizeof g);
    VKI_TRY(check_inputs(c, &g));
    plan_value *w = op_in(c, 1);
    if (w->dims[0] != g.cin)
        return op_error(c, VKI_ERROR_SHAPE, "W's first dim (%lld) must be X's channel count (%lld)", (long long)w->dims[0], (long long)g.cin);
    g.cout = w->dims[1] * g.groups;
    VKI_TRY(check_bias(c, g.cout));
    const char *auto_pad;
    VKI_TRY(read_auto_pad(c, &auto_pad));
    int64_t pads[6], out_pad[3];
    VKI_TRY(op_attr_ints_n(c, "pads", 2 * g.nsp, 0, 0, INT64_MAX, pads));
    VKI_TRY(op_attr_ints_n(c, "output_padding", g.nsp, 0, 0, INT64_MAX, out_pad));
    const int64_t *out_shape;
    int n_out_shape = ir_attr_ints(c->node, "output_shape", &out_shape);
    if (n_out_shape >= 0 && n_out_shape != g.nsp && n_out_shape != g.nsp + 2)
        return op_error(c, VKI_ERROR_MODEL, "output_shape has %d values; expected %d spatial dims", n_out_shape, g.nsp);
    bool same = !strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER");
    for (int d = 0; d < g.nsp; d++) {
        int64_t span = (g.kernel[d] - 1) * g.dil[d] + 1;
        int64_t full = g.stride[d] * (g.in[d] - 1) + out_pad[d] + span; /* output size without padding */
        if (n_out_shape >= 0 || same) {
            /* the pads follow from the wanted size; negative ones extend the output with zeros */
            g.out[d] = n_out_shape >= 0 ? out_shape[n_out_shape - g.nsp + d] : g.in[d] * g.stride[d];
            int64_t total = full - g.out[d];
            g.pad_begin[d] = !strcmp(auto_pad, "SAME_UPPER") ? floor_div(total, 2) : total - floor_div(total, 2);
        } else {
            int64_t pb = 0, pe = 0;
            if (!strcmp(auto_pad, "NOTSET")) pb = pads[d], pe = pads[g.nsp + d];
            g.pad_begin[d] = pb;
            g.out[d] = full - pb - pe;
        }
        if (g.out[d] < 0)
            return op_error(c, VKI_ERROR_SHAPE, "output spatial dim %d would be %lld", d, (long long)g.out[d]);
    }
    return record(c, &g, true);
}

const op_def op_Conv = {"Conv", "", "float32 float16 bfloat16", "", plan_conv};
const op_def op_ConvTranspose = {"ConvTranspose", "", "float32 float16 bfloat16", "", plan_conv_transpose};
