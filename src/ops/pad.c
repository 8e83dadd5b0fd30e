/* Pad (constant, reflect, edge and wrap modes; shaders/pad.comp), CenterCropPad (a Pad) and Trilu
 * (shaders/trilu.comp): element-wise maps from output positions to input ones. */
#include "movement.h"

#include <string.h>

enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP }; /* keep in step with shaders/pad.comp */

static int64_t pad_map_inside(enum pad_mode mode, int64_t c, int64_t n)
{
    if (mode == PAD_EDGE) return c < 0 ? 0 : c >= n ? n - 1 : c;
    if (mode == PAD_WRAP) return ((c % n) + n) % n;
    if (n == 1) return 0;
    int64_t period = 2 * (n - 1);
    c = ((c % period) + period) % period;
    return c < n ? c : period - c;
}

static vki_status pad_record(op_ctx *c, const int64_t *begin, const int64_t *end, enum pad_mode mode, const char *mode_name,
                             double value);

static vki_status plan_pad(op_ctx *c)
{
    plan_value *x = op_in(c, 0);
    int r = x->rank;
    int64_t pads[2 * VKI_MAX_RANK], axes[VKI_MAX_RANK];
    int n_pads, n_axes = r;
    double value = 0;
    if (c->opset < 11) {
        VKI_TRY(op_require_inputs(c, 1, 1));
        const int64_t *v;
        n_pads = ir_attr_ints(c->node, c->opset < 2 ? "paddings" : "pads", &v);
        if (n_pads < 0 || n_pads > 2 * VKI_MAX_RANK) return op_error(c, VKI_ERROR_MODEL, "needs the 'pads' attribute");
        memcpy(pads, v, (size_t)n_pads * sizeof *v);
        value = ir_attr_float(c->node, "value", 0.0f);
    } else {
        VKI_TRY(op_require_inputs(c, 2, 4));
        VKI_TRY(op_const_ints(c, 1, pads, 2 * VKI_MAX_RANK, &n_pads));
        if (op_has_input(c, 2) && op_input_is_const(c, 2)) {
            int n;
            double v[1];
            VKI_TRY(op_const_floats(c, 2, v, 1, &n));
            if (n == 1) value = v[0];
        }
        if (op_has_input(c, 2) && shape_numel(op_in(c, 2)->dims, op_in(c, 2)->rank) > 1)
            return op_error(c, VKI_ERROR_MODEL, "constant_value must be a scalar");
        if (op_has_input(c, 3)) VKI_TRY(op_const_ints(c, 3, axes, VKI_MAX_RANK, &n_axes));
    }
    if (!op_has_input(c, 3))
        for (int k = 0; k < r; k++) axes[k] = k;
    if (n_pads != 2 * n_axes) return op_error(c, VKI_ERROR_MODEL, "pads has %d entries; %d expected", n_pads, 2 * n_axes);
    const char *mode_name = ir_attr_string(c->node, "mode", "constant");
    enum pad_mode mode = !strcmp(mode_name, "constant") ? PAD_CONSTANT : !strcmp(mode_name, "reflect") ? PAD_REFLECT
                       : !strcmp(mode_name, "edge") ? PAD_EDGE : !strcmp(mode_name, "wrap") ? PAD_WRAP : (enum pad_mode)-1;
    if ((int)mode < 0) return op_error(c, VKI_ERROR_UNSUPPORTED, "mode '%s' is not supported (constant, reflect, edge, wrap)", mode_name);
    int64_t begin[VKI_MAX_RANK] = {0}, end[VKI_MAX_RANK] = {0};
    for (int i = 0; i < n_axes; i++) {
        int a;
        VKI_TRY(op_axis(c, axes[i], r, &a));
        begin[a] = pads[i];
        end[a] = pads[i + n_axes];
    }
    return pad_record(c, begin, end, mode, mode_name, value);
}

/* Pads (or, where negative, crops) input 0 by begin[k] and end[k] along each dim k: on the host
 * when the input is a constant, else by shaders/pad.comp. */
static vki_status pad_record(op_ctx *c, const int64_t *begin, const int64_t *end, enum pad_mode mode, const char *mode_name,
                             double value)
{
    plan_value *x = op_in(c, 0);
    int r = x->rank;
    int64_t dims[VKI_MAX_RANK];
    for (int k = 0; k < r; k++) {
        dims[k] = x->dims[k] + begin[k] + end[k];
        if (dims[k] < 0) return op_error(c, VKI_ERROR_SHAPE, "pads remove more than dimension %d holds", k);
        if (mode != PAD_CONSTANT && x->dims[k] == 0 && dims[k] > 0)
            return op_error(c, VKI_ERROR_SHAPE, "%s padding of an empty dimension", mode_name);
    }
    VKI_TRY(op_set_output(c, 0, x->dtype, r, dims));
    int64_t count = shape_numel(dims, r);
    if (movement_folds(c)) {
        size_t elem = vki_dtype_size(x->dtype);
        char *out = op_output_host(c, 0);
        for (int64_t i = 0; i < count; i++) {
            int64_t rest = i, src = 0, stride = 1;
            bool outside = false;
            for (int k = r - 1; k >= 0; k--) {
                int64_t o = rest % dims[k], n = x->dims[k], p = o - begin[k];
                rest /= dims[k];
                if (p < 0 || p >= n) {
                    if (mode == PAD_CONSTANT) outside = true;
                    else p = pad_map_inside(mode, p, n);
                }
                src += p * stride;
                stride *= n;
            }
            if (outside) host_write_f64(x->dtype, out, (size_t)i, value);
            else memcpy(out + i * (int64_t)elem, (const char *)x->host + src * (int64_t)elem, elem);
        }
        return VKI_OK;
    }
    if (count == 0) return VKI_OK;
    VKI_TRY(op_require_gpu_dtype(c, 0));
    if (count > INT32_MAX || shape_numel(x->dims, r) > INT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    /* the constant in the dtype's 32-bit GPU form */
    uint64_t host_value = 0;
    uint32_t bits = 0;
    size_t bad;
    host_write_f64(x->dtype, &host_value, 0, value);
    if (!convert_to_gpu(x->dtype, &host_value, &bits, 1, &bad))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "the pad value does not fit in int32");
    /* a constant_value known only at run time is read by the shader from its own binding */
    bool value_from_buffer = mode == PAD_CONSTANT && op_has_input(c, 2) && !op_input_is_const(c, 2) &&
                             shape_numel(op_in(c, 2)->dims, op_in(c, 2)->rank) == 1;
    if (value_from_buffer && op_in(c, 2)->dtype != x->dtype) return op_error(c, VKI_ERROR_MODEL, "constant_value has another dtype than the data");
    struct {
        uint32_t count, value, value_from_buffer, unused;
        int32_t out_dims[8], in_dims[8], pads_begin[8];
    } push = {(uint32_t)count, bits, value_from_buffer, 0, {0}, {0}, {0}};
    for (int k = 0; k < r; k++) {
        push.out_dims[k] = (int32_t)dims[k];
        push.in_dims[k] = (int32_t)x->dims[k];
        push.pads_begin[k] = (int32_t)begin[k];
    }
    uint32_t spec[3] = {128, (uint32_t)(r ? r : 1), mode}, gx, gy;
    if (!r) push.out_dims[0] = push.in_dims[0] = 1;
    int values[3] = {op_in_index(c, 0), value_from_buffer ? op_in_index(c, 2) : op_in_index(c, 0), op_out_index(c, 0)};
    uint64_t range = op_max_binding_bytes(c);
    int64_t in_count = shape_numel(x->dims, r);
    if (((uint64_t)in_count * 4 <= range && (uint64_t)count * 4 <= range) || r < 2) {
        op_grid_1d((uint64_t)count, 128, &gx, &gy);
        return op_dispatch(c, "pad", spec, 3, &push, sizeof push, values, 3, gx, gy, 1);
    }
    /* larger than one binding: windows of whole slices along axis 0, where axis 0 is not padded
     * (the images of a batch, the channels of one) */
    if (begin[0] != 0 || dims[0] != x->dims[0])
        return op_error(c, VKI_ERROR_UNSUPPORTED, "X or Y is larger than the device's maxStorageBufferRange (%llu bytes) and "
                        "axis 0 is padded: Pad splits its work only along an unpadded axis 0", (unsigned long long)range);
    uint64_t in_row = (uint64_t)(in_count / x->dims[0]) * 4, out_row = (uint64_t)(count / dims[0]) * 4;
    uint64_t row_bytes[3] = {in_row, value_from_buffer ? 0 : in_row, out_row}; /* binding 1 repeats X without a value buffer */
    int64_t chunk = op_batch_chunk(c, dims[0], row_bytes, 3);
    if (chunk <= 0)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "one slice along axis 0 (%llu bytes) is larger than the device's "
                        "maxStorageBufferRange (%llu bytes); Pad splits its work only along axis 0",
                        (unsigned long long)(in_row > out_row ? in_row : out_row), (unsigned long long)range);
    for (int64_t start = 0; start < dims[0]; start += chunk) {
        int64_t n = dims[0] - start < chunk ? dims[0] - start : chunk;
        push.in_dims[0] = push.out_dims[0] = (int32_t)n;
        push.count = (uint32_t)(n * (int64_t)(out_row / 4));
        op_window win[3] = {{(uint64_t)start * in_row, (uint64_t)n * in_row},
                            {(uint64_t)start * row_bytes[1], (uint64_t)n * row_bytes[1]},
                            {(uint64_t)start * out_row, (uint64_t)n * out_row}};
        op_grid_1d(push.count, 128, &gx, &gy);
        VKI_TRY(op_dispatch_windowed(c, "pad", spec, 3, &push, sizeof push, values, win, 3, gx, gy, 1));
    }
    return VKI_OK;
}

/* CenterCropPad: each axis cropped or zero-padded to its target about its centre (a crop
 * drops floor(excess / 2) at the start, a pad adds floor(missing / 2) there): a Pad with
 * those (possibly negative) amounts. */
static vki_status plan_center_crop_pad(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    plan_value *x = op_in(c, 0);
    int r = x->rank, n_shape, n_axes = r;
    int64_t shape[VKI_MAX_RANK], axes[VKI_MAX_RANK];
    const int64_t *attr;
    if (shape_numel(op_in(c, 1)->dims, op_in(c, 1)->rank) > VKI_MAX_RANK)
        return op_error(c, VKI_ERROR_SHAPE, "shape has more entries than the input has dims");
    VKI_TRY(op_const_ints(c, 1, shape, VKI_MAX_RANK, &n_shape));
    int n_attr = ir_attr_ints(c->node, "axes", &attr);
    if (n_attr > VKI_MAX_RANK) return op_error(c, VKI_ERROR_MODEL, "axes has %d entries for rank %d", n_attr, r);
    if (n_attr >= 0) {
        n_axes = n_attr;
        memcpy(axes, attr, (size_t)n_attr * sizeof *attr);
    } else {
        for (int k = 0; k < r; k++) axes[k] = k;
    }
    if (n_shape != n_axes) return op_error(c, VKI_ERROR_MODEL, "shape has %d entries for %d axes", n_shape, n_axes);
    int64_t begin[VKI_MAX_RANK] = {0}, end[VKI_MAX_RANK] = {0};
    bool seen[VKI_MAX_RANK] = {false};
    for (int i = 0; i < n_axes; i++) {
        int a;
        VKI_TRY(op_axis(c, axes[i], r, &a));
        if (seen[a]) return op_error(c, VKI_ERROR_MODEL, "axis %d is given twice", a);
        seen[a] = true;
        if (shape[i] < 0) return op_error(c, VKI_ERROR_MODEL, "shape[%d] is %lld", i, (long long)shape[i]);
        int64_t have = x->dims[a], want = shape[i];
        begin[a] = have > want ? -((have - want) / 2) : (want - have) / 2;
        end[a] = want - have - begin[a];
    }
    return pad_record(c, begin, end, PAD_CONSTANT, "constant", 0);
}

static vki_status plan_trilu(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 2));
    plan_value *x = op_in(c, 0);
    if (x->rank < 2) return op_error(c, VKI_ERROR_SHAPE, "the input must have rank >= 2");
    int64_t k = 0;
    int n;
    bool k_from_buffer = op_has_input(c, 1) && !op_input_is_const(c, 1); /* read by the shader */
    if (op_has_input(c, 1)) {
        plan_value *kv = op_in(c, 1);
        if (shape_numel(kv->dims, kv->rank) != 1 || !dtype_is_int(kv->dtype) || kv->dtype == VKI_DTYPE_BOOL)
            return op_error(c, VKI_ERROR_MODEL, "k must be one integer");
        if (!k_from_buffer) VKI_TRY(op_const_ints(c, 1, &k, 1, &n));
    }
    bool upper = ir_attr_int(c->node, "upper", 1) != 0;
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1], count = shape_numel(x->dims, x->rank);
    if (movement_folds(c)) {
        size_t elem = vki_dtype_size(x->dtype);
        char *out = op_output_host(c, 0); /* zeroed */
        for (int64_t i = 0; i < count; i++) {
            int64_t col = i % cols, row = i / cols % rows;
            if (upper ? col - row >= k : col - row <= k)
                memcpy(out + i * (int64_t)elem, (const char *)x->host + i * (int64_t)elem, elem);
        }
        return VKI_OK;
    }
    if (count == 0) return VKI_OK;
    VKI_TRY(op_require_gpu_dtype(c, 0));
    if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    if (k > INT32_MAX) k = INT32_MAX;
    if (k < -INT32_MAX) k = -INT32_MAX;
    struct { uint32_t count, rows, cols; int32_t k; uint32_t k_from_buffer; } push = {
        (uint32_t)count, (uint32_t)rows, (uint32_t)cols, (int32_t)k, k_from_buffer};
    uint32_t spec[2] = {128, upper}, gx, gy;
    int values[3] = {op_in_index(c, 0), k_from_buffer ? op_in_index(c, 1) : op_in_index(c, 0), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    return op_dispatch(c, "trilu", spec, 2, &push, sizeof push, values, 3, gx, gy, 1);
}

#define ALL_DTYPES OP_DTYPES_ALL
const op_def op_Pad = {"Pad", "", ALL_DTYPES, "pads, constant_value and axes must be plan-time constants", plan_pad};
const op_def op_CenterCropPad = {"CenterCropPad", "", ALL_DTYPES, "shape must be a plan-time constant", plan_center_crop_pad};
const op_def op_Trilu = {"Trilu", "", ALL_DTYPES, "k must be a plan-time constant", plan_trilu};
