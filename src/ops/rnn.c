/* The recurrent ops RNN, GRU and LSTM (shaders/rnn.glsl). The input projections X * W^T + Wb
 * of every step run first as one dispatch (rnn_proj); then each time step is one dispatch
 * (rnn_step; two for GRU with linear_before_reset 0, which needs r * h_prev of every hidden
 * unit before the candidate gate), recorded at plan time since the sequence length is known
 * then. Both directions of a bidirectional op advance in the same dispatches. */
#include "op.h"

#include <string.h>
#include <strings.h>

enum rnn_kind { RNN, GRU, LSTM }; /* keep in step with shaders/rnn.glsl */

/* flags of rnn_step's push constants (shaders/rnn.glsl) */
enum {
    F_B = 1, F_LENS = 2, F_H0 = 4, F_C0 = 8, F_P = 16, F_LAYOUT1 = 32, F_Y = 64, F_YH = 128,
    F_YC = 256, F_REVERSE = 512, F_CLIP = 1024,
};

static const struct {
    const char *name;
    float alpha, beta; /* defaults, as the ONNX operators of those names */
    bool uses_alpha, uses_beta;
} activations[] = {
    {"Relu", 0, 0, false, false},        {"Tanh", 0, 0, false, false},
    {"Sigmoid", 0, 0, false, false},     {"Affine", 1.0f, 0.0f, true, true},
    {"LeakyRelu", 0.01f, 0, true, false}, {"ThresholdedRelu", 1.0f, 0, true, false},
    {"ScaledTanh", 1.0f, 1.0f, true, true}, {"HardSigmoid", 0.2f, 0.5f, true, true},
    {"Elu", 1.0f, 0, true, false},       {"Softsign", 0, 0, false, false},
    {"Softplus", 0, 0, false, false},
};

/* Checks that value `v` is `dtype`[d0, d1, d2] (rank 3) or [d0, d1] (d2 < 0). */
static vki_status check_shape(op_ctx *c, int i, const char *what, vki_dtype dtype, int64_t d0, int64_t d1, int64_t d2)
{
    plan_value *v = op_in(c, i);
    int rank = d2 < 0 ? 2 : 3;
    int64_t want[3] = {d0, d1, d2};
    bool ok = v->dtype == dtype && v->rank == rank;
    for (int k = 0; ok && k < rank; k++) ok = v->dims[k] == want[k];
    if (ok) return VKI_OK;
    char a[96], b[96];
    return op_error(c, VKI_ERROR_SHAPE, "%s must be %s%s, not %s%s", what, vki_dtype_name(dtype),
                    shape_str(want, rank, a, sizeof a), vki_dtype_name(v->dtype), shape_str(v->dims, v->rank, b, sizeof b));
}

static vki_status plan_rnn(op_ctx *c)
{
    const char *op = c->node->op_type;
    enum rnn_kind kind = !strcmp(op, "RNN") ? RNN : !strcmp(op, "GRU") ? GRU : LSTM;
    int gates = kind == RNN ? 1 : kind == GRU ? 3 : 4, n_acts = kind == RNN ? 1 : kind == GRU ? 2 : 3;
    VKI_TRY(op_require_inputs(c, 3, kind == LSTM ? 8 : 6));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    VKI_TRY(op_require_float(c, 0));
    plan_value *x = op_in(c, 0), *r = op_in(c, 2);
    char a[96];
    if (x->rank != 3) return op_error(c, VKI_ERROR_SHAPE, "X must have rank 3, not %d", x->rank);
    int64_t layout = ir_attr_int(c->node, "layout", 0);
    if (layout != 0 && layout != 1) return op_error(c, VKI_ERROR_MODEL, "layout must be 0 or 1, not %lld", (long long)layout);
    const char *direction = ir_attr_string(c->node, "direction", "forward");
    int D = !strcmp(direction, "bidirectional") ? 2 : 1;
    if (D == 1 && strcmp(direction, "forward") && strcmp(direction, "reverse"))
        return op_error(c, VKI_ERROR_MODEL, "direction must be forward, reverse or bidirectional, not '%s'", direction);
    int64_t S = layout ? x->dims[1] : x->dims[0], N = layout ? x->dims[0] : x->dims[1], I = x->dims[2];
    if (r->rank != 3) return op_error(c, VKI_ERROR_SHAPE, "R must have rank 3, not %d", r->rank);
    int64_t H = r->dims[2];
    int64_t hidden_attr = ir_attr_int(c->node, "hidden_size", H);
    if (hidden_attr != H)
        return op_error(c, VKI_ERROR_SHAPE, "hidden_size %lld differs from R's last dim %lld", (long long)hidden_attr, (long long)H);
    int64_t GH = gates * H;
    VKI_TRY(check_shape(c, 1, "W", x->dtype, D, GH, I));
    VKI_TRY(check_shape(c, 2, "R", x->dtype, D, GH, H));
    bool has_b = op_has_input(c, 3), has_lens = op_has_input(c, 4), has_h0 = op_has_input(c, 5);
    bool has_c0 = kind == LSTM && op_has_input(c, 6), has_p = kind == LSTM && op_has_input(c, 7);
    if (has_b) VKI_TRY(check_shape(c, 3, "B", x->dtype, D, 2 * GH, -1));
    if (has_lens) {
        plan_value *l = op_in(c, 4);
        if (l->dtype != VKI_DTYPE_INT32 || l->rank != 1 || l->dims[0] != N)
            return op_error(c, VKI_ERROR_SHAPE, "sequence_lens must be int32[%lld], not %s%s", (long long)N,
                            vki_dtype_name(l->dtype), shape_str(l->dims, l->rank, a, sizeof a));
        if (op_input_is_const(c, 4)) { /* the kernel trusts lengths in [0, S] */
            int64_t lens[1024];
            int count;
            if (N <= 1024) {
                VKI_TRY(op_const_ints(c, 4, lens, 1024, &count));
                for (int k = 0; k < count; k++)
                    if (lens[k] < 0 || lens[k] > S)
                        return op_error(c, VKI_ERROR_MODEL, "sequence_lens[%d] = %lld is outside [0, %lld]", k,
                                        (long long)lens[k], (long long)S);
            }
        }
    }
    int64_t s0 = layout ? N : D, s1 = layout ? D : N;
    if (has_h0) VKI_TRY(check_shape(c, 5, "initial_h", x->dtype, s0, s1, H));
    if (has_c0) VKI_TRY(check_shape(c, 6, "initial_c", x->dtype, s0, s1, H));
    if (has_p) VKI_TRY(check_shape(c, 7, "P", x->dtype, D, 3 * H, -1));
    if (kind == GRU && ir_attr_int(c->node, "linear_before_reset", 0) > 1)
        return op_error(c, VKI_ERROR_MODEL, "linear_before_reset must be 0 or 1");
    bool lbr = kind == GRU && ir_attr_int(c->node, "linear_before_reset", 0) != 0;
    bool input_forget = kind == LSTM && ir_attr_int(c->node, "input_forget", 0) != 0;

    /* activations: n_acts per direction (one set given for two directions serves both);
     * alphas and betas are consumed in order by the activations that take them */
    struct { uint32_t s, S, N, H, D, flags, acts; float clip, alpha[6], beta[6]; } push = {0};
    const ir_attr *acts = ir_find_attr(c->node, "activations");
    const ir_attr *alphas = ir_find_attr(c->node, "activation_alpha"), *betas = ir_find_attr(c->node, "activation_beta");
    int n_given = acts && acts->type == ATTR_STRINGS ? acts->count : 0;
    if (n_given && n_given != n_acts && n_given != n_acts * D)
        return op_error(c, VKI_ERROR_MODEL, "activations lists %d functions; %s with %d direction(s) takes %d", n_given, op, D,
                        n_acts * D);
    static const char *const defaults[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    int used_alpha = 0, used_beta = 0;
    for (int d = 0; d < D; d++)
        for (int k = 0; k < n_acts; k++) {
            const char *name = n_given ? acts->strings[(n_given == n_acts ? 0 : d * n_acts) + k] : defaults[kind][k];
            int code = -1;
            for (int m = 0; m < (int)(sizeof activations / sizeof *activations); m++)
                if (!strcasecmp(name, activations[m].name)) code = m;
            if (code < 0)
                return op_error(c, VKI_ERROR_UNSUPPORTED, "activation '%s' is not supported (Relu, Tanh, Sigmoid, Affine, "
                                "LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus are)", name);
            int slot = d * 3 + k;
            push.acts |= (uint32_t)code << (4 * slot);
            push.alpha[slot] = activations[code].alpha;
            push.beta[slot] = activations[code].beta;
            if (n_given && activations[code].uses_alpha && alphas && alphas->type == ATTR_FLOATS && used_alpha < alphas->count)
                push.alpha[slot] = alphas->floats[used_alpha++];
            if (n_given && activations[code].uses_beta && betas && betas->type == ATTR_FLOATS && used_beta < betas->count)
                push.beta[slot] = betas->floats[used_beta++];
        }
    const ir_attr *clip = ir_find_attr(c->node, "clip");
    if (clip && clip->type != ATTR_FLOAT) return op_error(c, VKI_ERROR_MODEL, "clip must be a float");

    /* outputs */
    bool want_y = op_has_output(c, 0), want_yh = op_has_output(c, 1), want_yc = kind == LSTM && op_has_output(c, 2);
    int64_t ydims[4] = {S, D, N, H}, ydims1[4] = {N, S, D, H}, hdims[3] = {s0, s1, H};
    if (want_y) VKI_TRY(op_set_output(c, 0, x->dtype, 4, layout ? ydims1 : ydims));
    if (want_yh) VKI_TRY(op_set_output(c, 1, x->dtype, 3, hdims));
    if (want_yc) VKI_TRY(op_set_output(c, 2, x->dtype, 3, hdims));
    if (S == 0 || N == 0 || H == 0)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "an empty sequence, batch or hidden size (X %s, hidden %lld) is not supported",
                        shape_str(x->dims, x->rank, a, sizeof a), (long long)H);
    if ((uint64_t)D * S * N * GH > UINT32_MAX || (uint64_t)S * N * I > UINT32_MAX || (uint64_t)D * GH * I > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");

    uint32_t dt = op_dtype_code(x->dtype);
    int dummy, xp, st;
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, 1, &dummy));
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, D * S * N * GH, &xp));
    /* the state (shaders/rnn.glsl): h twice, c, r * h_prev, recurrent biases, peepholes, lengths */
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, 4 * D * N * H + D * GH + 3 * D * H + N, &st));
    gpu_storage w32[4] = {GPU_W32, GPU_W32, GPU_W32, GPU_W32};
    uint32_t spec[7] = {64, kind, dt, lbr, 0, input_forget, 0};
    uint32_t gx, gy;

    /* the state: h and c from initial_h and initial_c; then the recurrent biases, lengths and
     * peepholes (two dispatches, so that each binds at most four buffers) */
    uint32_t flags = (has_b ? F_B : 0) | (has_lens ? F_LENS : 0) | (has_h0 ? F_H0 : 0) | (has_c0 ? F_C0 : 0) |
                     (has_p ? F_P : 0) | (layout ? F_LAYOUT1 : 0) | (want_yh ? F_YH : 0) | (want_yc ? F_YC : 0);
    struct { uint32_t S, N, H, D, flags; } ipush = {(uint32_t)S, (uint32_t)N, (uint32_t)H, (uint32_t)D, flags};
    int ivalues[4] = {has_h0 ? op_in_index(c, 5) : dummy, has_c0 ? op_in_index(c, 6) : dummy, dummy, st};
    op_grid_1d((uint64_t)D * N * H, 64, &gx, &gy);
    VKI_TRY(op_dispatch_stored(c, "rnn_init", spec, 7, &ipush, sizeof ipush, ivalues, NULL, w32, 4, gx, gy, 1));
    int64_t init_count = D * GH;
    if (3 * D * H > init_count) init_count = 3 * D * H;
    if (N > init_count) init_count = N;
    spec[6] = 1;
    int pvalues_init[4] = {has_b ? op_in_index(c, 3) : dummy, has_lens ? op_in_index(c, 4) : dummy,
                           has_p ? op_in_index(c, 7) : dummy, st};
    op_grid_1d((uint64_t)init_count, 64, &gx, &gy);
    VKI_TRY(op_dispatch_stored(c, "rnn_init", spec, 7, &ipush, sizeof ipush, pvalues_init, NULL, w32, 4, gx, gy, 1));
    spec[6] = 0;

    struct { uint32_t S, N, I, H, D, layout1, has_b; } ppush = {(uint32_t)S, (uint32_t)N, (uint32_t)I, (uint32_t)H,
                                                                 (uint32_t)D, (uint32_t)layout, has_b};
    int pvalues[4] = {op_in_index(c, 0), op_in_index(c, 1), has_b ? op_in_index(c, 3) : dummy, xp};
    op_grid_1d((uint64_t)D * S * N * GH, 64, &gx, &gy);
    VKI_TRY(op_dispatch_stored(c, "rnn_proj", spec, 6, &ppush, sizeof ppush, pvalues, NULL, w32, 4, gx, gy, 1));

    push.S = (uint32_t)S, push.N = (uint32_t)N, push.H = (uint32_t)H, push.D = (uint32_t)D;
    push.flags = (layout ? F_LAYOUT1 : 0) | (want_y ? F_Y : 0) | (!strcmp(direction, "reverse") ? F_REVERSE : 0) |
                 (clip ? F_CLIP : 0);
    push.clip = clip ? clip->f : 0;
    int values[4] = {xp, op_in_index(c, 2), st, want_y ? op_out_index(c, 0) : dummy};
    op_grid_1d((uint64_t)D * N * H, 64, &gx, &gy);
    for (int64_t s = 0; s < S; s++) {
        push.s = (uint32_t)s;
        if (kind == GRU && !lbr) {
            spec[4] = 0;
            VKI_TRY(op_dispatch_stored(c, "rnn_step", spec, 6, &push, sizeof push, values, NULL, w32, 4, gx, gy, 1));
            spec[4] = 1;
        }
        VKI_TRY(op_dispatch_stored(c, "rnn_step", spec, 6, &push, sizeof push, values, NULL, w32, 4, gx, gy, 1));
    }
    if (want_yh || want_yc) {
        int fvalues[3] = {st, want_yh ? op_out_index(c, 1) : dummy, want_yc ? op_out_index(c, 2) : dummy};
        VKI_TRY(op_dispatch_stored(c, "rnn_final", spec, 3, &ipush, sizeof ipush, fvalues, NULL, w32, 3, gx, gy, 1));
    }
    return VKI_OK;
}

#define FLOATS OP_DTYPES_FLOAT
#define RNN_NOTES "computes in fp32; sequence_lens outside [0, seq_length] are clamped on the GPU"
const op_def op_RNN = {"RNN", "", FLOATS, RNN_NOTES, plan_rnn};
const op_def op_GRU = {"GRU", "", FLOATS, RNN_NOTES, plan_rnn};
const op_def op_LSTM = {"LSTM", "", FLOATS, RNN_NOTES, plan_rnn};
