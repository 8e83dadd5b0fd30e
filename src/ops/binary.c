/* Element-wise ops of two or more inputs with numpy broadcasting: arithmetic, comparisons,
 * logic and bit ops, Max/Min/Sum/Mean, PRelu and Where (shaders/binary.glsl, where.glsl).
 * Constant inputs with small outputs are folded on the host (shape arithmetic). */
#include "movement.h"
#include "normalization.h"

#include <math.h>
#include <string.h>

enum binary_code { /* keep in step with shaders/binary.glsl */
    B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MOD, B_FMOD, B_SHIFT_LEFT, B_SHIFT_RIGHT, B_BITAND, B_BITOR,
    B_BITXOR, B_AND, B_OR, B_XOR, B_EQUAL, B_LESS, B_LESS_EQUAL, B_GREATER, B_GREATER_EQUAL, B_MAX,
    B_MIN, B_PRELU, B_MEAN_LAST,
    B_WHERE, /* shaders/where.glsl */
    B_SWIGLU, /* shaders/binary.glsl again: a * sigmoid(param a) * b */
};

enum binary_types { NUMERIC, ANY_TYPE, FLOATS_ONLY, INTS_ONLY, BOOLS_ONLY, POW_TYPES, WHERE_TYPES };

typedef struct binary_desc {
    const char *name;
    enum binary_code code;
    enum binary_types types;
    bool variadic;  /* 1..N inputs, folded pairwise */
    bool legacy_bcast; /* opset < 7: 'broadcast' and 'axis' attributes */
} binary_desc;

static const binary_desc binary_ops[] = {
    {"Add", B_ADD, NUMERIC, false, true}, {"Sub", B_SUB, NUMERIC, false, true},
    {"Mul", B_MUL, NUMERIC, false, true}, {"Div", B_DIV, NUMERIC, false, true},
    {"Pow", B_POW, POW_TYPES, false, true}, {"Mod", B_MOD, NUMERIC, false, false},
    {"BitShift", B_SHIFT_LEFT, INTS_ONLY, false, false}, {"BitwiseAnd", B_BITAND, INTS_ONLY, false, false},
    {"BitwiseOr", B_BITOR, INTS_ONLY, false, false}, {"BitwiseXor", B_BITXOR, INTS_ONLY, false, false},
    {"And", B_AND, BOOLS_ONLY, false, true}, {"Or", B_OR, BOOLS_ONLY, false, true}, {"Xor", B_XOR, BOOLS_ONLY, false, true},
    {"Equal", B_EQUAL, ANY_TYPE, false, true}, {"Less", B_LESS, NUMERIC, false, true},
    {"LessOrEqual", B_LESS_EQUAL, NUMERIC, false, false}, {"Greater", B_GREATER, NUMERIC, false, true},
    {"GreaterOrEqual", B_GREATER_EQUAL, NUMERIC, false, false}, {"Max", B_MAX, NUMERIC, true, false},
    {"Min", B_MIN, NUMERIC, true, false}, {"Sum", B_ADD, FLOATS_ONLY, true, false},
    {"Mean", B_ADD, FLOATS_ONLY, true, false}, {"PRelu", B_PRELU, NUMERIC, false, false},
    {"Where", B_WHERE, WHERE_TYPES, false, false}, {"SwiGLU", B_SWIGLU, FLOATS_ONLY, false, false},
};

static const binary_desc *find_desc(const char *name)
{
    for (size_t i = 0; i < sizeof binary_ops / sizeof *binary_ops; i++)
        if (!strcmp(binary_ops[i].name, name)) return &binary_ops[i];
    return NULL;
}

#define MAX_VARIADIC_INPUTS 64
#define BROADCAST_MAX_RANK 6 /* shaders/broadcast.glsl */
#define BROADCAST_TOO_DEEP "this broadcast needs %d dimensions after merging neighbours that broadcast alike; " \
                           "at most %d are supported"

typedef struct shape {
    int rank;
    int64_t dims[VKI_MAX_RANK];
} shape;

/* Push constants of shaders/broadcast.glsl. */
typedef struct broadcast_push {
    uint32_t count;
    float param;
    uint32_t dims[BROADCAST_MAX_RANK];
    uint32_t strides[3 * BROADCAST_MAX_RANK];
    uint32_t base[3]; /* input k's first element: a strided Slice read in place (view_elem) */
} broadcast_push;
_Static_assert(sizeof(broadcast_push) <= 128, "push constants are limited to 128 bytes");

static bool same_shape(const shape *a, const shape *b)
{
    if (a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* Numpy's rule: shapes align at the right; each dimension is 1 or the common size. */
static bool broadcast_shapes(const shape *in, int n, shape *out)
{
    out->rank = 0;
    for (int k = 0; k < n; k++) out->rank = in[k].rank > out->rank ? in[k].rank : out->rank;
    for (int d = 0; d < out->rank; d++) {
        int64_t size = 1;
        for (int k = 0; k < n; k++) {
            int kd = d - (out->rank - in[k].rank);
            if (kd < 0 || in[k].dims[kd] == 1) continue;
            if (size != 1 && size != in[k].dims[kd]) return false;
            size = in[k].dims[kd];
        }
        out->dims[d] = size;
    }
    return true;
}

/* Collapses the output shape for the shader: dimensions of size 1 go, and neighbours that
 * every input either spans or broadcasts alike merge. Fills push->dims and strides (0 where
 * an input is broadcast). Returns the effective rank, 0 when no input is broadcast (the
 * shader then skips the index math); beyond BROADCAST_MAX_RANK it fills nothing. */
static int collapse_broadcast(const shape *in, int n, const shape *out, broadcast_push *push)
{
    int64_t dims[VKI_MAX_RANK];
    unsigned masks[VKI_MAX_RANK]; /* bit k: input k is broadcast along this dimension */
    int rank = 0;
    for (int d = 0; d < out->rank; d++) {
        if (out->dims[d] == 1) continue;
        unsigned mask = 0;
        for (int k = 0; k < n; k++) {
            int kd = d - (out->rank - in[k].rank);
            if (kd < 0 || in[k].dims[kd] == 1) mask |= 1u << k;
        }
        if (rank && masks[rank - 1] == mask) {
            dims[rank - 1] *= out->dims[d];
        } else {
            dims[rank] = out->dims[d];
            masks[rank++] = mask;
        }
    }
    if (rank == 0 || (rank == 1 && masks[0] == 0)) return 0;
    if (rank > BROADCAST_MAX_RANK) return rank; /* the caller refuses it */
    for (int k = 0; k < n; k++) {
        uint32_t stride = 1;
        for (int j = rank - 1; j >= 0; j--) {
            bool broadcast = masks[j] >> k & 1;
            push->strides[k * BROADCAST_MAX_RANK + j] = broadcast ? 0 : stride;
            if (!broadcast) stride *= (uint32_t)dims[j];
        }
    }
    for (int j = 0; j < rank; j++) push->dims[j] = (uint32_t)dims[j];
    return rank;
}

/* Opset < 7 broadcasting of Add, Mul, And, Equal...: only B broadcasts, and only with
 * broadcast=1; 'axis' places B's dimensions inside A's. */
static vki_status legacy_broadcast(op_ctx *c, shape *in)
{
    int64_t broadcast = ir_attr_int(c->node, "broadcast", 0);
    if (!broadcast) {
        if (!same_shape(&in[0], &in[1]))
            return op_error(c, VKI_ERROR_SHAPE, "inputs differ in shape and broadcast=0 (opset %lld)", (long long)c->opset);
        return VKI_OK;
    }
    if (!ir_find_attr(c->node, "axis")) return VKI_OK; /* right-aligned, as numpy */
    int axis;
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", 0), in[0].rank, &axis));
    if (axis + in[1].rank > in[0].rank)
        return op_error(c, VKI_ERROR_SHAPE, "B of rank %d does not fit in A of rank %d at axis %d", in[1].rank, in[0].rank, axis);
    shape b = {in[0].rank - axis, {0}};
    for (int d = 0; d < b.rank; d++) b.dims[d] = d < in[1].rank ? in[1].dims[d] : 1;
    in[1] = b;
    return VKI_OK;
}

/* ---- dtype rules ---- */

static bool is_numeric(vki_dtype t) { return t != VKI_DTYPE_BOOL; }

static vki_status check_dtypes(op_ctx *c, const binary_desc *d, int n)
{
    const char *op = c->node->op_type;
    int first = d->types == WHERE_TYPES ? 1 : 0;
    vki_dtype t = op_in(c, first)->dtype;
    if (d->types != POW_TYPES)
        for (int k = first + 1; k < n; k++)
            if (op_in(c, k)->dtype != t)
                return op_error(c, VKI_ERROR_MODEL, "%s needs inputs of one dtype; input %d is %s, input %d is %s", op, first,
                                vki_dtype_name(t), k, vki_dtype_name(op_in(c, k)->dtype));
    bool ok = true;
    const char *want = "";
    switch (d->types) {
    case NUMERIC: ok = is_numeric(t); want = "numbers, not bool"; break;
    case ANY_TYPE: break;
    case FLOATS_ONLY: ok = dtype_is_float(t); want = "float32, float16 or bfloat16"; break;
    case INTS_ONLY: ok = dtype_is_int(t) && t != VKI_DTYPE_BOOL; want = "integers"; break;
    case BOOLS_ONLY: ok = t == VKI_DTYPE_BOOL; want = "bool"; break;
    case POW_TYPES: ok = is_numeric(t) && is_numeric(op_in(c, 1)->dtype); want = "numbers, not bool"; break;
    case WHERE_TYPES:
        if (op_in(c, 0)->dtype != VKI_DTYPE_BOOL)
            return op_error(c, VKI_ERROR_MODEL, "Where's condition must be bool, not %s", vki_dtype_name(op_in(c, 0)->dtype));
        break;
    }
    if (!ok) return op_error(c, VKI_ERROR_UNSUPPORTED, "%s takes %s, not %s", op, want, vki_dtype_name(t));
    return VKI_OK;
}

/* ---- host folding (mirrors shaders/binary.glsl, in 64 bits) ---- */

/* Element offset into `in` of output element `index`. */
static size_t host_offset(const shape *in, const shape *out, int64_t index)
{
    size_t offset = 0, stride = 1;
    for (int d = out->rank - 1; d >= 0; d--) {
        int kd = d - (out->rank - in->rank);
        if (kd < 0) break;
        int64_t coord = index % out->dims[d];
        index /= out->dims[d];
        if (in->dims[kd] != 1) offset += (size_t)coord * stride;
        stride *= (size_t)in->dims[kd];
    }
    return offset;
}

static int64_t host_pow_int(int64_t a, int64_t e)
{
    if (e < 0) return a == 1 ? 1 : a == -1 ? (e & 1 ? -1 : 1) : 0;
    uint64_t r = 1, base = (uint64_t)a;
    for (; e; e >>= 1, base *= base)
        if (e & 1) r *= base;
    return (int64_t)r;
}

static int64_t host_div_int(int64_t a, int64_t b)
{
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0 - (uint64_t)a); /* INT64_MIN / -1 wraps */
    return a / b;
}

static int64_t host_int(enum binary_code code, int64_t a, int64_t b)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (code) {
    case B_ADD: return (int64_t)(ua + ub);
    case B_SUB: return (int64_t)(ua - ub);
    case B_MUL: return (int64_t)(ua * ub);
    case B_DIV: return host_div_int(a, b);
    case B_POW: return host_pow_int(a, b);
    case B_MOD: {
        int64_t r = (int64_t)(ua - (uint64_t)host_div_int(a, b) * ub);
        return r != 0 && (r < 0) != (b < 0) ? r + b : r;
    }
    case B_FMOD: return (int64_t)(ua - (uint64_t)host_div_int(a, b) * ub);
    /* BitShift: a shift by a negative amount or past the width leaves the sign fill alone
     * (opset 28's rule); right shifts of signed values are arithmetic. The caller wraps the
     * result to the dtype, so a left shift past a narrow dtype's width gives 0. */
    case B_SHIFT_LEFT: return b < 0 || b >= 64 ? 0 : (int64_t)(ua << b);
    case B_SHIFT_RIGHT:
        if (b < 0 || b >= 64) return a < 0 ? -1 : 0;
        return a < 0 ? ~(int64_t)(~ua >> b) : (int64_t)(ua >> b);
    case B_BITAND: return a & b;
    case B_BITOR: return a | b;
    case B_BITXOR: return a ^ b;
    case B_AND: return a && b;
    case B_OR: return a || b;
    case B_XOR: return !a != !b;
    case B_EQUAL: return a == b;
    case B_LESS: return a < b;
    case B_LESS_EQUAL: return a <= b;
    case B_GREATER: return a > b;
    case B_GREATER_EQUAL: return a >= b;
    case B_MAX: return a > b ? a : b;
    case B_MIN: return a < b ? a : b;
    case B_PRELU: return a < 0 ? (int64_t)(ua * ub) : a;
    default: return a;
    }
}

static double host_float(enum binary_code code, double a, double b, double param)
{
    switch (code) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_DIV: return a / b;
    case B_POW: return pow(a, b);
    case B_MOD: { /* numpy's remainder: the divisor's sign, a zero signed like the divisor */
        double r = fmod(a, b);
        if (r == 0) return copysign(0.0, b);
        return (r < 0) != (b < 0) ? r + b : r;
    }
    case B_FMOD: return fmod(a, b);
    case B_EQUAL: return a == b;
    case B_LESS: return a < b;
    case B_LESS_EQUAL: return a <= b;
    case B_GREATER: return a > b;
    case B_GREATER_EQUAL: return a >= b;
    case B_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    case B_MIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    case B_PRELU: return a < 0 ? a * b : a;
    case B_MEAN_LAST: return (a + b) / param;
    case B_SWIGLU: return a / (1 + exp(-param * a)) * b;
    default: return a;
    }
}

/* Pow with an integer base and a float exponent: integral exponents stay exact. */
static int64_t host_pow_int_by_float(int64_t a, double e)
{
    if (e == trunc(e) && fabs(e) < 9.2e18) return host_pow_int(a, (int64_t)e);
    double r = pow((double)a, e);
    return isnan(r) ? 0 : (int64_t)r;
}

static vki_status fold_on_host(op_ctx *c, const binary_desc *d, enum binary_code code, const shape *shapes, int n,
                               const shape *out_shape)
{
    plan_value *out = op_out(c, 0);
    void *data = op_output_host(c, 0);
    int64_t count = shape_numel(out_shape->dims, out_shape->rank);
    bool mean = !strcmp(d->name, "Mean");
    for (int64_t i = 0; i < count; i++) {
        size_t offsets[MAX_VARIADIC_INPUTS] = {0};
        for (int k = 0; k < n; k++) offsets[k] = host_offset(&shapes[k], out_shape, i);
        if (code == B_WHERE) {
            int src = host_read_i64(VKI_DTYPE_BOOL, op_in(c, 0)->host, offsets[0]) ? 1 : 2;
            plan_value *v = op_in(c, src);
            if (dtype_is_float(v->dtype)) host_write_f64(out->dtype, data, (size_t)i, host_read_f64(v->dtype, v->host, offsets[src]));
            else host_write_i64(out->dtype, data, (size_t)i, host_read_i64(v->dtype, v->host, offsets[src]));
            continue;
        }
        plan_value *a = op_in(c, 0);
        if (dtype_is_float(a->dtype)) {
            double acc = host_read_f64(a->dtype, a->host, offsets[0]);
            for (int k = 1; k < n; k++) {
                plan_value *b = op_in(c, k);
                double param = code == B_SWIGLU ? ir_attr_float(c->node, "alpha", 1.0f) : n;
                acc = host_float(mean && k == n - 1 ? B_MEAN_LAST : code, acc, host_read_f64(b->dtype, b->host, offsets[k]), param);
            }
            host_write_f64(out->dtype, data, (size_t)i, acc);
        } else {
            int64_t acc = host_read_i64(a->dtype, a->host, offsets[0]);
            for (int k = 1; k < n; k++) {
                plan_value *b = op_in(c, k);
                if (code == B_POW && dtype_is_float(b->dtype))
                    acc = host_pow_int_by_float(acc, host_read_f64(b->dtype, b->host, offsets[k]));
                else
                    acc = host_int(code, acc, host_read_i64(b->dtype, b->host, offsets[k]));
            }
            host_write_i64(out->dtype, data, (size_t)i, acc);
        }
    }
    return VKI_OK;
}

/* ---- GPU ---- */

/* One element-wise pass: the node inputs `ins[0..n)` (with their broadcast shapes) into the
 * output. Where takes its three inputs at once; the other ops fold inputs pairwise,
 * `codes[k]` combining the partial result with input k (k >= 1). */
typedef struct elementwise {
    bool where;
    int n;
    int ins[MAX_VARIADIC_INPUTS];
    enum binary_code codes[MAX_VARIADIC_INPUTS];
    float param; /* Mean: the input count */
    bool clamp;  /* a Relu/Clip that follows, applied by the last pass (op_fuse_clamp) */
    float lo, hi;
    bool strided; /* an input is a permuted view, read through its strides (one pass of two inputs) */
} elementwise;

/* Whether value v's elements fit one binding, so that a pass can read it whole (a permuted
 * view spans as many elements as it has: a Transpose of a whole tensor). Counted in 32-bit
 * words, as dispatch_elementwise decides between one pass and windows: a strided pass must
 * never be cut into windows, whose offsets are row-major. */
static bool bound_whole(op_ctx *c, const plan_value *v)
{
    return (uint64_t)shape_numel(v->dims, v->rank) * 4 <= op_max_binding_bytes(c);
}

/* Push dims and strides of one pass whose inputs may be permuted views (a Transpose that only
 * this op reads): every output dim of size > 1 kept as it is (no merging), each input's stride
 * along it its view stride, its row-major one, or 0 where it is broadcast. Returns the rank, or
 * BROADCAST_MAX_RANK + 1 when the output has more dims of size > 1 than the shader takes. */
static int strided_pass(op_ctx *c, const int *ins, const shape *in, int n, const shape *out, broadcast_push *push)
{
    int rank = 0;
    for (int d = 0; d < out->rank; d++)
        if (out->dims[d] != 1) rank++;
    if (rank > BROADCAST_MAX_RANK) return rank;
    for (int k = 0; k < n; k++) {
        const plan_value *v = op_value(c, ins[k]);
        int64_t rowmajor[VKI_MAX_RANK];
        contiguous_strides(in[k].dims, in[k].rank, rowmajor);
        for (int d = 0, j = 0; d < out->rank; d++) {
            if (out->dims[d] == 1) continue;
            int kd = d - (out->rank - in[k].rank);
            bool broadcast = kd < 0 || in[k].dims[kd] == 1;
            push->strides[k * BROADCAST_MAX_RANK + j] =
                broadcast ? 0 : (uint32_t)(v->permuted ? v->view_strides[kd] : rowmajor[kd]);
            j++;
        }
        push->base[k] = v->permuted ? (uint32_t)v->view_elem : 0;
    }
    for (int d = 0, j = 0; d < out->rank; d++)
        if (out->dims[d] != 1) push->dims[j++] = (uint32_t)out->dims[d];
    if (rank == 0) { /* one element */
        push->dims[0] = 1;
        rank = 1;
    }
    return rank;
}

static vki_status dispatch_where(op_ctx *c, const elementwise *e, const shape *shapes, const shape *out_shape,
                                 uint32_t count, const op_window *windows)
{
    broadcast_push push = {count, 0, {0}, {0}};
    int rank = collapse_broadcast(shapes, 3, out_shape, &push);
    if (rank > BROADCAST_MAX_RANK)
        return op_error(c, VKI_ERROR_UNSUPPORTED, BROADCAST_TOO_DEEP, rank, BROADCAST_MAX_RANK);
    uint32_t spec[2] = {128, (uint32_t)rank};
    int values[4] = {e->ins[0], e->ins[1], e->ins[2], op_out_index(c, 0)};
    /* X, Y and the output as halves, the condition as bool bytes: the 16-bit variant (windows
     * are in words, so windowed passes stay on the 32-bit one) */
    gpu_storage st = windows ? GPU_W32 : op_move_storage(c, values + 1, 3);
    gpu_storage stores[4] = {st == GPU_W32 || st == GPU_F64 ? GPU_W32 : GPU_BOOL, st, st, st};
    uint32_t gx, gy;
    op_grid_1d(count, 128, &gx, &gy);
    return op_dispatch_stored(c, op_variant(c, "where", st), spec, 2, &push, sizeof push, values, windows, stores, 4, gx,
                              gy, 1);
}

/* Whether a pass of binary_chain's bindings (A, B, C, Y) runs on binary_chain_cpu: CPU devices
 * (VKINFER_ELEMENTWISE_KERNELS=gpu|cpu overrides), float32 words throughout, the count and the
 * innermost dim of the pass multiples of 4 (an invocation's 4 outputs share one row), the
 * inputs within the device's texel buffers. */
static bool chain_cpu_ok(op_ctx *c, const int values[4], uint32_t count, const broadcast_push *push, int rank)
{
    if (!op_cpu_kernels(c, c->vk->opts.elementwise_kernels) || op_out(c, 0)->dtype != VKI_DTYPE_FLOAT || count % 4 ||
        (rank > 0 && push->dims[rank - 1] % 4))
        return false;
    for (int k = 0; k < 4; k++)
        if (op_storage(c, values[k]) != GPU_W32 ||
            (k < 3 && (uint64_t)op_bound_numel(c, values[k]) > c->vk->caps.props.limits.maxTexelBufferElements))
            return false;
    return true;
}

/* The pass on binary_chain_cpu (shaders/binary_chain_cpu.comp), spec as binary_chain takes it:
 * 4 outputs of a row per invocation, workgroups of 32, no grid stride. */
static vki_status dispatch_chain_cpu(op_ctx *c, uint32_t spec[10], const broadcast_push *push, const int values[4],
                                     uint32_t count)
{
    uint32_t gx, gy;
    spec[0] = 32;
    spec[9] = 0;
    op_grid_1d(count / 4, 32, &gx, &gy);
    return op_dispatch(c, "binary_chain_cpu", spec, 10, push, sizeof *push, values, 4, gx, gy, 1);
}

/* A float Add, Sub, Mul or Div of two inputs whose only reader is another of them, with a
 * value known now (a constant, or a node planned earlier) that broadcasts to the output without
 * growing it, and then maybe an activation: the reader (and the activation) claimed, both steps
 * in one binary_chain pass into this node's output (FiLM's x * scale + shift, ConvNeXt's layer
 * scale then residual Add; a permuted input read through its strides). Operands bound whole only.
 * *taken false: not this case. */
static vki_status dispatch_two_steps(op_ctx *c, const elementwise *e, const shape *shapes, const shape *out_shape,
                                     uint32_t count, bool *taken)
{
    *taken = false;
    int y = op_out_index(c, 0), k;
    int node = op_arithmetic_reader(c, y, &k);
    if (node < 0) node = op_square_reader(c, y, &k);
    if (node < 0) return VKI_OK;
    enum binary_code code2 = (enum binary_code)(B_ADD + k);
    const ir_node *nd = op_graph_node(c, node);
    if (nd->n_inputs != 2) return VKI_OK;
    /* the second node reads the result twice (a square: (x - mean)^2 in a variance): the
     * shader's SWAP2 2, binding 2 (unread) repeating input 0 */
    bool self = nd->inputs[0] == y && nd->inputs[1] == y;
    bool swap = !self && nd->inputs[1] == y;
    int other = self ? e->ins[0] : swap ? nd->inputs[0] : nd->inputs[1];
    plan_value *o = other >= 0 ? op_value(c, other) : NULL, *yv = op_out(c, 0);
    if (!self && (!o || !o->shaped || o->kind || o->dtype != yv->dtype || o->view_scale ||
                  !op_broadcasts_within(o, out_shape->dims, out_shape->rank))) /* broadcasting must not grow the output */
        return VKI_OK;
    uint64_t range = op_max_binding_bytes(c), elem = storage_size(yv->storage);
    if (!self && (uint64_t)shape_numel(o->dims, o->rank) * elem > range) return VKI_OK;
    shape three[3] = {shapes[0], shapes[1], shapes[0]};
    if (!self) {
        three[2] = (shape){o->rank, {0}};
        memcpy(three[2].dims, o->dims, sizeof o->dims);
    }
    broadcast_push push = {count, 0, {0}, {0}};
    int ins[3] = {e->ins[0], e->ins[1], other};
    bool strided = e->strided || o->permuted;
    int rank = strided ? strided_pass(c, ins, three, 3, out_shape, &push) : collapse_broadcast(three, 3, out_shape, &push);
    if (rank > BROADCAST_MAX_RANK) return VKI_OK;
    op_fuse_claim(c, node, y);
    float lo = -INFINITY, hi = INFINITY;
    bool act = op_fuse_activation_value(c, op_fused_output(c, node), &lo, &hi);
    *taken = true;
    int values[4] = {e->ins[0], e->ins[1], other, y};
    gpu_storage st = op_half_storage(c, values, 4), stores[4] = {st, st, st, st};
    uint32_t gx, gy;
    uint32_t spec[10] = {128, e->codes[1] - B_ADD, code2 - B_ADD, self ? 2u : swap, op_dtype_code(yv->dtype), (uint32_t)rank, act, 0, 0,
                         op_grid_elementwise(c, count, 128, &gx, &gy)};
    memcpy(&spec[7], &lo, sizeof lo);
    memcpy(&spec[8], &hi, sizeof hi);
    if (chain_cpu_ok(c, values, count, &push, rank)) return dispatch_chain_cpu(c, spec, &push, values, count);
    return op_dispatch_stored(c, op_variant(c, "binary_chain", st), spec, 10, &push, sizeof push, values, NULL, stores, 4,
                              gx, gy, 1);
}

/* Inputs 0 and 1 into the output; with more inputs (Sum, Max...), each further one is
 * combined with the partial result, which alternates between the two scratch values `temps`
 * (created on first use, of the output's full size). windows[k] is input k's window and
 * windows[n] the output's (and the scratch values'), or NULL. */
static vki_status dispatch_chain(op_ctx *c, const elementwise *e, const shape *shapes, const shape *out_shape,
                                 uint32_t count, const op_window *windows, int *temps)
{
    int n = e->n;
    vki_dtype out_dtype = op_out(c, 0)->dtype;
    int partial = e->ins[0];
    op_window partial_window = windows ? windows[0] : (op_window){0, 0};
    vki_dtype partial_dtype = op_value(c, e->ins[0])->dtype;
    shape partial_shape = shapes[0];
    /* float64 in double (binary_f64) where the device has shaderFloat64; in windows (tensors
     * beyond one binding, rare for float64) through fp32 words */
    bool wide = !windows && partial_dtype == VKI_DTYPE_DOUBLE && op_has_float64(c);
    for (int k = 1; k < n; k++) {
        bool last = k == n - 1;
        int target = op_out_index(c, 0);
        if (!last) {
            plan_value *y = op_out(c, 0);
            if (temps[k % 2] < 0) {
                VKI_TRY(op_temp(c, out_dtype, shape_numel(y->dims, y->rank), &temps[k % 2]));
                if (wide) op_value(c, temps[k % 2])->storage = GPU_F64;
            }
            target = temps[k % 2];
        }
        shape pair[2] = {partial_shape, shapes[k]};
        broadcast_push push = {count, e->param, {0}, {0}};
        int pair_ins[2] = {partial, e->ins[k]};
        int rank = e->strided ? strided_pass(c, pair_ins, pair, 2, out_shape, &push) : collapse_broadcast(pair, 2, out_shape, &push);
        if (rank > BROADCAST_MAX_RANK)
            return op_error(c, VKI_ERROR_UNSUPPORTED, BROADCAST_TOO_DEEP, rank, BROADCAST_MAX_RANK);
        plan_value *b = op_value(c, e->ins[k]);
        bool clamp = last && e->clamp;
        uint32_t gx, gy;
        uint32_t spec[10] = {128, e->codes[k], op_dtype_code(partial_dtype), op_dtype_code(b->dtype),
                             op_dtype_code(out_dtype), (uint32_t)rank, clamp, 0, 0,
                             op_grid_elementwise(c, count, 128, &gx, &gy)};
        memcpy(&spec[7], &e->lo, sizeof e->lo);
        memcpy(&spec[8], &e->hi, sizeof e->hi);
        int values[3] = {partial, e->ins[k], target};
        op_window pair_windows[3] = {partial_window, windows ? windows[k] : (op_window){0, 0},
                                     windows ? windows[n] : (op_window){0, 0}};
        if (wide) {
            bool b64 = b->dtype == VKI_DTYPE_DOUBLE, out64 = out_dtype == VKI_DTYPE_DOUBLE;
            spec[2] = OP_DTYPE_F64;
            spec[3] = b64 ? OP_DTYPE_F64 : op_dtype_code(b->dtype);
            spec[4] = out64 ? OP_DTYPE_F64 : op_dtype_code(out_dtype);
            gpu_storage stores[3] = {GPU_F64, b64 ? GPU_F64 : GPU_W32, out64 ? GPU_F64 : GPU_W32};
            VKI_TRY(op_dispatch_stored(c, "binary_f64", spec, 10, &push, sizeof push, values, NULL, stores,
                                       3, gx, gy, 1));
            partial = target;
            partial_dtype = out_dtype;
            partial_shape = *out_shape;
            continue;
        }
        /* CPU devices: a float32 Add, Sub, Mul or Div on binary_chain_cpu without its second
         * step (OP2 4), 4 outputs a row per invocation (binding 2 repeats A, unread) */
        int four[4] = {partial, e->ins[k], partial, target};
        if (!windows && e->codes[k] <= B_DIV && partial_dtype == VKI_DTYPE_FLOAT && b->dtype == VKI_DTYPE_FLOAT &&
            chain_cpu_ok(c, four, count, &push, rank)) {
            uint32_t chain_spec[10] = {0, e->codes[k] - B_ADD, 4, 0, op_dtype_code(out_dtype), (uint32_t)rank, clamp, spec[7],
                                       spec[8], 0};
            VKI_TRY(dispatch_chain_cpu(c, chain_spec, &push, four, count));
            partial = target;
            partial_dtype = out_dtype;
            partial_shape = *out_shape;
            continue;
        }
        /* halves in, halves out, one binding each: the 16-bit variant (windows are in words) */
        gpu_storage st = !windows && (e->codes[k] < B_EQUAL || e->codes[k] > B_GREATER_EQUAL) && dtype_is_float(out_dtype) ? op_half_storage(c, values, 3) : GPU_W32;
        gpu_storage stores[3] = {st, st, st};
        VKI_TRY(op_dispatch_stored(c, op_variant(c, "binary", st), spec, 10, &push, sizeof push, values,
                                   windows ? pair_windows : NULL, stores, 3, gx, gy, 1));
        partial = target;
        partial_window = pair_windows[2];
        partial_dtype = out_dtype;
        partial_shape = *out_shape;
    }
    return VKI_OK;
}

/* How a pass too large for one binding splits along the output's leading `depth` axes, seen
 * as `rows` rows: an input spanning those axes is windowed (row_bytes per row), one that is
 * broadcast along all of them (size 1 or absent there) is bound whole (row_bytes 0). */
typedef struct row_split {
    int depth;
    int64_t rows;
    uint64_t row_bytes[MAX_VARIADIC_INPUTS + 1]; /* inputs, then the output */
} row_split;

static bool split_rows_at(op_ctx *c, const shape *shapes, int n, const shape *out, int depth, row_split *s)
{
    s->depth = depth;
    s->rows = shape_numel(out->dims, depth);
    if (s->rows <= 1) return false;
    for (int k = 0; k < n; k++) {
        int lead = out->rank - shapes[k].rank; /* output axes the input lacks */
        bool spans = lead == 0, broadcast = true;
        for (int d = 0; d < depth; d++) {
            if (d < lead) continue;
            int64_t size = shapes[k].dims[d - lead];
            spans = spans && size == out->dims[d];
            broadcast = broadcast && size == 1;
        }
        if (spans) {
            s->row_bytes[k] = (uint64_t)(shape_numel(shapes[k].dims, shapes[k].rank) / s->rows) * 4;
        } else if (broadcast) {
            s->row_bytes[k] = 0;
            if ((uint64_t)shape_numel(shapes[k].dims, shapes[k].rank) * 4 > op_max_binding_bytes(c)) return false;
        } else {
            return false;
        }
    }
    s->row_bytes[n] = (uint64_t)(shape_numel(out->dims, out->rank) / s->rows) * 4;
    return true;
}

/* The shapes a dispatch over rows [.., .. + count) sees: the split axes become one of `count`. */
static void chunk_shapes(const shape *shapes, int n, const shape *out, const row_split *s, int64_t count,
                         shape *chunk, shape *chunk_out)
{
    chunk_out->rank = out->rank - s->depth + 1;
    chunk_out->dims[0] = count;
    memcpy(chunk_out->dims + 1, out->dims + s->depth, (size_t)(out->rank - s->depth) * sizeof *out->dims);
    for (int k = 0; k < n; k++) {
        int lead = out->rank - shapes[k].rank, skip = s->depth - lead < 0 ? 0 : s->depth - lead;
        if (s->row_bytes[k]) {
            chunk[k] = *chunk_out;
            memcpy(chunk[k].dims + 1, shapes[k].dims + s->depth, (size_t)(out->rank - s->depth) * sizeof *out->dims);
        } else { /* bound whole: its (size-1) dims among the split axes go */
            chunk[k].rank = shapes[k].rank - skip;
            memcpy(chunk[k].dims, shapes[k].dims + skip, (size_t)chunk[k].rank * sizeof *out->dims);
        }
    }
}

/* Records the pass; tensors larger than one binding run as several dispatches over windows
 * of rows of the output's leading axes (as few axes as work). */
static vki_status dispatch_elementwise(op_ctx *c, const elementwise *e, const shape *shapes, const shape *out_shape)
{
    int temps[2] = {-1, -1};
    int64_t count = shape_numel(out_shape->dims, out_shape->rank);
    row_split s;
    uint64_t range = op_max_binding_bytes(c);
    bool fits = (uint64_t)count * 4 <= range;
    for (int k = 0; k < e->n; k++) fits = fits && (uint64_t)shape_numel(shapes[k].dims, shapes[k].rank) * 4 <= range;
    if (fits) {
        if (e->where) return dispatch_where(c, e, shapes, out_shape, (uint32_t)count, NULL);
        return dispatch_chain(c, e, shapes, out_shape, (uint32_t)count, NULL, temps);
    }
    if (e->strided) return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: a strided pass larger than one binding");
    int64_t chunk = 0;
    for (int depth = 1; depth <= out_shape->rank && chunk <= 0; depth++)
        if (split_rows_at(c, shapes, e->n, out_shape, depth, &s)) chunk = op_batch_chunk(c, s.rows, s.row_bytes, e->n + 1);
    if (chunk <= 0)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "the tensors are larger than the device's maxStorageBufferRange (%llu bytes) "
                        "and do not split into windows along leading output axes: an input is broadcast along a leading "
                        "axis that another spans, an input bound whole is too large, or a window of rows cannot start "
                        "at a multiple of %llu bytes", (unsigned long long)range,
                        (unsigned long long)op_binding_alignment(c));
    for (int64_t start = 0; start < s.rows; start += chunk) {
        int64_t rows = s.rows - start < chunk ? s.rows - start : chunk;
        shape chunk_in[MAX_VARIADIC_INPUTS], chunk_out;
        op_window windows[MAX_VARIADIC_INPUTS + 1];
        chunk_shapes(shapes, e->n, out_shape, &s, rows, chunk_in, &chunk_out);
        for (int k = 0; k <= e->n; k++)
            windows[k] = (op_window){(uint64_t)start * s.row_bytes[k], (uint64_t)rows * s.row_bytes[k]};
        uint32_t chunk_count = (uint32_t)shape_numel(chunk_out.dims, chunk_out.rank);
        if (e->where) VKI_TRY(dispatch_where(c, e, chunk_in, &chunk_out, chunk_count, windows));
        else VKI_TRY(dispatch_chain(c, e, chunk_in, &chunk_out, chunk_count, windows, temps));
    }
    return VKI_OK;
}

static vki_status plan_binary(op_ctx *c)
{
    const binary_desc *d = find_desc(c->node->op_type);
    const char *op = c->node->op_type;
    int n = op_input_count(c);
    int fixed = d->code == B_WHERE ? 3 : 2;
    VKI_TRY(op_require_inputs(c, d->variadic ? 1 : fixed, d->variadic ? MAX_VARIADIC_INPUTS : fixed));
    for (int k = 0; k < n; k++) {
        if (!op_has_input(c, k)) return op_error(c, VKI_ERROR_MODEL, "input %d is required", k);
        VKI_TRY(op_require_gpu_dtype(c, k));
    }
    VKI_TRY(check_dtypes(c, d, n));

    enum binary_code code = d->code;
    if (!strcmp(op, "Mod")) {
        int64_t fmod_attr = ir_attr_int(c->node, "fmod", 0);
        if (fmod_attr != 0 && fmod_attr != 1) return op_error(c, VKI_ERROR_MODEL, "fmod must be 0 or 1, not %lld", (long long)fmod_attr);
        if (fmod_attr) code = B_FMOD;
    } else if (code == B_SHIFT_LEFT) {
        const char *direction = ir_attr_string(c->node, "direction", "");
        if (!strcmp(direction, "RIGHT")) code = B_SHIFT_RIGHT;
        else if (strcmp(direction, "LEFT"))
            return op_error(c, VKI_ERROR_MODEL, "direction must be LEFT or RIGHT, not '%s'", direction);
    }

    shape shapes[MAX_VARIADIC_INPUTS];
    for (int k = 0; k < n; k++) {
        plan_value *v = op_in(c, k);
        shapes[k].rank = v->rank;
        memcpy(shapes[k].dims, v->dims, sizeof shapes[k].dims);
    }
    if (d->legacy_bcast && c->opset < 7) VKI_TRY(legacy_broadcast(c, shapes));
    /* PRelu before opset 7: a 1-D slope of X's channel count applies along axis 1 */
    if (code == B_PRELU && c->opset < 7 && shapes[1].rank == 1 && shapes[0].rank >= 2 && shapes[1].dims[0] != 1 &&
        shapes[1].dims[0] == shapes[0].dims[1]) {
        shapes[1].rank = shapes[0].rank - 1;
        for (int dim = 1; dim < shapes[1].rank; dim++) shapes[1].dims[dim] = 1;
    }
    shape out_shape;
    if (!broadcast_shapes(shapes, n, &out_shape))
        return op_error(c, VKI_ERROR_SHAPE, "the input shapes do not broadcast together (numpy rules)");
    /* a Where made by src/onnx/expand.c to select by a condition computed on the GPU */
    if (code == B_WHERE && ir_attr_int(c->node, "vkinfer.select", 0) && !same_shape(&shapes[1], &shapes[2])) {
        char a[128], b[128];
        return op_error(c, VKI_ERROR_UNSUPPORTED,
                        "the values selected by a condition computed on the GPU (an If's two branches, or a Loop's state "
                        "before and after an iteration) have shapes %s and %s; vkinfer runs both and needs one shape",
                        shape_str(shapes[1].dims, shapes[1].rank, a, sizeof a), shape_str(shapes[2].dims, shapes[2].rank, b, sizeof b));
    }
    if (code == B_SWIGLU && !same_shape(&shapes[0], &shapes[1]))
        return op_error(c, VKI_ERROR_SHAPE, "A and B must have one shape (SwiGLU does not broadcast)");
    if (code == B_PRELU && !same_shape(&out_shape, &shapes[0]))
        return op_error(c, VKI_ERROR_SHAPE, "slope does not broadcast to X's shape (unidirectional broadcasting)");

    vki_dtype out_dtype = op_in(c, code == B_WHERE ? 1 : 0)->dtype;
    if ((code >= B_AND && code <= B_GREATER_EQUAL)) out_dtype = VKI_DTYPE_BOOL;
    VKI_TRY(op_set_output(c, 0, out_dtype, out_shape.rank, out_shape.dims));
    if (n == 1) return op_output_alias(c, 0, 0); /* Sum, Max... of one input */

    int64_t count = shape_numel(out_shape.dims, out_shape.rank);
    if (op_all_inputs_const(c) && count <= 4096) return fold_on_host(c, d, code, shapes, n, &out_shape);
    /* a scale read only by a MatMul (attention's q / sqrt(d), q * s and k * s) becomes the
     * product's alpha: the output is a scaled view of the input (op_product_reader decides the
     * same when a Transpose before it is made a view) */
    double s;
    if ((code == B_MUL || code == B_DIV) && n == 2 && dtype_is_float(out_dtype)) {
        if (op_const_scalar(c, 1, &s) && (code == B_MUL || s != 0) && op_output_scaled_view(c, 0, code == B_DIV ? 1 / s : s))
            return VKI_OK;
        if (code == B_MUL && op_const_scalar(c, 0, &s) && op_output_scaled_view(c, 1, s)) return VKI_OK;
    }
    if (count == 0) return VKI_OK;
    if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    elementwise e = {code == B_WHERE, n, {0}, {0}, (float)n, false, 0, 0};
    /* BitShift: the dtype's width in bits (int64 is held narrowed to int32) */
    if (code == B_SHIFT_LEFT || code == B_SHIFT_RIGHT) e.param = (float)(8 * vki_dtype_size(out_dtype));
    if (code == B_SWIGLU) e.param = ir_attr_float(c->node, "alpha", 1.0f);
    /* a permuted view (a Transpose that only this node reads: ConvNeXt's NHWC -> NCHW before
     * its layer scale) is read through its strides by one pass of two float inputs bound
     * whole; in any other case (a view whose scale was to be a constant and is not,
     * src/plan/op_fusion.c constant_scale) its elements are copied in row-major order first */
    int kept = 0; /* output dims of size > 1: the strided pass keeps each (strided_pass) */
    for (int dd = 0; dd < out_shape.rank; dd++) kept += out_shape.dims[dd] != 1;
    bool strided_ok = n == 2 && code >= B_ADD && code <= B_DIV && dtype_is_float(out_dtype) && !op_in(c, 0)->view_scale &&
                      !op_in(c, 1)->view_scale && bound_whole(c, op_in(c, 0)) && bound_whole(c, op_in(c, 1)) &&
                      (uint64_t)count * 4 <= op_max_binding_bytes(c) && !(d->legacy_bcast && c->opset < 7) &&
                      kept <= BROADCAST_MAX_RANK;
    for (int k = 0; k < n; k++) {
        e.ins[k] = op_in_index(c, k);
        if (op_in(c, k)->permuted && strided_ok) e.strided = true;
        else if (op_in(c, k)->permuted) VKI_TRY(op_contiguous_copy(c, op_in_index(c, k), &e.ins[k]));
        e.codes[k] = k == n - 1 && !strcmp(d->name, "Mean") ? B_MEAN_LAST : code;
    }
    /* a residual Add that only a LayerNormalization reads (transformer blocks): one norm_rows
     * pass normalizes the sum */
    if (code == B_ADD && n == 2 && dtype_is_float(out_dtype) && same_shape(&shapes[0], &out_shape) &&
        same_shape(&shapes[1], &out_shape)) {
        bool taken;
        VKI_TRY(norm_fuse_add(c, &taken));
        if (taken) return VKI_OK;
    }
    /* and a second such op after it, in the same pass */
    if (code >= B_ADD && code <= B_DIV && n == 2 && dtype_is_float(out_dtype) && out_dtype != VKI_DTYPE_DOUBLE &&
        (uint64_t)count * 4 <= op_max_binding_bytes(c) && bound_whole(c, op_value(c, e.ins[0])) &&
        bound_whole(c, op_value(c, e.ins[1]))) {
        bool taken;
        VKI_TRY(dispatch_two_steps(c, &e, shapes, &out_shape, (uint32_t)count, &taken));
        if (taken) return VKI_OK;
    }
    /* a Relu or Clip after Add, Sub, Mul or Div of floats (the residual Add + Relu of ResNets)
     * is applied by this kernel instead of a pass of its own */
    if (code >= B_ADD && code <= B_DIV && n == 2 && dtype_is_float(out_dtype))
        e.clamp = op_fuse_clamp(c, 0, &e.lo, &e.hi);
    return dispatch_elementwise(c, &e, shapes, &out_shape);
}

#define FLOATS OP_DTYPES_FLOAT
#define INTS OP_DTYPES_INT
#define BINARY(name_, dtypes_) const op_def op_##name_ = {#name_, "", dtypes_, "", plan_binary};
BINARY(Add, FLOATS " " INTS) BINARY(Sub, FLOATS " " INTS) BINARY(Mul, FLOATS " " INTS) BINARY(Div, FLOATS " " INTS)
BINARY(SwiGLU, FLOATS) BINARY(Mod, FLOATS " " INTS) BINARY(BitShift, INTS) BINARY(BitwiseAnd, INTS) BINARY(BitwiseOr, INTS)
BINARY(BitwiseXor, INTS) BINARY(And, "bool") BINARY(Or, "bool") BINARY(Xor, "bool")
BINARY(Equal, FLOATS " " INTS " bool") BINARY(Less, FLOATS " " INTS) BINARY(LessOrEqual, FLOATS " " INTS)
BINARY(Greater, FLOATS " " INTS) BINARY(GreaterOrEqual, FLOATS " " INTS) BINARY(Max, FLOATS " " INTS)
BINARY(Min, FLOATS " " INTS) BINARY(Sum, FLOATS) BINARY(Mean, FLOATS) BINARY(PRelu, FLOATS " " INTS)
BINARY(Where, FLOATS " " INTS " bool")
const op_def op_Pow = {"Pow", "", FLOATS " " INTS, "the output has the base's dtype; the exponent may be any number", plan_binary};

vki_status binary_add_strided(op_ctx *c, int a, const int64_t *a_strides, int b, int out, const int64_t *dims, int rank,
                              gpu_storage st, bool clamp, float lo, float hi)
{
    int64_t count = shape_numel(dims, rank);
    if (rank < 1 || rank > BROADCAST_MAX_RANK || count > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "internal: a strided Add of rank %d and %lld elements", rank, (long long)count);
    broadcast_push push = {(uint32_t)count, 0, {0}, {0}};
    int64_t stride = 1;
    for (int j = rank - 1; j >= 0; j--) {
        push.dims[j] = (uint32_t)dims[j];
        push.strides[j] = (uint32_t)a_strides[j];
        push.strides[BROADCAST_MAX_RANK + j] = (uint32_t)stride;
        stride *= dims[j];
    }
    vki_dtype dt = op_value(c, out)->dtype;
    uint32_t gx, gy;
    uint32_t spec[10] = {128, B_ADD, op_dtype_code(dt), op_dtype_code(dt), op_dtype_code(dt), (uint32_t)rank, clamp, 0, 0,
                         op_grid_elementwise(c, (uint64_t)count, 128, &gx, &gy)};
    memcpy(&spec[7], &lo, sizeof lo);
    memcpy(&spec[8], &hi, sizeof hi);
    int values[3] = {a, b, out};
    gpu_storage stores[3] = {st, st, st};
    return op_dispatch_stored(c, op_variant(c, "binary", st), spec, 10, &push, sizeof push, values, NULL, stores,
                              3, gx, gy, 1);
}

vki_status binary_clip_runtime(op_ctx *c)
{
    plan_value *x = op_in(c, 0);
    int64_t count = shape_numel(x->dims, x->rank);
    if (count == 0) return VKI_OK;
    if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    for (int k = 1; k <= 2; k++)
        if (op_has_input(c, k) && (op_in(c, k)->rank != 0 || op_in(c, k)->dtype != x->dtype))
            return op_error(c, VKI_ERROR_SHAPE, "min and max must be scalars of the input's dtype");
    /* Max(x, min), then Min(that, max) */
    elementwise e = {false, 1, {op_in_index(c, 0)}, {0}, 0};
    shape shapes[3] = {{x->rank, {0}}};
    memcpy(shapes[0].dims, x->dims, sizeof shapes[0].dims);
    for (int k = 1; k <= 2; k++) {
        if (!op_has_input(c, k)) continue;
        shapes[e.n] = (shape){0, {0}};
        e.codes[e.n] = k == 1 ? B_MAX : B_MIN;
        e.ins[e.n++] = op_in_index(c, k);
    }
    return dispatch_elementwise(c, &e, shapes, &shapes[0]);
}
