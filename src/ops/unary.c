/* Element-wise unary ops and Cast: one shader (shaders/unary.glsl), the op picked by a
 * specialization constant. Constant inputs are folded on the host. */
#include "binary.h"
#include "op.h"

#include <math.h>
#include <string.h>

enum unary_code { /* keep in step with shaders/unary.glsl */
    U_IDENTITY, U_RELU, U_SIGMOID, U_TANH, U_EXP, U_LOG, U_NEG, U_ABS, U_SQRT, U_RECIPROCAL, U_CLIP,
    U_HARDSIGMOID, U_HARDSWISH, U_LEAKYRELU, U_FLOOR, U_CEIL, U_ROUND, U_SIN, U_COS, U_TAN, U_ASIN,
    U_ACOS, U_ATAN, U_SINH, U_COSH, U_ASINH, U_ACOSH, U_ATANH, U_ERF, U_SIGN, U_SOFTPLUS, U_SOFTSIGN,
    U_ELU, U_SELU, U_CELU, U_THRESHOLDED_RELU, U_NOT, U_ISNAN, U_ISINF, U_GELU, U_MISH, U_BITNOT,
    U_SWISH,
};

enum unary_types { FLOAT_ONLY, SIGNED, ANY, BOOL_ONLY, INT_ONLY };

typedef struct unary_desc {
    const char *name;
    enum unary_code code;
    enum unary_types types;
} unary_desc;

static const unary_desc unary_ops[] = {
    {"Relu", U_RELU, SIGNED}, {"Sigmoid", U_SIGMOID, FLOAT_ONLY}, {"Tanh", U_TANH, FLOAT_ONLY},
    {"Exp", U_EXP, FLOAT_ONLY}, {"Log", U_LOG, FLOAT_ONLY}, {"Neg", U_NEG, SIGNED}, {"Abs", U_ABS, ANY},
    {"Sqrt", U_SQRT, FLOAT_ONLY}, {"Reciprocal", U_RECIPROCAL, FLOAT_ONLY}, {"Clip", U_CLIP, ANY},
    {"HardSigmoid", U_HARDSIGMOID, FLOAT_ONLY}, {"HardSwish", U_HARDSWISH, FLOAT_ONLY},
    {"LeakyRelu", U_LEAKYRELU, FLOAT_ONLY}, {"Floor", U_FLOOR, FLOAT_ONLY}, {"Ceil", U_CEIL, FLOAT_ONLY},
    {"Round", U_ROUND, FLOAT_ONLY}, {"Sin", U_SIN, FLOAT_ONLY}, {"Cos", U_COS, FLOAT_ONLY},
    {"Tan", U_TAN, FLOAT_ONLY}, {"Asin", U_ASIN, FLOAT_ONLY}, {"Acos", U_ACOS, FLOAT_ONLY},
    {"Atan", U_ATAN, FLOAT_ONLY}, {"Sinh", U_SINH, FLOAT_ONLY}, {"Cosh", U_COSH, FLOAT_ONLY},
    {"Asinh", U_ASINH, FLOAT_ONLY}, {"Acosh", U_ACOSH, FLOAT_ONLY}, {"Atanh", U_ATANH, FLOAT_ONLY},
    {"Erf", U_ERF, FLOAT_ONLY}, {"Sign", U_SIGN, ANY}, {"Softplus", U_SOFTPLUS, FLOAT_ONLY},
    {"Softsign", U_SOFTSIGN, FLOAT_ONLY}, {"Elu", U_ELU, FLOAT_ONLY}, {"Selu", U_SELU, FLOAT_ONLY},
    {"Celu", U_CELU, FLOAT_ONLY}, {"ThresholdedRelu", U_THRESHOLDED_RELU, FLOAT_ONLY},
    {"Not", U_NOT, BOOL_ONLY}, {"IsNaN", U_ISNAN, FLOAT_ONLY}, {"IsInf", U_ISINF, FLOAT_ONLY},
    {"Gelu", U_GELU, FLOAT_ONLY}, {"Mish", U_MISH, FLOAT_ONLY}, {"BitwiseNot", U_BITNOT, INT_ONLY},
    {"Swish", U_SWISH, FLOAT_ONLY}, {"Identity", U_IDENTITY, ANY}, {"Dropout", U_IDENTITY, ANY}, {"Cast", U_IDENTITY, ANY},
};

static const unary_desc *find_desc(const char *name)
{
    for (size_t i = 0; i < sizeof unary_ops / sizeof *unary_ops; i++)
        if (!strcmp(unary_ops[i].name, name)) return &unary_ops[i];
    return NULL;
}

static double host_erf(double v) { return erf(v); }

/* Host evaluation for folding; mirrors the shader. */
static double host_apply(enum unary_code code, double v, const float *a)
{
    switch (code) {
    case U_RELU: return v > 0 ? v : 0;
    case U_SIGMOID: return 1 / (1 + exp(-v));
    case U_TANH: return tanh(v);
    case U_EXP: return exp(v);
    case U_LOG: return log(v);
    case U_NEG: return -v;
    case U_ABS: return fabs(v);
    case U_SQRT: return sqrt(v);
    case U_RECIPROCAL: return 1 / v;
    case U_CLIP: return v < a[0] ? a[0] : v > a[1] ? a[1] : v;
    case U_FLOOR: return floor(v);
    case U_CEIL: return ceil(v);
    case U_ROUND: return nearbyint(v);
    case U_SIGN: return (v > 0) - (v < 0);
    case U_ERF: return host_erf(v);
    case U_NOT: return v == 0;
    default: return v;
    }
}

/* Whether shaders/unary_f64.comp computes this op in double (on devices with shaderFloat64):
 * Cast to or from float64, and on float64 the ops that are exact or cheap in double. The
 * others (transcendentals: GLSL has no double exp, log, sin...) run unary.glsl on fp32 words. */
static bool float64_in_double(enum unary_code code, vki_dtype in, vki_dtype out)
{
    bool in64 = in == VKI_DTYPE_DOUBLE, out64 = out == VKI_DTYPE_DOUBLE;
    if (code == U_IDENTITY) return in64 != out64 && dtype_gpu_supported(in) && dtype_gpu_supported(out);
    if (!in64) return false;
    switch (code) {
    case U_ISNAN: case U_ISINF: return true;
    case U_RELU: case U_NEG: case U_ABS: case U_SQRT: case U_RECIPROCAL: case U_CLIP: case U_LEAKYRELU:
    case U_FLOOR: case U_CEIL: case U_ROUND: case U_SIGN: case U_THRESHOLDED_RELU: return out64;
    default: return false;
    }
}

vki_status unary_float64(op_ctx *c, int code, const float params[3], bool *done)
{
    plan_value *x = op_in(c, 0), *y = op_out(c, 0);
    int64_t count = shape_numel(x->dims, x->rank);
    *done = false;
    if (!op_has_float64(c) || !float64_in_double((enum unary_code)code, x->dtype, y->dtype) ||
        (uint64_t)count * 8 > op_max_binding_bytes(c) || count > UINT32_MAX)
        return VKI_OK;
    bool in64 = x->dtype == VKI_DTYPE_DOUBLE, out64 = y->dtype == VKI_DTYPE_DOUBLE;
    gpu_storage stores[2] = {in64 ? GPU_F64 : GPU_W32, out64 ? GPU_F64 : GPU_W32};
    uint32_t spec[5] = {128, (uint32_t)code, in64 ? OP_DTYPE_F64 : op_dtype_code_exact(x->dtype),
                        out64 ? OP_DTYPE_F64 : op_dtype_code_exact(y->dtype), 0};
    struct { uint32_t count; float a, b, g; } push = {(uint32_t)count, params[0], params[1], params[2]};
    int values[2] = {op_in_index(c, 0), op_out_index(c, 0)};
    uint32_t gx, gy;
    spec[4] = op_grid_elementwise(c, (uint64_t)count, 128, &gx, &gy);
    *done = true;
    return op_dispatch_stored(c, "unary_f64", spec, 5, &push, sizeof push, values, NULL, stores, 2, gx, gy, 1);
}

static vki_status plan_unary(op_ctx *c)
{
    const unary_desc *d = find_desc(c->node->op_type);
    const char *op = c->node->op_type;
    VKI_TRY(op_require_inputs(c, 1, d->code == U_CLIP ? 3 : d->code == U_IDENTITY && !strcmp(op, "Dropout") ? 3 : 1));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0);
    vki_dtype out_dtype = x->dtype;
    /* a Loop's trip count or condition that its expansion read back (src/graph/ir.h) */
    int64_t read_max = d->code == U_IDENTITY ? ir_attr_int(c->node, IR_READ_BACK, 0) : 0;
    if (read_max > 0 && !x->host) {
        int64_t value;
        bool known;
        VKI_TRY(op_read_back(c, 0, read_max, &value, &known));
        if (!known) return VKI_OK;
    }
    bool is_float = dtype_is_float(x->dtype);
    switch (d->types) {
    case FLOAT_ONLY: VKI_TRY(op_require_float(c, 0)); break;
    case BOOL_ONLY:
        if (x->dtype != VKI_DTYPE_BOOL) return op_error(c, VKI_ERROR_SHAPE, "%s takes bool, not %s", op, vki_dtype_name(x->dtype));
        break;
    case INT_ONLY:
        if (is_float || x->dtype == VKI_DTYPE_BOOL) return op_error(c, VKI_ERROR_SHAPE, "%s takes integers, not %s", op, vki_dtype_name(x->dtype));
        break;
    case SIGNED:
    case ANY:
        if (x->dtype == VKI_DTYPE_BOOL && d->code != U_IDENTITY)
            return op_error(c, VKI_ERROR_SHAPE, "%s does not take bool", op);
        break;
    }
    float push_f[3] = {0, 0, 0};
    if (!strcmp(op, "Cast")) {
        const ir_attr *to = ir_find_attr(c->node, "to");
        if (!to || to->type != ATTR_INT) return op_error(c, VKI_ERROR_MODEL, "Cast needs the 'to' attribute");
        out_dtype = (vki_dtype)to->i;
        if (!dtype_gpu_supported(out_dtype))
            return op_error(c, VKI_ERROR_UNSUPPORTED, "Cast to %s is not supported (the GPU holds the numeric dtypes "
                            "and bool; strings and complex are not)", vki_dtype_name(out_dtype));
        /* float8: overflow saturates unless saturate = 0 (push alpha = 1: not saturating);
         * float8e8m0 rounds as round_mode says (push beta: E8M0_UP, _DOWN, _NEAREST) */
        push_f[0] = !ir_attr_int(c->node, "saturate", 1);
        const char *mode = ir_attr_string(c->node, "round_mode", "up");
        if (strcmp(mode, "up") && strcmp(mode, "down") && strcmp(mode, "nearest"))
            return op_error(c, VKI_ERROR_MODEL, "Cast: round_mode '%s' is not one of up, down, nearest", mode);
        push_f[1] = !strcmp(mode, "up") ? E8M0_UP : !strcmp(mode, "down") ? E8M0_DOWN : E8M0_NEAREST;
    }
    if (d->code == U_ISNAN || d->code == U_ISINF || d->code == U_NOT) out_dtype = VKI_DTYPE_BOOL;
    if (d->code == U_ISINF) {
        push_f[0] = (float)ir_attr_int(c->node, "detect_positive", 1);
        push_f[1] = (float)ir_attr_int(c->node, "detect_negative", 1);
    }
    switch (d->code) {
    case U_LEAKYRELU: push_f[0] = ir_attr_float(c->node, "alpha", 0.01f); break;
    case U_HARDSIGMOID:
        push_f[0] = ir_attr_float(c->node, "alpha", 0.2f);
        push_f[1] = ir_attr_float(c->node, "beta", 0.5f);
        break;
    case U_ELU: case U_CELU: push_f[0] = ir_attr_float(c->node, "alpha", 1.0f); break;
    case U_SELU:
        push_f[0] = ir_attr_float(c->node, "alpha", 1.67326319217681884765625f);
        push_f[1] = ir_attr_float(c->node, "gamma", 1.05070102214813232421875f);
        break;
    case U_THRESHOLDED_RELU: push_f[0] = ir_attr_float(c->node, "alpha", 1.0f); break;
    case U_SWISH: push_f[0] = ir_attr_float(c->node, "alpha", 1.0f); break;
    case U_GELU: push_f[0] = !strcmp(ir_attr_string(c->node, "approximate", "none"), "tanh"); break;
    case U_CLIP: {
        if ((op_has_input(c, 1) && !op_input_is_const(c, 1)) || (op_has_input(c, 2) && !op_input_is_const(c, 2))) {
            VKI_TRY(op_set_output(c, 0, out_dtype, x->rank, x->dims));
            return binary_clip_runtime(c);
        }
        double lo = is_float ? -INFINITY : INT32_MIN, hi = is_float ? INFINITY : INT32_MAX;
        if (c->opset < 11) {
            lo = ir_attr_float(c->node, "min", -INFINITY);
            hi = ir_attr_float(c->node, "max", INFINITY);
        }
        int n;
        if (op_has_input(c, 1)) VKI_TRY(op_const_floats(c, 1, &lo, 1, &n));
        if (op_has_input(c, 2)) VKI_TRY(op_const_floats(c, 2, &hi, 1, &n));
        if (is_float) {
            push_f[0] = (float)lo;
            push_f[1] = (float)hi;
        } else {
            int32_t ilo = lo < INT32_MIN ? INT32_MIN : (int32_t)lo, ihi = hi > INT32_MAX ? INT32_MAX : (int32_t)hi;
            memcpy(&push_f[0], &ilo, 4);
            memcpy(&push_f[1], &ihi, 4);
        }
        break;
    }
    default: break;
    }
    if (!strcmp(op, "Dropout")) {
        if (op_has_input(c, 2)) {
            int64_t training = 0;
            int n;
            VKI_TRY(op_const_ints(c, 2, &training, 1, &n));
            /* torchvision's transformers export training_mode = true with ratio 0: the identity */
            double ratio = 0.5;
            if (training && op_has_input(c, 1)) VKI_TRY(op_const_floats(c, 1, &ratio, 1, &n));
            if (training && ratio != 0)
                return op_error(c, VKI_ERROR_UNSUPPORTED, "Dropout in training mode with ratio %g is not supported "
                                "(inference only; training mode runs only with a plan-time ratio of 0, the identity)", ratio);
        }
        if (op_has_output(c, 1)) { /* the mask: all true in inference and with ratio 0 */
            VKI_TRY(op_set_output(c, 1, VKI_DTYPE_BOOL, x->rank, x->dims));
            unsigned char *mask = op_output_host(c, 1);
            memset(mask, 1, (size_t)shape_numel(x->dims, x->rank));
        }
    }
    VKI_TRY(op_set_output(c, 0, out_dtype, x->rank, x->dims));
    if (d->code == U_IDENTITY && out_dtype == x->dtype) return op_output_alias(c, 0, 0);
    /* float32 rounded to a 16-bit float and widened straight back (the dynamo exporter's
     * x.to(bfloat16).to(float32) around a bfloat16 model's float32 attention): the rounded
     * value is held as float32 words, which the Cast back reads as a view, one pass for the two */
    if (!strcmp(op, "Cast") && (out_dtype == VKI_DTYPE_BFLOAT16 || out_dtype == VKI_DTYPE_FLOAT16) &&
        x->dtype == VKI_DTYPE_FLOAT && !x->host && op_storage(c, op_in_index(c, 0)) == GPU_W32 && op_out(c, 0)) {
        int back = op_only_reader(c, op_out_index(c, 0), "Cast");
        if (back >= 0 && ir_attr_int(op_graph_node(c, back), "to", 0) == VKI_DTYPE_FLOAT) op_out(c, 0)->storage = GPU_W32;
    }
    int64_t count = shape_numel(x->dims, x->rank);
    /* fold constants on the host (shape arithmetic mostly); the rest runs on the GPU */
    if (op_all_inputs_const(c) && count <= 4096 && (d->code == U_IDENTITY || d->code <= U_ROUND || d->code == U_SIGN ||
                                                    d->code == U_NOT || d->code == U_ERF)) {
        void *out = op_output_host(c, 0);
        for (int64_t i = 0; i < count; i++) {
            if (!is_float && dtype_is_int(out_dtype) && d->code != U_IDENTITY) {
                int64_t v = host_read_i64(x->dtype, x->host, (size_t)i);
                int64_t r = d->code == U_NEG ? -v : d->code == U_ABS ? (v < 0 ? -v : v) : (int64_t)host_apply(d->code, (double)v, push_f);
                host_write_i64(out_dtype, out, (size_t)i, r);
            } else if (!is_float) {
                host_write_i64(out_dtype, out, (size_t)i, host_read_i64(x->dtype, x->host, (size_t)i));
            } else if (out_dtype == VKI_DTYPE_FLOAT8E8M0) { /* Cast: as round_mode and saturate say */
                ((uint8_t *)out)[i] = e8m0_round((float)host_read_f64(x->dtype, x->host, (size_t)i), push_f[0] == 0, (int)push_f[1]);
            } else if (dtype_is_minifloat(out_dtype)) { /* Cast: float8 saturates as the attribute says */
                ((uint8_t *)out)[i] = minifloat_encode(out_dtype, host_read_f64(x->dtype, x->host, (size_t)i), push_f[0] == 0);
            } else {
                host_write_f64(out_dtype, out, (size_t)i, host_apply(d->code, host_read_f64(x->dtype, x->host, (size_t)i), push_f));
            }
        }
        return VKI_OK;
    }
    /* A Cast between float types whose storages the conversion pass maps exactly as the Cast
     * rounds (halves or bfloat16 widened to float32 words; float32 or float16 to bfloat16, which
     * both round to nearest even) is that one pass, not the unary pass and a conversion after it.
     * Not to float16: packHalf2x16's rounding is the driver's. */
    if (d->code == U_IDENTITY && out_dtype != x->dtype && dtype_is_float(x->dtype) && dtype_is_float(out_dtype) &&
        !x->host && !x->permuted && !x->view_scale && op_out(c, 0)) {
        gpu_storage from = op_storage(c, op_in_index(c, 0)), to = op_out(c, 0)->storage;
        if (((from == GPU_F16 || from == GPU_BF16) && to == GPU_W32 && out_dtype == VKI_DTYPE_FLOAT) ||
            ((from == GPU_W32 || from == GPU_F16) && to == GPU_BF16 && out_dtype == VKI_DTYPE_BFLOAT16))
            return op_output_alias(c, 0, 0);
        /* a 16-bit float held as float32 words (the rounding above) widened: the same words */
        if (from == GPU_W32 && to == GPU_W32 && out_dtype == VKI_DTYPE_FLOAT && x->dtype != VKI_DTYPE_FLOAT)
            return op_output_alias(c, 0, 0);
    }
    bool done;
    VKI_TRY(unary_float64(c, d->code, push_f, &done));
    if (done) return VKI_OK;
    int values[2] = {op_in_index(c, 0), op_out_index(c, 0)};
    /* float values held as halves run the 16-bit variant as they are; an op that changes the
     * element's meaning (Cast, IsNaN...) reads and writes words */
    gpu_storage st = dtype_is_float(out_dtype) && out_dtype == x->dtype ? op_half_storage(c, values, 2) : GPU_W32;
    gpu_storage stores[2] = {st, st};
    uint64_t elem = storage_size(st);
    /* tensors larger than one binding run as several dispatches over windows */
    uint64_t item_bytes[2] = {elem, elem};
    int64_t chunk = op_batch_chunk(c, count, item_bytes, 2);
    if (chunk <= 0) return op_error(c, VKI_ERROR_UNSUPPORTED, "cannot split this tensor into bindings the device can address");
    /* Cast (the identity op code) rounds and wraps to the small dtypes by their own codes */
    uint32_t (*code_of)(vki_dtype) = d->code == U_IDENTITY ? op_dtype_code_exact : op_dtype_code;
    uint32_t spec[5] = {128, d->code, code_of(x->dtype), code_of(out_dtype), 0};
    for (int64_t start = 0; start < count; start += chunk) {
        int64_t n = count - start < chunk ? count - start : chunk;
        struct { uint32_t count; float a, b, g; } push = {(uint32_t)n, push_f[0], push_f[1], push_f[2]};
        op_window win[2] = {{(uint64_t)start * elem, (uint64_t)n * elem}, {(uint64_t)start * elem, (uint64_t)n * elem}};
        uint32_t gx, gy;
        spec[4] = op_grid_elementwise(c, (uint64_t)n, 128, &gx, &gy);
        VKI_TRY(op_dispatch_stored(c, op_variant(c, "unary", st), spec, 5, &push, sizeof push, values,
                                   chunk == count ? NULL : win, stores, 2, gx, gy, 1));
    }
    return VKI_OK;
}

#define UNARY(name_, dtypes_) const op_def op_##name_ = {#name_, "", dtypes_, "", plan_unary};
#define FLOATS OP_DTYPES_FLOAT
#define NUMERIC OP_DTYPES_NUMERIC
#define ALL NUMERIC " bool"
UNARY(Relu, FLOATS " int8 int16 int32 int64")
UNARY(Sigmoid, FLOATS) UNARY(Tanh, FLOATS) UNARY(Exp, FLOATS) UNARY(Log, FLOATS)
UNARY(Neg, FLOATS " int8 int16 int32 int64") UNARY(Abs, NUMERIC) UNARY(Sqrt, FLOATS) UNARY(Reciprocal, FLOATS)
UNARY(Clip, NUMERIC) UNARY(HardSigmoid, FLOATS) UNARY(HardSwish, FLOATS) UNARY(LeakyRelu, FLOATS)
UNARY(Floor, FLOATS) UNARY(Ceil, FLOATS) UNARY(Round, FLOATS) UNARY(Sin, FLOATS) UNARY(Cos, FLOATS)
UNARY(Tan, FLOATS) UNARY(Asin, FLOATS) UNARY(Acos, FLOATS) UNARY(Atan, FLOATS) UNARY(Sinh, FLOATS)
UNARY(Cosh, FLOATS) UNARY(Asinh, FLOATS) UNARY(Acosh, FLOATS) UNARY(Atanh, FLOATS) UNARY(Erf, FLOATS)
UNARY(Sign, NUMERIC) UNARY(Softplus, FLOATS) UNARY(Softsign, FLOATS) UNARY(Elu, FLOATS) UNARY(Selu, FLOATS)
UNARY(Celu, FLOATS) UNARY(ThresholdedRelu, FLOATS) UNARY(Not, "bool") UNARY(IsNaN, FLOATS)
UNARY(IsInf, FLOATS) UNARY(Gelu, FLOATS) UNARY(Mish, FLOATS) UNARY(Swish, FLOATS) UNARY(BitwiseNot, "int8 int16 int32 int64 uint8 uint16")
UNARY(Cast, ALL " " OP_DTYPES_SMALL)
/* a sequence or optional input is passed on by the planner */
const op_def op_Identity = {"Identity", "", ALL, "", plan_unary, OP_TAKES_LISTS | OP_PASSES_LISTS};
const op_def op_Dropout = {"Dropout", "", ALL, "inference only: training_mode runs only with a plan-time ratio of 0 (the identity)", plan_unary};
