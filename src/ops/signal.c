/* Signal ops. DFT and STFT run on the GPU (shaders/dft.comp: one invocation per output
 * frequency, a direct O(n) sum, exact twiddles at quarter turns). The window functions
 * (HannWindow, HammingWindow, BlackmanWindow) and MelWeightMatrix depend only on plan-time
 * scalars, so like Range they are computed on the host at plan time (in double, as ONNX's
 * reference) and uploaded as constants. */
#include "op.h"

#include <math.h>
#include <string.h>

/* Input i: one integer known at plan time. */
static vki_status const_scalar_int(op_ctx *c, int i, const char *what, int64_t *out)
{
    plan_value *v = op_in(c, i);
    if (shape_numel(v->dims, v->rank) != 1 || !dtype_is_int(v->dtype) || v->dtype == VKI_DTYPE_BOOL)
        return op_error(c, VKI_ERROR_MODEL, "%s (input %d) must be one integer", what, i);
    int n;
    return op_const_ints(c, i, out, 1, &n);
}

static vki_status const_scalar_float(op_ctx *c, int i, const char *what, double *out)
{
    plan_value *v = op_in(c, i);
    if (shape_numel(v->dims, v->rank) != 1) return op_error(c, VKI_ERROR_MODEL, "%s (input %d) must be a scalar", what, i);
    int n;
    return op_const_floats(c, i, out, 1, &n);
}

/* output_datatype: the dtypes vkinfer holds (float64 is not one of them). */
static vki_status output_datatype(op_ctx *c, vki_dtype *t)
{
    *t = (vki_dtype)ir_attr_int(c->node, "output_datatype", VKI_DTYPE_FLOAT);
    if (!dtype_gpu_supported(*t) || *t == VKI_DTYPE_BOOL || *t == VKI_DTYPE_STRING)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "output_datatype %s is not supported", vki_dtype_name(*t));
    return VKI_OK;
}

/* ---- window functions: w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size
 * (periodic) or size - 1 (symmetric) ---- */

static vki_status plan_window(op_ctx *c, double a0, double a1, double a2)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    int64_t size;
    VKI_TRY(const_scalar_int(c, 0, "size", &size));
    if (size < 0 || size > ((int64_t)1 << 30)) return op_error(c, VKI_ERROR_MODEL, "size %lld is out of range", (long long)size);
    vki_dtype t;
    VKI_TRY(output_datatype(c, &t));
    VKI_TRY(op_set_output(c, 0, t, 1, &size));
    void *out = op_output_host(c, 0);
    double n_1 = (double)(ir_attr_int(c->node, "periodic", 1) ? size : size - 1);
    for (int64_t n = 0; n < size; n++) {
        double x = (double)n * (M_PI * 2) / n_1;
        host_write_f64(t, out, (size_t)n, a0 - a1 * cos(x) + a2 * cos(2 * x));
    }
    return VKI_OK;
}

static vki_status plan_hann(op_ctx *c) { return plan_window(c, 0.5, 0.5, 0); }
static vki_status plan_hamming(op_ctx *c) { return plan_window(c, 25.0 / 46.0, 21.0 / 46.0, 0); }
static vki_status plan_blackman(op_ctx *c) { return plan_window(c, 0.42, 0.5, 0.08); }

/* ---- MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters, as ONNX's
 * reference (bin edges floor((dft_length + 1) * hz / sample_rate)) ---- */

#define MEL_MAX_ELEMENTS ((int64_t)1 << 26)

static vki_status plan_mel_weight_matrix(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 5, 5));
    int64_t mel_bins, dft_length, sample_rate;
    double lower, upper;
    VKI_TRY(const_scalar_int(c, 0, "num_mel_bins", &mel_bins));
    VKI_TRY(const_scalar_int(c, 1, "dft_length", &dft_length));
    VKI_TRY(const_scalar_int(c, 2, "sample_rate", &sample_rate));
    VKI_TRY(const_scalar_float(c, 3, "lower_edge_hertz", &lower));
    VKI_TRY(const_scalar_float(c, 4, "upper_edge_hertz", &upper));
    if (mel_bins <= 0 || dft_length <= 0 || sample_rate <= 0 || !(lower >= 0) || !(upper > lower) || !isfinite(upper))
        return op_error(c, VKI_ERROR_MODEL, "num_mel_bins %lld, dft_length %lld, sample_rate %lld must be positive and "
                        "0 <= lower_edge_hertz %g < upper_edge_hertz %g", (long long)mel_bins, (long long)dft_length,
                        (long long)sample_rate, lower, upper);
    int64_t dims[2] = {dft_length / 2 + 1, mel_bins};
    if (dims[0] > MEL_MAX_ELEMENTS || dims[1] > MEL_MAX_ELEMENTS || dims[0] * dims[1] > MEL_MAX_ELEMENTS)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "a %lld x %lld matrix: more than 2^26 elements", (long long)dims[0],
                        (long long)dims[1]);
    vki_dtype t;
    VKI_TRY(output_datatype(c, &t));
    VKI_TRY(op_set_output(c, 0, t, 2, dims));
    void *out = op_output_host(c, 0); /* zeroed */
    double low_mel = 2595 * log1p(lower / 700) / log(10), high_mel = 2595 * log1p(upper / 700) / log(10);
    double step = (high_mel - low_mel) / (double)(mel_bins + 2);
    int64_t edge[3];
    for (int64_t i = 0; i < mel_bins; i++) {
        for (int k = 0; k < 3; k++) {
            double hz = 700 * expm1(((double)(i + k) * step + low_mel) / 2595 * log(10));
            edge[k] = (int64_t)floor((double)(dft_length + 1) * hz / (double)sample_rate);
            if (edge[k] < 0 || edge[k] > dims[0] || (k < 2 && edge[k] == dims[0]))
                return op_error(c, VKI_ERROR_MODEL, "mel bin %lld's edge %lld lies outside the %lld spectrogram bins "
                                "(upper_edge_hertz %g above sample_rate / 2?)", (long long)i, (long long)edge[k],
                                (long long)dims[0], upper);
        }
        size_t col = (size_t)i;
        if (edge[1] == edge[0]) host_write_f64(t, out, (size_t)edge[1] * (size_t)mel_bins + col, 1);
        else
            for (int64_t j = edge[0]; j <= edge[1]; j++)
                host_write_f64(t, out, (size_t)j * (size_t)mel_bins + col, (double)(j - edge[0]) / (double)(edge[1] - edge[0]));
        for (int64_t j = edge[1]; j < edge[2]; j++)
            host_write_f64(t, out, (size_t)j * (size_t)mel_bins + col, (double)(edge[2] - j) / (double)(edge[2] - edge[1]));
    }
    return VKI_OK;
}

/* ---- DFT and STFT: shaders/dft.comp ---- */

enum { DFT_FORWARD = 0, DFT_INVERSE, DFT_INVERSE_REAL };

typedef struct dft_push {
    uint32_t count, L, inner, n, n_out, frames, step, cin;
} dft_push;

#define DFT_MAX_LENGTH ((int64_t)1 << 28) /* the shader forms 4 * (k * t mod n) in 32 bits */

static vki_status dispatch_dft(op_ctx *c, uint32_t mode, bool window, dft_push *push, int64_t count)
{
    if (count > UINT32_MAX || shape_numel(op_in(c, 0)->dims, op_in(c, 0)->rank) > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    push->count = (uint32_t)count;
    uint32_t spec[4] = {64, op_dtype_code(op_in(c, 0)->dtype), mode, window}, gx, gy;
    int values[3] = {op_in_index(c, 0), window ? op_in_index(c, 2) : op_in_index(c, 0), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch(c, "dft", spec, 4, push, sizeof *push, values, 3, gx, gy, 1);
}

static vki_status plan_dft(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 3));
    VKI_TRY(op_require_float(c, 0));
    plan_value *x = op_in(c, 0);
    char a[256];
    if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
        return op_error(c, VKI_ERROR_SHAPE, "the input %s must end in a dim of 1 (real) or 2 (complex)",
                        shape_str(x->dims, x->rank, a, sizeof a));
    int64_t axis = ir_attr_int(c->node, "axis", 1), dft_length = -1;
    if (c->opset >= 20) {
        axis = -2;
        if (op_has_input(c, 2)) VKI_TRY(const_scalar_int(c, 2, "axis", &axis));
    }
    if (op_has_input(c, 1)) {
        VKI_TRY(const_scalar_int(c, 1, "dft_length", &dft_length));
        if (dft_length < 1 || dft_length > DFT_MAX_LENGTH)
            return op_error(c, VKI_ERROR_MODEL, "dft_length %lld must lie in [1, 2^28]", (long long)dft_length);
    }
    int ax;
    VKI_TRY(op_axis(c, axis, x->rank, &ax));
    if (ax == x->rank - 1) return op_error(c, VKI_ERROR_MODEL, "axis %lld is the real/imaginary dim", (long long)axis);
    bool inverse = ir_attr_int(c->node, "inverse", 0) != 0, onesided = ir_attr_int(c->node, "onesided", 0) != 0;
    int64_t L = x->dims[ax];
    int64_t n = dft_length > 0 ? dft_length : inverse && onesided ? 2 * (L - 1) : L;
    if (n < 1 || n > DFT_MAX_LENGTH)
        return op_error(c, VKI_ERROR_SHAPE, "a transform of length %lld along axis %d of %s", (long long)n, ax,
                        shape_str(x->dims, x->rank, a, sizeof a));
    uint32_t mode = !inverse ? DFT_FORWARD : onesided ? DFT_INVERSE_REAL : DFT_INVERSE;
    int64_t dims[VKI_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    dims[ax] = !inverse && onesided ? n / 2 + 1 : n;
    dims[x->rank - 1] = mode == DFT_INVERSE_REAL ? 1 : 2;
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, dims));
    int64_t count = shape_numel(dims, x->rank) / dims[x->rank - 1];
    if (count == 0) return VKI_OK;
    if (L == 0) return op_error(c, VKI_ERROR_SHAPE, "the signal %s is empty along axis %d", shape_str(x->dims, x->rank, a, sizeof a), ax);
    int64_t inner = shape_numel(x->dims + ax + 1, x->rank - ax - 2);
    dft_push push = {0, (uint32_t)L, (uint32_t)inner, (uint32_t)n, (uint32_t)dims[ax], 1, 0, (uint32_t)x->dims[x->rank - 1]};
    return dispatch_dft(c, mode, false, &push, count);
}

static vki_status plan_stft(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 4));
    VKI_TRY(op_require_float(c, 0));
    plan_value *x = op_in(c, 0);
    char a[256], b[256];
    if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
        return op_error(c, VKI_ERROR_SHAPE, "the signal %s must be [batch, length, 1 or 2]", shape_str(x->dims, x->rank, a, sizeof a));
    int64_t step, frame_length = -1;
    VKI_TRY(const_scalar_int(c, 1, "frame_step", &step));
    if (op_has_input(c, 3)) VKI_TRY(const_scalar_int(c, 3, "frame_length", &frame_length));
    bool window = op_has_input(c, 2);
    if (window) {
        plan_value *w = op_in(c, 2);
        if (w->rank != 1 || (frame_length >= 0 && w->dims[0] != frame_length))
            return op_error(c, VKI_ERROR_SHAPE, "the window %s must be 1-D%s", shape_str(w->dims, w->rank, b, sizeof b),
                            frame_length >= 0 ? " of frame_length" : "");
        if (w->dtype != x->dtype)
            return op_error(c, VKI_ERROR_MODEL, "the window is %s, the signal %s", vki_dtype_name(w->dtype), vki_dtype_name(x->dtype));
        frame_length = w->dims[0];
    }
    if (frame_length < 0) frame_length = x->dims[1];
    if (step < 1 || frame_length < 1 || frame_length > x->dims[1] || frame_length > DFT_MAX_LENGTH)
        return op_error(c, VKI_ERROR_MODEL, "frame_step %lld must be positive and frame_length %lld in [1, %lld]",
                        (long long)step, (long long)frame_length, (long long)x->dims[1]);
    bool onesided = ir_attr_int(c->node, "onesided", 1) != 0;
    int64_t frames = 1 + (x->dims[1] - frame_length) / step;
    int64_t dims[4] = {x->dims[0], frames, onesided ? frame_length / 2 + 1 : frame_length, 2};
    VKI_TRY(op_set_output(c, 0, x->dtype, 4, dims));
    int64_t count = dims[0] * dims[1] * dims[2];
    if (count == 0) return VKI_OK;
    if (step > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "frame_step %lld is too large", (long long)step);
    dft_push push = {0, (uint32_t)x->dims[1], 1, (uint32_t)frame_length, (uint32_t)dims[2], (uint32_t)frames, (uint32_t)step,
                     (uint32_t)x->dims[2]};
    return dispatch_dft(c, DFT_FORWARD, window, &push, count);
}

#define SIGNAL_DTYPES "float32 float16 bfloat16 int8 int16 int32 int64 uint8 uint16"
const op_def op_HannWindow = {"HannWindow", "", SIGNAL_DTYPES, "size must be a plan-time constant (computed on the host)", plan_hann};
const op_def op_HammingWindow = {"HammingWindow", "", SIGNAL_DTYPES, "size must be a plan-time constant (computed on the host)",
                                 plan_hamming};
const op_def op_BlackmanWindow = {"BlackmanWindow", "", SIGNAL_DTYPES,
                                  "size must be a plan-time constant (computed on the host)", plan_blackman};
const op_def op_MelWeightMatrix = {"MelWeightMatrix", "", SIGNAL_DTYPES,
                                   "the inputs must be plan-time constants (computed on the host)", plan_mel_weight_matrix};
const op_def op_DFT = {"DFT", "", OP_DTYPES_FLOAT, "a direct O(n) sum per frequency; dft_length and axis plan-time constants",
                       plan_dft};
const op_def op_STFT = {"STFT", "", OP_DTYPES_FLOAT, "a direct O(n) sum per frequency; frame_step and frame_length plan-time "
                        "constants", plan_stft};
