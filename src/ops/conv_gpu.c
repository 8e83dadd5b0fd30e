/* Conv on GPUs: an implicit GEMM for 1-D and 2-D convolutions with groups of several input
 * channels (split over K when a layer has too few tiles, then summed by conv_splitk_reduce),
 * and a depthwise kernel where each group has one input channel. conv.c chooses them. */
#include "conv.h"
#include "matmul.h"

#include <string.h>

gemm_choice conv_gemm_choose(op_ctx *c, const conv_geom *g, int64_t batch, uint64_t oh, uint64_t ow, uint64_t kernel_hw)
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

/* Y's elements for `batch` images */
static int64_t output_count(const conv_geom *g, int64_t batch)
{
    int64_t count = batch * g->cout;
    for (int d = 0; d < g->nsp; d++) count *= g->out[d];
    return count;
}

vki_status conv_gpu_record_depthwise(op_ctx *c, const conv_geom *g, int64_t batch, const op_window *win, int *values,
                                     const fused_act *act, gpu_storage st)
{
    gpu_storage stores[4] = {st, st, st, st};
    int64_t count = output_count(g, batch), cout_g = g->cout / g->groups;
    bool has_bias = op_has_input(c, 2);
    uint32_t dt = op_dtype_code(op_in(c, 0)->dtype), gx, gy;
    const conv2d_view v = conv_view_2d(g);
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

vki_status conv_gpu_record_gemm(op_ctx *c, const conv_geom *g, int64_t batch, const op_window *win, int *values,
                                const gemm_choice *gemm, int partial, const fused_act *act, gpu_storage st)
{
    gpu_storage stores[4] = {st, st, st, st};
    int64_t count = output_count(g, batch), cin_g = g->cin / g->groups, cout_g = g->cout / g->groups;
    bool has_bias = op_has_input(c, 2);
    uint32_t dt = op_dtype_code(op_in(c, 0)->dtype), gx, gy;
    const conv2d_view v = conv_view_2d(g);
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
