/* Einsum of one or two operands (explicit or implicit output, ellipsis broadcasting, repeated
 * labels for diagonals): one general shader (shaders/einsum.comp), one invocation per output
 * element. Small constant inputs are folded on the host. */
#include "op.h"

#include <ctype.h>
#include <string.h>

#define FOLD_MAX_ELEMENTS 4096
#define N_LETTERS 52             /* A-Z then a-z */
#define N_LABELS (N_LETTERS + VKI_MAX_RANK) /* letters, then the ellipsis' dimensions */
#define MAX_SUM_LABELS 16

typedef struct einsum_plan {
    int n_out, n_sum;
    int label[N_LABELS];  /* output labels, then contracted ones */
    int64_t size[N_LABELS];  /* by position in label[] */
    int64_t stride[2][N_LABELS];
} einsum_plan;

static int letter_id(char ch) { return isupper((unsigned char)ch) ? ch - 'A' : ch - 'a' + 26; }

/* Checks one term's syntax: the number of letters, -1 on an error. */
static int count_letters(const char *s, size_t len, bool *has_ellipsis)
{
    int letters = 0;
    *has_ellipsis = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (*has_ellipsis || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.') return -1;
            *has_ellipsis = true;
            i += 2;
        } else if (isalpha((unsigned char)s[i])) {
            letters++;
        } else if (s[i] != ' ') {
            return -1;
        }
    }
    return letters;
}

/* Labels one term's dimensions: its ellipsis covers e dims, which get the labels
 * N_LETTERS + (ellipsis_rank - e) .. (aligned right across operands). Returns the dims. */
static int label_term(const char *s, size_t len, int e, int ellipsis_rank, int *dims_label)
{
    int d = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            for (int k = 0; k < e; k++) dims_label[d++] = N_LETTERS + (ellipsis_rank - e) + k;
            i += 2;
        } else if (isalpha((unsigned char)s[i])) {
            dims_label[d++] = letter_id(s[i]);
        }
    }
    return d;
}

static vki_status build_plan(op_ctx *c, const char *eq, int n_ops, einsum_plan *p, int64_t *out_dims, int *out_rank)
{
    const char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
    const char *term[2];
    size_t term_len[2];
    int n_terms = 0;
    for (size_t start = 0, i = 0; i <= lhs_len; i++)
        if (i == lhs_len || eq[i] == ',') {
            if (n_terms == 2) return op_error(c, VKI_ERROR_UNSUPPORTED, "einsum of more than 2 operands is not supported");
            term[n_terms] = eq + start;
            term_len[n_terms++] = i - start;
            start = i + 1;
        }
    if (n_terms != n_ops)
        return op_error(c, VKI_ERROR_MODEL, "equation '%s' has %d operands, the node %d inputs", eq, n_terms, n_ops);
    int dims_label[2][VKI_MAX_RANK + N_LETTERS];
    int64_t label_size[N_LABELS];
    int count[N_LABELS] = {0};
    bool any_ellipsis = false;
    int ellipsis_rank = 0;
    for (int k = 0; k < N_LABELS; k++) label_size[k] = -1;
    for (int o = 0; o < n_ops; o++) { /* the ellipsis covers the most dims any operand gives it */
        bool has;
        int letters = count_letters(term[o], term_len[o], &has);
        if (letters < 0 || (has && op_in(c, o)->rank < letters))
            return op_error(c, VKI_ERROR_MODEL, "cannot parse einsum equation '%s' for these ranks", eq);
        if (has && op_in(c, o)->rank - letters > ellipsis_rank) ellipsis_rank = op_in(c, o)->rank - letters;
    }
    for (int o = 0; o < n_ops; o++) {
        plan_value *v = op_in(c, o);
        bool has;
        int letters = count_letters(term[o], term_len[o], &has);
        int nd = label_term(term[o], term_len[o], has ? v->rank - letters : 0, ellipsis_rank, dims_label[o]);
        if (nd != v->rank)
            return op_error(c, VKI_ERROR_SHAPE, "term %d of '%s' does not match the rank %d of input %d", o, eq, v->rank, o);
        any_ellipsis |= has;
        for (int d = 0; d < nd; d++) {
            int l = dims_label[o][d];
            count[l]++;
            if (label_size[l] < 0 || label_size[l] == 1) label_size[l] = v->dims[d];
            else if (v->dims[d] != 1 && v->dims[d] != label_size[l])
                return op_error(c, VKI_ERROR_SHAPE, "label of dimension %d of input %d has size %lld, elsewhere %lld", d, o,
                                (long long)v->dims[d], (long long)label_size[l]);
        }
    }
    int out_labels[N_LABELS], n_out = 0;
    bool in_out[N_LABELS] = {false};
    if (arrow) {
        bool has;
        int letters = count_letters(arrow + 2, strlen(arrow + 2), &has);
        if (letters < 0 || letters + (has ? ellipsis_rank : 0) > N_LABELS)
            return op_error(c, VKI_ERROR_MODEL, "cannot parse the output of einsum equation '%s'", eq);
        int nd = label_term(arrow + 2, strlen(arrow + 2), has ? ellipsis_rank : 0, ellipsis_rank, out_labels);
        if (nd < 0) return op_error(c, VKI_ERROR_MODEL, "cannot parse the output of einsum equation '%s'", eq);
        n_out = nd;
    } else { /* implicit: the ellipsis, then the letters used once, in ASCII order */
        if (any_ellipsis)
            for (int k = 0; k < ellipsis_rank; k++) out_labels[n_out++] = N_LETTERS + k;
        for (int l = 0; l < N_LETTERS; l++)
            if (count[l] == 1) out_labels[n_out++] = l;
    }
    if (n_out > VKI_MAX_RANK) return op_error(c, VKI_ERROR_UNSUPPORTED, "output rank %d exceeds %d", n_out, VKI_MAX_RANK);
    memset(p, 0, sizeof *p);
    for (int k = 0; k < n_out; k++) {
        int l = out_labels[k];
        if (label_size[l] < 0 || in_out[l])
            return op_error(c, VKI_ERROR_MODEL, "output label %d of '%s' is repeated or not in any input", k, eq);
        in_out[l] = true;
        p->label[p->n_out++] = l;
        out_dims[k] = label_size[l];
    }
    *out_rank = n_out;
    for (int l = 0; l < N_LABELS; l++)
        if (label_size[l] >= 0 && !in_out[l]) {
            if (p->n_sum == MAX_SUM_LABELS)
                return op_error(c, VKI_ERROR_UNSUPPORTED, "more than %d contracted labels", MAX_SUM_LABELS);
            p->label[p->n_out + p->n_sum++] = l;
        }
    for (int k = 0; k < p->n_out + p->n_sum; k++) {
        int l = p->label[k];
        p->size[k] = label_size[l];
        for (int o = 0; o < n_ops; o++) {
            plan_value *v = op_in(c, o);
            int64_t stride = 1;
            for (int d = v->rank - 1; d >= 0; d--) {
                if (dims_label[o][d] == l && v->dims[d] != 1) p->stride[o][k] += stride;
                stride *= v->dims[d];
            }
        }
    }
    return VKI_OK;
}

static void fold_on_host(op_ctx *c, const einsum_plan *p, int n_ops, int64_t out_count, int64_t sum_count)
{
    plan_value *a = op_in(c, 0), *b = n_ops == 2 ? op_in(c, 1) : NULL;
    void *out = op_output_host(c, 0);
    bool is_float = dtype_is_float(a->dtype);
    for (int64_t i = 0; i < out_count; i++) {
        int64_t base[2] = {0, 0}, rest = i;
        for (int k = p->n_out - 1; k >= 0; k--) {
            int64_t coord = rest % p->size[k];
            rest /= p->size[k];
            base[0] += coord * p->stride[0][k];
            base[1] += coord * p->stride[1][k];
        }
        double acc = 0;
        int64_t iacc = 0;
        for (int64_t s = 0; s < sum_count; s++) {
            int64_t at[2] = {base[0], base[1]}, r = s;
            for (int k = p->n_out + p->n_sum - 1; k >= p->n_out; k--) {
                int64_t coord = r % p->size[k];
                r /= p->size[k];
                at[0] += coord * p->stride[0][k];
                at[1] += coord * p->stride[1][k];
            }
            if (is_float) acc += host_read_f64(a->dtype, a->host, (size_t)at[0]) * (b ? host_read_f64(b->dtype, b->host, (size_t)at[1]) : 1);
            else iacc += host_read_i64(a->dtype, a->host, (size_t)at[0]) * (b ? host_read_i64(b->dtype, b->host, (size_t)at[1]) : 1);
        }
        if (is_float) host_write_f64(a->dtype, out, (size_t)i, acc);
        else host_write_i64(a->dtype, out, (size_t)i, iacc);
    }
}

static vki_status plan_einsum(op_ctx *c)
{
    int n_ops = op_input_count(c);
    if (n_ops < 1) return op_error(c, VKI_ERROR_MODEL, "needs at least one input");
    if (n_ops > 2) return op_error(c, VKI_ERROR_UNSUPPORTED, "einsum of %d operands is not supported (at most 2)", n_ops);
    VKI_TRY(op_require_inputs(c, n_ops, n_ops));
    for (int o = 0; o < n_ops; o++) {
        VKI_TRY(op_require_gpu_dtype(c, o));
        if (op_in(c, o)->dtype != op_in(c, 0)->dtype) return op_error(c, VKI_ERROR_MODEL, "inputs must share one dtype");
    }
    vki_dtype dt = op_in(c, 0)->dtype;
    if (dt == VKI_DTYPE_BOOL) return op_error(c, VKI_ERROR_UNSUPPORTED, "Einsum does not take bool");
    const char *eq = ir_attr_string(c->node, "equation", NULL);
    if (!eq) return op_error(c, VKI_ERROR_MODEL, "needs the 'equation' attribute");
    einsum_plan p;
    int64_t out_dims[VKI_MAX_RANK];
    int out_rank = 0;
    VKI_TRY(build_plan(c, eq, n_ops, &p, out_dims, &out_rank));
    VKI_TRY(op_set_output(c, 0, dt, out_rank, out_dims));
    int64_t out_count = shape_numel(out_dims, out_rank), sum_count = shape_numel(p.size + p.n_out, p.n_sum);
    if (op_all_inputs_const(c) && out_count * (sum_count ? sum_count : 1) <= FOLD_MAX_ELEMENTS * 16) {
        fold_on_host(c, &p, n_ops, out_count, sum_count);
        return VKI_OK;
    }
    for (int o = 0; o < n_ops; o++) {
        plan_value *v = op_in(c, o);
        if ((uint64_t)shape_numel(v->dims, v->rank) * 4 > op_max_binding_bytes(c) || shape_numel(v->dims, v->rank) > INT32_MAX)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "input %d is larger than one storage binding", o);
    }
    if (out_count > UINT32_MAX || sum_count > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 output elements or contracted combinations");
    int table;
    int n_labels = p.n_out + p.n_sum;
    int32_t *t = op_temp_const(c, VKI_DTYPE_INT32, n_labels ? 3 * n_labels : 3, &table);
    if (!t) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int k = 0; k < n_labels; k++) {
        t[3 * k] = (int32_t)p.size[k];
        t[3 * k + 1] = (int32_t)p.stride[0][k];
        t[3 * k + 2] = (int32_t)p.stride[1][k];
    }
    struct { uint32_t count; int32_t n_out, n_sum; uint32_t sum_count; } push = {
        (uint32_t)out_count, p.n_out, p.n_sum, (uint32_t)sum_count};
    uint32_t spec[3] = {128, op_dtype_code(dt), (uint32_t)n_ops};
    int values[4] = {op_in_index(c, 0), op_in_index(c, n_ops - 1), table, op_out_index(c, 0)};
    uint32_t gx, gy;
    op_grid_1d((uint64_t)out_count, 128, &gx, &gy);
    return op_dispatch(c, "einsum", spec, 3, &push, sizeof push, values, 4, gx, gy, 1);
}

const op_def op_Einsum = {"Einsum", "", "float32 float16 bfloat16 int8 int16 int32 int64 uint8 uint16",
                          "one or two operands; one invocation per output element (no tiling)", plan_einsum};
