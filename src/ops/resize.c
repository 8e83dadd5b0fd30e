/* Resize (opsets 10-19) and Upsample (7-9): separable N-d interpolation, nearest, linear and
 * cubic. The host turns each resized axis into a table of taps (source index, weight) per
 * output coordinate, computed as the ONNX reference does; the GPU applies one axis per
 * dispatch (shaders/resize_axis.comp). Small constant inputs are folded on the host. */
#include "op.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FOLD_MAX_ELEMENTS 4096
#define MAX_TAPS 1024 /* antialiased downscaling by more than ~1/500 would need more */

enum resize_mode { MODE_NEAREST, MODE_LINEAR, MODE_CUBIC };
enum coord_mode {
    COORD_HALF_PIXEL, COORD_PYTORCH_HALF_PIXEL, COORD_ALIGN_CORNERS, COORD_ASYMMETRIC,
    COORD_TF_HALF_PIXEL_FOR_NN, COORD_TF_CROP_AND_RESIZE, COORD_HALF_PIXEL_SYMMETRIC,
};
enum nearest_mode { NEAREST_ROUND_PREFER_FLOOR, NEAREST_ROUND_PREFER_CEIL, NEAREST_FLOOR, NEAREST_CEIL };

typedef struct resize_params {
    enum resize_mode mode;
    enum coord_mode coord;
    enum nearest_mode nearest;
    double cubic_a;
    bool exclude_outside, antialias;
    float extrapolation;
} resize_params;

/* The taps of one axis: n_taps (index, weight) per output coordinate. */
typedef struct axis_taps {
    int n_taps;
    int32_t *index; /* [out_len * n_taps]; index[j * n_taps] == -1: extrapolate */
    float *weight;
} axis_taps;

static int find_name(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

static vki_status read_params(op_ctx *c, resize_params *p)
{
    const ir_node *n = c->node;
    bool upsample = !strcmp(n->op_type, "Upsample");
    memset(p, 0, sizeof *p);
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    const char *mode = ir_attr_string(n, "mode", "nearest");
    int m = find_name(mode, modes, 3);
    if (m < 0 && upsample && !strcmp(mode, "bilinear")) m = MODE_LINEAR;
    if (m < 0 || (m == MODE_CUBIC && (upsample || c->opset < 11)))
        return op_error(c, VKI_ERROR_MODEL, "mode '%s' is not valid here (nearest, linear%s)", mode,
                        upsample || c->opset < 11 ? "" : ", cubic");
    p->mode = (enum resize_mode)m;
    /* Upsample and Resize-10 map coordinates as x / scale and take the floor for nearest,
     * which is what np.repeat and PyTorch's nearest do */
    p->coord = COORD_ASYMMETRIC;
    p->nearest = NEAREST_FLOOR;
    p->cubic_a = -0.75;
    if (upsample || c->opset < 11) return VKI_OK;

    static const char *const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                         "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"};
    const char *coord = ir_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    int k = find_name(coord, coords, 7);
    if (k < 0) return op_error(c, VKI_ERROR_MODEL, "unknown coordinate_transformation_mode '%s'", coord);
    p->coord = (enum coord_mode)k;
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *nearest = ir_attr_string(n, "nearest_mode", "round_prefer_floor");
    k = find_name(nearest, nearests, 4);
    if (k < 0) return op_error(c, VKI_ERROR_MODEL, "unknown nearest_mode '%s'", nearest);
    p->nearest = (enum nearest_mode)k;
    p->cubic_a = ir_attr_float(n, "cubic_coeff_a", -0.75f);
    p->exclude_outside = ir_attr_int(n, "exclude_outside", 0) != 0;
    p->extrapolation = ir_attr_float(n, "extrapolation_value", 0.0f);
    p->antialias = ir_attr_int(n, "antialias", 0) != 0 && p->mode != MODE_NEAREST;
    return VKI_OK;
}

static double cubic_weight(double x, double a)
{
    x = fabs(x);
    if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0;
}

/* Source coordinate of output coordinate x; false: outside the crop box (extrapolate). */
static bool source_coord(const resize_params *p, int64_t x, int64_t in_len, int64_t out_len, double scale,
                         double roi_start, double roi_end, double *x_ori)
{
    *x_ori = 0;
    double out_w = scale * (double)in_len; /* the reference uses scale * length, not out_len */
    switch (p->coord) {
    case COORD_ALIGN_CORNERS: *x_ori = out_w == 1 ? 0 : (double)x * (double)(in_len - 1) / (out_w - 1); break;
    case COORD_ASYMMETRIC: *x_ori = (double)x / scale; break;
    case COORD_TF_HALF_PIXEL_FOR_NN: *x_ori = ((double)x + 0.5) / scale; break;
    case COORD_PYTORCH_HALF_PIXEL: *x_ori = out_w == 1 ? -0.5 : ((double)x + 0.5) / scale - 0.5; break;
    case COORD_HALF_PIXEL: *x_ori = ((double)x + 0.5) / scale - 0.5; break;
    case COORD_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)out_len / out_w, center = (double)in_len / 2;
        *x_ori = center * (1 - adjustment) + ((double)x + 0.5) / scale - 0.5;
        break;
    }
    case COORD_TF_CROP_AND_RESIZE:
        *x_ori = out_w == 1 ? (roi_end - roi_start) * (double)(in_len - 1) / 2
                            : (double)x * (roi_end - roi_start) * (double)(in_len - 1) / (out_w - 1);
        *x_ori += roi_start * (double)(in_len - 1);
        return *x_ori >= 0 && *x_ori <= (double)(in_len - 1);
    }
    return true;
}

/* Taps for one output coordinate: n weights over source indices first .. first + n - 1
 * (before clamping), following the reference's choice of neighbours (ratio in (0, 1]). */
static int coord_taps(const resize_params *p, double x_ori, double scale, double *w, int64_t *first)
{
    double base = floor(x_ori), ratio = x_ori - base;
    if (ratio == 0) { /* an integer coordinate counts as ratio 1 from the left neighbour */
        ratio = 1;
        base -= 1;
    }
    int n;
    if (p->mode == MODE_NEAREST) {
        bool right;
        if (ratio == 1) right = true;
        else if (p->nearest == NEAREST_ROUND_PREFER_FLOOR) right = ratio > 0.5;
        else if (p->nearest == NEAREST_ROUND_PREFER_CEIL) right = ratio >= 0.5;
        else right = p->nearest == NEAREST_CEIL;
        w[0] = 1;
        *first = (int64_t)base + right;
        return 1;
    }
    double s = p->antialias && scale < 1 ? scale : 1; /* antialias widens the filter by 1/scale */
    int start = p->mode == MODE_LINEAR ? (int)floor(-1 / s) + 1 : (int)floor(-2 / s) + 1;
    n = 2 - 2 * start;
    if (n > MAX_TAPS) return -1;
    double sum = 0;
    for (int t = 0; t < n; t++) {
        double d = ((double)(start + t) - ratio) * s;
        w[t] = p->mode == MODE_LINEAR ? fmax(0, 1 - fabs(d)) : cubic_weight(d, p->cubic_a);
        sum += w[t];
    }
    if (p->antialias)
        for (int t = 0; t < n; t++) w[t] /= sum;
    *first = (int64_t)base + start;
    return n;
}

static int axis_tap_count(const resize_params *p, double scale)
{
    if (p->mode == MODE_NEAREST) return 1;
    double s = p->antialias && scale < 1 ? scale : 1;
    int start = p->mode == MODE_LINEAR ? (int)floor(-1 / s) + 1 : (int)floor(-2 / s) + 1;
    return 2 - 2 * start;
}

/* Fills the taps of one axis (malloc'd; the caller frees a->index). *identity: the axis maps
 * every j to j with weight 1, so it needs no pass. */
static vki_status build_axis(op_ctx *c, const resize_params *p, int64_t in_len, int64_t out_len, double scale,
                             double roi_start, double roi_end, axis_taps *a, bool *identity)
{
    int n = axis_tap_count(p, scale);
    if (n > MAX_TAPS)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "antialiased downscaling by %g needs %d taps; at most %d are supported",
                        scale, n, MAX_TAPS);
    a->n_taps = n;
    a->index = malloc((size_t)(out_len * n) * (sizeof *a->index + sizeof *a->weight));
    if (!a->index) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory for resize taps");
    a->weight = (float *)(a->index + out_len * n);
    *identity = in_len == out_len;
    double w[MAX_TAPS];
    for (int64_t j = 0; j < out_len; j++) {
        int32_t *idx = a->index + j * n;
        float *wt = a->weight + j * n;
        double x_ori = 0;
        if (!source_coord(p, j, in_len, out_len, scale, roi_start, roi_end, &x_ori)) {
            for (int t = 0; t < n; t++) {
                idx[t] = t ? 0 : -1;
                wt[t] = 0;
            }
            *identity = false;
            continue;
        }
        int64_t first = 0;
        coord_taps(p, x_ori, scale, w, &first);
        if (p->exclude_outside) {
            double sum = 0;
            for (int t = 0; t < n; t++) {
                int64_t k = first + t;
                if (k < 0 || k >= in_len) w[t] = 0;
                sum += w[t];
            }
            for (int t = 0; t < n; t++) w[t] = sum != 0 ? w[t] / sum : 0;
        }
        double at_j = 0, elsewhere = 0;
        for (int t = 0; t < n; t++) {
            int64_t k = first + t;
            k = k < 0 ? 0 : k >= in_len ? in_len - 1 : k; /* edge padding */
            idx[t] = (int32_t)k;
            wt[t] = (float)w[t];
            if (k == j) at_j += w[t];
            else elsewhere += fabs(w[t]);
        }
        if (at_j != 1 || elsewhere != 0) *identity = false;
    }
    return VKI_OK;
}

/* Output sizes and per-axis scales from the scales or sizes inputs (or Upsample's). */
static vki_status output_shape(op_ctx *c, const resize_params *p, const plan_value *x, int64_t *out_dims, double *scales, double *roi)
{
    int rank = x->rank;
    bool upsample = !strcmp(c->node->op_type, "Upsample");
    for (int d = 0; d < rank; d++) {
        out_dims[d] = x->dims[d];
        scales[d] = 1;
        roi[d] = 0;
        roi[rank + d] = 1;
    }
    int axes[VKI_MAX_RANK], n_axes = rank;
    for (int d = 0; d < rank; d++) axes[d] = d;
    const int64_t *axes_attr;
    int n_attr = ir_attr_ints(c->node, "axes", &axes_attr);
    if (n_attr >= 0 && !upsample && c->opset >= 18) {
        if (n_attr > rank) return op_error(c, VKI_ERROR_MODEL, "axes has %d entries for rank %d", n_attr, rank);
        n_axes = n_attr;
        for (int k = 0; k < n_axes; k++) VKI_TRY(op_axis(c, axes_attr[k], rank, &axes[k]));
    }
    double given[VKI_MAX_RANK];
    int n_given = -1;
    int scales_input = upsample || c->opset < 11 ? 1 : 2;
    if (upsample && c->opset < 9) {
        const ir_attr *a = ir_find_attr(c->node, "scales");
        if (!a || a->type != ATTR_FLOATS) return op_error(c, VKI_ERROR_MODEL, "Upsample-7 needs the 'scales' attribute");
        if (a->count > VKI_MAX_RANK) return op_error(c, VKI_ERROR_MODEL, "scales has %d entries for rank %d", a->count, rank);
        n_given = a->count;
        for (int k = 0; k < n_given; k++) given[k] = a->floats[k];
    } else if (op_has_input(c, scales_input) && shape_numel(op_in(c, scales_input)->dims, op_in(c, scales_input)->rank) > 0) {
        VKI_TRY(op_const_floats(c, scales_input, given, VKI_MAX_RANK, &n_given));
    }
    if (!upsample && c->opset >= 11 && p->coord == COORD_TF_CROP_AND_RESIZE && op_has_input(c, 1) &&
        shape_numel(op_in(c, 1)->dims, op_in(c, 1)->rank) > 0) {
        double r[2 * VKI_MAX_RANK];
        int n_roi;
        VKI_TRY(op_const_floats(c, 1, r, 2 * VKI_MAX_RANK, &n_roi));
        if (n_roi != 2 * n_axes) return op_error(c, VKI_ERROR_MODEL, "roi has %d entries; %d expected", n_roi, 2 * n_axes);
        for (int k = 0; k < n_axes; k++) {
            roi[axes[k]] = r[k];
            roi[rank + axes[k]] = r[n_axes + k];
        }
    }
    if (n_given >= 0) {
        if (n_given != n_axes) return op_error(c, VKI_ERROR_MODEL, "scales has %d entries; %d expected", n_given, n_axes);
        for (int k = 0; k < n_axes; k++) {
            int d = axes[k];
            /* scales are float32: keep their exact value, as the reference computes with it */
            scales[d] = (double)(float)given[k];
            if (!(scales[d] > 0)) return op_error(c, VKI_ERROR_MODEL, "scale %g must be positive", scales[d]);
            out_dims[d] = (int64_t)floor((double)x->dims[d] * scales[d]);
        }
        return VKI_OK;
    }
    if (upsample || c->opset < 11 || !op_has_input(c, 3))
        return op_error(c, VKI_ERROR_MODEL, "needs either scales or sizes");
    int64_t sizes[VKI_MAX_RANK];
    int n_sizes;
    VKI_TRY(op_const_ints(c, 3, sizes, VKI_MAX_RANK, &n_sizes));
    if (n_sizes != n_axes) return op_error(c, VKI_ERROR_MODEL, "sizes has %d entries; %d expected", n_sizes, n_axes);
    const char *policy = c->opset >= 18 ? ir_attr_string(c->node, "keep_aspect_ratio_policy", "stretch") : "stretch";
    if (strcmp(policy, "stretch") && strcmp(policy, "not_larger") && strcmp(policy, "not_smaller"))
        return op_error(c, VKI_ERROR_MODEL, "unknown keep_aspect_ratio_policy '%s'", policy);
    double common = !strcmp(policy, "not_larger") ? INFINITY : 0;
    for (int k = 0; k < n_axes; k++) {
        int d = axes[k];
        if (sizes[k] < 0) return op_error(c, VKI_ERROR_MODEL, "sizes[%d] = %lld is negative", k, (long long)sizes[k]);
        if (x->dims[d] == 0) continue;
        double s = (double)sizes[k] / (double)x->dims[d];
        common = !strcmp(policy, "not_larger") ? fmin(common, s) : fmax(common, s);
        out_dims[d] = sizes[k];
        scales[d] = s;
    }
    if (strcmp(policy, "stretch"))
        for (int k = 0; k < n_axes; k++) {
            int d = axes[k];
            scales[d] = common;
            out_dims[d] = (int64_t)floor((double)x->dims[d] * common + 0.5);
        }
    return VKI_OK;
}

/* One axis on the host (constant folding), in double. */
static void apply_axis_host(const double *in, double *out, int64_t outer, int64_t in_len, int64_t out_len,
                            int64_t inner, const axis_taps *a, double extrapolation)
{
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < out_len; j++) {
            const int32_t *idx = a->index + j * a->n_taps;
            const float *w = a->weight + j * a->n_taps;
            for (int64_t k = 0; k < inner; k++) {
                double acc = 0;
                if (idx[0] < 0) acc = extrapolation;
                else
                    for (int t = 0; t < a->n_taps; t++) acc += w[t] * in[(o * in_len + idx[t]) * inner + k];
                out[(o * out_len + j) * inner + k] = acc;
            }
        }
}

static vki_status fold_on_host(op_ctx *c, const plan_value *x, const resize_params *p, const axis_taps *taps,
                               const int *order, int n_pass)
{
    plan_value *y = op_out(c, 0);
    int64_t dims[VKI_MAX_RANK], n = shape_numel(x->dims, x->rank);
    memcpy(dims, x->dims, sizeof dims);
    int64_t cap = n > shape_numel(y->dims, y->rank) ? n : shape_numel(y->dims, y->rank);
    for (int k = 0; k < n_pass; k++) { /* intermediates may be larger than both ends */
        dims[order[k]] = y->dims[order[k]];
        int64_t m = shape_numel(dims, x->rank);
        cap = m > cap ? m : cap;
    }
    memcpy(dims, x->dims, sizeof dims);
    double *a = malloc((size_t)cap * 2 * sizeof *a);
    if (!a) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    double *b = a + cap;
    for (int64_t i = 0; i < n; i++) a[i] = host_read_f64(x->dtype, x->host, (size_t)i);
    for (int k = 0; k < n_pass; k++) {
        int d = order[k];
        int64_t outer = shape_numel(dims, d), inner = shape_numel(dims + d + 1, x->rank - d - 1);
        apply_axis_host(a, b, outer, dims[d], y->dims[d], inner, &taps[d], p->extrapolation);
        dims[d] = y->dims[d];
        double *t = a;
        a = b;
        b = t;
    }
    void *out = op_output_host(c, 0);
    int64_t m = shape_numel(y->dims, y->rank);
    for (int64_t i = 0; i < m; i++) {
        if (dtype_is_float(y->dtype)) host_write_f64(y->dtype, out, (size_t)i, a[i]);
        else host_write_i64(y->dtype, out, (size_t)i, (int64_t)nearbyint(a[i]));
    }
    free(a < b ? a : b);
    return VKI_OK;
}

static vki_status record_passes(op_ctx *c, const plan_value *x, const resize_params *p, const axis_taps *taps,
                                const int *order, int n_pass)
{
    plan_value *y = op_out(c, 0);
    int64_t dims[VKI_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    int src = op_in_index(c, 0);
    vki_dtype src_dtype = x->dtype;
    /* between passes, interpolated values stay fp32 whatever the dtype; nearest copies bits */
    vki_dtype mid_dtype = p->mode == MODE_NEAREST ? x->dtype : VKI_DTYPE_FLOAT;
    uint64_t max_bytes = op_max_binding_bytes(c);
    for (int k = 0; k < n_pass; k++) {
        int d = order[k];
        const axis_taps *a = &taps[d];
        int64_t outer = shape_numel(dims, d), inner = shape_numel(dims + d + 1, x->rank - d - 1);
        int64_t in_count = shape_numel(dims, x->rank), count = outer * y->dims[d] * inner;
        if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
        /* larger than one binding: windows of whole rows of the axes before d (the images of a
         * batch, the channels of one), so this pass cannot be along axis 0 */
        bool windowed = (uint64_t)in_count * 4 > max_bytes || (uint64_t)count * 4 > max_bytes;
        uint64_t row_bytes[3] = {(uint64_t)(dims[d] * inner) * 4, 0, (uint64_t)(y->dims[d] * inner) * 4};
        int64_t chunk = windowed && outer > 1 ? op_batch_chunk(c, outer, row_bytes, 3) : outer;
        if (windowed && chunk <= 0)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "tensors larger than one storage binding (%llu bytes) whose pass along "
                            "axis %d cannot split into windows of the axes before it; Resize splits its work only there",
                            (unsigned long long)max_bytes, d);
        bool last = k == n_pass - 1;
        vki_dtype dst_dtype = last ? y->dtype : mid_dtype;
        int dst = op_out_index(c, 0);
        if (!last) VKI_TRY(op_temp(c, dst_dtype, count, &dst));
        int table;
        int64_t entries = y->dims[d] * a->n_taps;
        int32_t *t = op_temp_const(c, VKI_DTYPE_INT32, entries * 2, &table);
        if (!t) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        for (int64_t e = 0; e < entries; e++) {
            t[2 * e] = a->index[e];
            memcpy(&t[2 * e + 1], &a->weight[e], 4);
        }
        uint32_t spec[4] = {128, op_dtype_code(src_dtype), op_dtype_code(dst_dtype), p->mode == MODE_NEAREST};
        struct {
            uint32_t count, inner, out_len, in_len, n_taps;
            float extrapolation;
        } push = {(uint32_t)count, (uint32_t)inner, (uint32_t)y->dims[d], (uint32_t)dims[d], (uint32_t)a->n_taps,
                  p->extrapolation};
        int values[3] = {src, table, dst};
        uint32_t gx, gy;
        for (int64_t start = 0; start < outer; start += chunk) {
            int64_t n = outer - start < chunk ? outer - start : chunk;
            push.count = (uint32_t)(n * y->dims[d] * inner);
            op_window win[3] = {{(uint64_t)start * row_bytes[0], (uint64_t)n * row_bytes[0]}, {0, 0},
                                {(uint64_t)start * row_bytes[2], (uint64_t)n * row_bytes[2]}};
            op_grid_1d(push.count, 128, &gx, &gy);
            VKI_TRY(op_dispatch_windowed(c, "resize_axis", spec, 4, &push, sizeof push, values, windowed ? win : NULL, 3, gx,
                                         gy, 1));
        }
        dims[d] = y->dims[d];
        src = dst;
        src_dtype = dst_dtype;
    }
    return VKI_OK;
}

static vki_status plan_resize(op_ctx *c)
{
    bool upsample = !strcmp(c->node->op_type, "Upsample");
    int min_in = upsample ? (c->opset < 9 ? 1 : 2) : c->opset < 11 ? 2 : 1;
    int max_in = upsample ? min_in : c->opset < 11 ? 2 : 4;
    VKI_TRY(op_require_inputs(c, min_in, max_in));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0);
    if (x->rank < 1) return op_error(c, VKI_ERROR_SHAPE, "input must have rank 1 or more");
    resize_params p;
    VKI_TRY(read_params(c, &p));
    if (x->dtype == VKI_DTYPE_BOOL && p.mode != MODE_NEAREST)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "bool tensors resize with mode 'nearest' only");
    int64_t out_dims[VKI_MAX_RANK];
    double scales[VKI_MAX_RANK], roi[2 * VKI_MAX_RANK];
    VKI_TRY(output_shape(c, &p, x, out_dims, scales, roi));
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, out_dims));
    plan_value *y = op_out(c, 0);
    if (shape_numel(out_dims, x->rank) == 0) {
        if (op_input_is_const(c, 0)) op_output_host(c, 0);
        return VKI_OK;
    }
    if (shape_numel(x->dims, x->rank) == 0)
        return op_error(c, VKI_ERROR_SHAPE, "cannot resize an empty tensor to a non-empty one");

    axis_taps taps[VKI_MAX_RANK] = {{0}};
    int order[VKI_MAX_RANK], n_pass = 0;
    vki_status st = VKI_OK;
    for (int d = 0; d < x->rank && st == VKI_OK; d++) {
        bool identity;
        st = build_axis(c, &p, x->dims[d], out_dims[d], scales[d], roi[d], roi[x->rank + d], &taps[d], &identity);
        if (st == VKI_OK && !identity) order[n_pass++] = d;
    }
    /* shrinking axes first keeps the intermediates small */
    for (int i = 1; i < n_pass; i++)
        for (int k = i; k > 0; k--) {
            int a = order[k - 1], b = order[k];
            if ((double)out_dims[b] / (double)x->dims[b] >= (double)out_dims[a] / (double)x->dims[a]) break;
            order[k - 1] = b;
            order[k] = a;
        }
    if (st == VKI_OK) {
        if (n_pass == 0) st = op_output_alias(c, 0, 0);
        else if (op_input_is_const(c, 0) && shape_numel(x->dims, x->rank) <= FOLD_MAX_ELEMENTS &&
                 shape_numel(y->dims, y->rank) <= FOLD_MAX_ELEMENTS)
            st = fold_on_host(c, x, &p, taps, order, n_pass);
        else st = record_passes(c, x, &p, taps, order, n_pass);
    }
    for (int d = 0; d < x->rank; d++) free(taps[d].index);
    return st;
}

const op_def op_Resize = {"Resize", "", "float32 float16 bfloat16 int8 int16 int32 int64 uint8 uint16 (bool: nearest)",
                          "scales, sizes and roi must be plan-time constants", plan_resize};
const op_def op_Upsample = {"Upsample", "", "float32 float16 bfloat16 int8 int16 int32 int64 uint8 uint16 (bool: nearest)",
                            "scales must be plan-time constants", plan_resize};
