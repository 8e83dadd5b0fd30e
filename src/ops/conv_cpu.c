/* Conv on CPU Vulkan devices (lavapipe): register-blocked conv2d_cpu* kernels without shared
 * memory, over weights repacked at plan time (conv2d_cpu_packed, conv2d_cpu_1x1), W as it is
 * (conv2d_cpu), and depthwise kernels along a row's columns (conv2d_cpu_depthwise, _tx) or
 * along adjacent output planes (conv2d_cpu_dw_planes). 1-D and 2-D; conv.c chooses them. */
#include "conv.h"

#include <string.h>

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
bool conv_cpu_grid_fits(const op_ctx *c, const conv_geom *g, int64_t batch)
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
int conv_cpu_pack_weights(op_ctx *c, const conv_geom *g, gpu_storage st)
{
    uint32_t ocb = choose_cpu_tiling(c, g).ocb;
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
    const conv2d_view v = conv_view_2d(g);
    const vki_options *o = &c->vk->opts;
    dw_planes_tiling t = {8, v.ow > 8 ? 16 : v.ow > 4 ? 8 : 4, (uint32_t)o->cpu_dw_rb};
    if (o->cpu_dw_pxb != OPT_AUTO) t.pxb = (uint32_t)o->cpu_dw_pxb;
    return t;
}

/* The kernel's grid: planes along x (LX a workgroup), column blocks times row chunks along y. */
static bool cpu_dw_planes_fits(op_ctx *c, const conv_geom *g, int64_t batch, const op_window *win)
{
    const conv2d_view v = conv_view_2d(g);
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
    const conv2d_view v = conv_view_2d(g);
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

vki_status conv_cpu_record(op_ctx *c, const conv_geom *g, int64_t batch, const op_window *win, const int *values,
                             int packed, const fused_act *act, gpu_storage st)
{
    const gpu_storage stores[4] = {st, st, st, st};
    int64_t cin_g = g->cin / g->groups, cout_g = g->cout / g->groups;
    const conv2d_view v = conv_view_2d(g);
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
