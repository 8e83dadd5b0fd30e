/* Gradient (ai.onnx.preview.training): dy/dx for each x of xs, by symbolic differentiation at
 * plan time. The forward nodes between xs and y are planned already (they come before the
 * Gradient node); walking them backwards from y, each records its backward step as GPU
 * dispatches (shaders/gradient.comp for element-wise ops, with numpy broadcasting summed back
 * to the operand's shape; shaders/gradient_matmul.comp for MatMul) into one accumulator per
 * value. y's gradient is seeded with ones, so a non-scalar y gives the gradient of its sum. */
#include "op.h"

#include "op.h"
#include "../plan/plan.h"

#include <stdlib.h>
#include <string.h>

enum { G_PASS = 0, G_NEG, G_MUL_A, G_MUL_B, G_DIV_A, G_DIV_B, G_RELU, G_SIGMOID, G_TANH, G_EXP, G_ZERO };

typedef struct backward {
    op_ctx *c;
    int *grad; /* per graph value: its accumulator (a scratch value), or -1 */
} backward;

/* A forward value a backward step reads: float32, computed, held as its own elements. */
static vki_status readable(op_ctx *c, const ir_node *n, int v)
{
    plan_value *pv = op_value(c, v);
    const char *name = c->plan->graph->values[v].name;
    if (!pv->shaped)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "'%s' (read by node '%s', %s) is not computed before the Gradient "
                        "node", name, n->name, n->op_type);
    if (pv->dtype != VKI_DTYPE_FLOAT)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "'%s' (node '%s', %s) is %s: only float32 is differentiated", name,
                        n->name, n->op_type, vki_dtype_name(pv->dtype));
    if (pv->permuted || pv->view_scale != 0.0f)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "'%s' (node '%s', %s) is a permuted or scaled view", name, n->name,
                        n->op_type);
    return VKI_OK;
}

/* The accumulator of value v, made on first use (*accumulate: add to it). */
static vki_status accumulator(backward *bw, int v, int *acc, bool *accumulate)
{
    *accumulate = bw->grad[v] >= 0;
    if (!*accumulate) {
        plan_value *pv = op_value(bw->c, v);
        VKI_TRY(op_temp(bw->c, VKI_DTYPE_FLOAT, shape_numel(pv->dims, pv->rank), &bw->grad[v]));
    }
    *acc = bw->grad[v];
    return VKI_OK;
}

/* Strides of v's elements in the index space of dims[0..rank) (numpy broadcasting, aligned
 * right), 0 along a dim v is broadcast along. */
static vki_status broadcast_strides(op_ctx *c, const plan_value *v, const int64_t *dims, int rank, uint32_t *strides)
{
    int64_t stride = 1;
    for (int k = rank - 1; k >= 0; k--) {
        int j = k - (rank - v->rank);
        int64_t d = j >= 0 ? v->dims[j] : 1;
        if (d != 1 && d != dims[k]) {
            char a[128], b[128];
            return op_error(c, VKI_ERROR_SHAPE, "%s does not broadcast to %s", shape_str(v->dims, v->rank, a, sizeof a),
                            shape_str(dims, rank, b, sizeof b));
        }
        strides[k] = d == 1 ? 0 : (uint32_t)stride;
        stride *= d;
    }
    return VKI_OK;
}

/* out (+)= the backward step `rule` of operand `target` (0: a, 1: b) of y = f(a, b), g being
 * y's gradient. */
static vki_status step(backward *bw, uint32_t rule, uint32_t target, int g, int y, int a, int b, int out, bool accumulate)
{
    op_ctx *c = bw->c;
    plan_value *yv = op_value(c, y), *ov = op_value(c, out);
    struct { uint32_t count, rank, dims[8], a_stride[8], b_stride[8]; } push = {0};
    int64_t count = shape_numel(ov->dims, ov->rank);
    if (count == 0) return VKI_OK;
    if (shape_numel(yv->dims, yv->rank) > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    push.count = (uint32_t)count;
    push.rank = (uint32_t)yv->rank;
    for (int k = 0; k < yv->rank; k++) push.dims[k] = (uint32_t)yv->dims[k];
    VKI_TRY(broadcast_strides(c, op_value(c, a), yv->dims, yv->rank, push.a_stride));
    VKI_TRY(broadcast_strides(c, op_value(c, b), yv->dims, yv->rank, push.b_stride));
    uint32_t spec[4] = {64, rule, target, accumulate}, gx, gy;
    int values[4] = {g, a, b, out};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch(c, "gradient", spec, 4, &push, sizeof push, values, 4, gx, gy, 1);
}

/* The backward steps of MatMul y = a b into a's and b's accumulators (those wanted). */
static vki_status matmul_steps(backward *bw, const ir_node *n, const bool *want)
{
    op_ctx *c = bw->c;
    int a = n->inputs[0], b = n->inputs[1], y = n->outputs[0];
    plan_value *av = op_value(c, a), *bv = op_value(c, b), *yv = op_value(c, y);
    if (av->rank < 1 || bv->rank < 1) return op_error(c, VKI_ERROR_SHAPE, "MatMul node '%s' has a scalar operand", n->name);
    /* a 1-D operand as a matrix of one row (a) or one column (b): the same elements */
    int64_t M = av->rank > 1 ? av->dims[av->rank - 2] : 1, K = av->dims[av->rank - 1];
    int64_t N = bv->rank > 1 ? bv->dims[bv->rank - 1] : 1;
    plan_value ab = *av, bb = *bv; /* batch dims only */
    ab.rank = av->rank > 2 ? av->rank - 2 : 0;
    bb.rank = bv->rank > 2 ? bv->rank - 2 : 0;
    int rank = ab.rank > bb.rank ? ab.rank : bb.rank;
    int64_t dims[VKI_MAX_RANK];
    for (int k = 0; k < rank; k++) {
        int ja = k - (rank - ab.rank), jb = k - (rank - bb.rank);
        int64_t da = ja >= 0 ? ab.dims[ja] : 1, db = jb >= 0 ? bb.dims[jb] : 1;
        dims[k] = da == 1 ? db : da;
    }
    if (shape_numel(dims, rank) * M * N != shape_numel(yv->dims, yv->rank))
        return op_error(c, VKI_ERROR_SHAPE, "MatMul node '%s': y does not have the operands' product shape", n->name);
    if (shape_numel(yv->dims, yv->rank) > UINT32_MAX || shape_numel(av->dims, av->rank) > UINT32_MAX ||
        shape_numel(bv->dims, bv->rank) > UINT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    struct { uint32_t count, rank, M, K, N, dims[6], a_stride[6], b_stride[6]; } push = {0};
    push.rank = (uint32_t)rank, push.M = (uint32_t)M, push.K = (uint32_t)K, push.N = (uint32_t)N;
    for (int k = 0; k < rank; k++) push.dims[k] = (uint32_t)dims[k];
    VKI_TRY(broadcast_strides(c, &ab, dims, rank, push.a_stride));
    VKI_TRY(broadcast_strides(c, &bb, dims, rank, push.b_stride));
    for (uint32_t t = 0; t < 2; t++) {
        if (!want[t]) continue;
        int v = n->inputs[t], out;
        bool accumulate;
        VKI_TRY(accumulator(bw, v, &out, &accumulate));
        int64_t count = shape_numel(op_value(c, v)->dims, op_value(c, v)->rank);
        if (count == 0) continue;
        push.count = (uint32_t)count;
        uint32_t spec[3] = {64, t, accumulate}, gx, gy;
        int values[4] = {bw->grad[y], a, b, out};
        op_grid_1d((uint64_t)count, 64, &gx, &gy);
        VKI_TRY(op_dispatch(c, "gradient_matmul", spec, 3, &push, sizeof push, values, 4, gx, gy, 1));
    }
    return VKI_OK;
}

/* The backward steps of node n into the accumulators of its inputs marked in want[]. */
static vki_status node_steps(backward *bw, const ir_node *n, const bool *want)
{
    op_ctx *c = bw->c;
    const char *op = n->op_type;
    int y = n->outputs[0], g = bw->grad[y];
    static const char *const unary[] = {"Identity", "Neg", "Relu", "Sigmoid", "Tanh", "Exp"};
    static const uint32_t unary_rule[] = {G_PASS, G_NEG, G_RELU, G_SIGMOID, G_TANH, G_EXP};
    static const char *const binary[] = {"Add", "Sub", "Mul", "Div"};
    static const uint32_t binary_rule[][2] = {{G_PASS, G_PASS}, {G_PASS, G_NEG}, {G_MUL_A, G_MUL_B}, {G_DIV_A, G_DIV_B}};
    bool known = !*n->domain && !strcmp(op, "MatMul") && n->n_inputs == 2;
    for (int r = 0; r < 6 && !*n->domain; r++) known |= !strcmp(op, unary[r]) && n->n_inputs == 1;
    for (int r = 0; r < 4 && !*n->domain; r++) known |= !strcmp(op, binary[r]) && n->n_inputs == 2;
    if (!known)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "cannot differentiate node '%s' (%s%s%s) on the way from xs to y: "
                        "supported are Add, Sub, Mul, Div, Neg, MatMul, Relu, Sigmoid, Tanh, Exp and Identity",
                        n->name, n->domain, *n->domain ? "." : "", op);
    for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0) VKI_TRY(readable(c, n, n->inputs[k]));
    VKI_TRY(readable(c, n, y));
    if (!strcmp(op, "MatMul")) return matmul_steps(bw, n, want);
    int out;
    bool accumulate;
    for (int r = 0; r < 6; r++) {
        if (strcmp(op, unary[r])) continue;
        VKI_TRY(accumulator(bw, n->inputs[0], &out, &accumulate));
        return step(bw, unary_rule[r], 0, g, y, n->inputs[0], n->inputs[0], out, accumulate);
    }
    for (int r = 0; r < 4; r++) {
        if (strcmp(op, binary[r])) continue;
        for (uint32_t t = 0; t < 2; t++) {
            if (!want[t]) continue;
            VKI_TRY(accumulator(bw, n->inputs[t], &out, &accumulate));
            VKI_TRY(step(bw, binary_rule[r][t], t, g, y, n->inputs[0], n->inputs[1], out, accumulate));
        }
    }
    return VKI_OK;
}

static vki_status plan_gradient(op_ctx *c)
{
    const ir_graph *gr = c->plan->graph;
    const ir_attr *xs = ir_find_attr(c->node, "xs"), *zs = ir_find_attr(c->node, "zs");
    const char *y_name = ir_attr_string(c->node, "y", NULL);
    int n_xs = xs && xs->type == ATTR_STRINGS ? xs->count : 0, n_zs = zs && zs->type == ATTR_STRINGS ? zs->count : 0;
    if (!n_xs || !y_name)
        return op_error(c, VKI_ERROR_MODEL, "needs the xs (strings) and y (string) attributes");
    if (op_input_count(c) != n_xs + n_zs || op_output_count(c) > n_xs)
        return op_error(c, VKI_ERROR_MODEL, "%d inputs and %d outputs for %d xs and %d zs: expected the xs then the zs "
                        "as inputs, one output per x", op_input_count(c), op_output_count(c), n_xs, n_zs);
    for (int k = 0; k < n_xs + n_zs; k++) {
        const char *want = k < n_xs ? xs->strings[k] : zs->strings[k - n_xs];
        if (!op_has_input(c, k) || strcmp(gr->values[op_in_index(c, k)].name, want))
            return op_error(c, VKI_ERROR_MODEL, "input %d must be '%s', as %s[%d] names it", k, want,
                            k < n_xs ? "xs" : "zs", k < n_xs ? k : k - n_xs);
    }
    int y = -1;
    for (int v = 0; v < gr->n_values && y < 0; v++)
        if (gr->values[v].name && !strcmp(gr->values[v].name, y_name)) y = v;
    if (y < 0) return op_error(c, VKI_ERROR_MODEL, "y '%s' names no value of the graph", y_name);
    plan_value *yv = op_value(c, y);
    if (!yv->shaped)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "y '%s' is not computed before the Gradient node: it must be a graph "
                        "output or feed one", y_name);
    if (yv->dtype != VKI_DTYPE_FLOAT) return op_error(c, VKI_ERROR_UNSUPPORTED, "y '%s' is %s: only float32 is differentiated",
                                                      y_name, vki_dtype_name(yv->dtype));
    for (int k = 0; k < n_xs; k++) {
        plan_value *x = op_in(c, k);
        if (x->dtype != VKI_DTYPE_FLOAT)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "x '%s' is %s: only float32 is differentiated", xs->strings[k],
                            vki_dtype_name(x->dtype));
        if (op_has_output(c, k)) VKI_TRY(op_set_output(c, k, x->dtype, x->rank, x->dims));
    }
    /* the values that depend on some x (reached), the nodes before this one */
    bool *reached = calloc((size_t)gr->n_values, 1);
    backward bw = {c, malloc(sizeof(int) * (size_t)gr->n_values)};
    if (!reached || !bw.grad) {
        free(reached);
        free(bw.grad);
        return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    for (int v = 0; v < gr->n_values; v++) bw.grad[v] = -1;
    for (int k = 0; k < n_xs; k++) reached[op_in_index(c, k)] = true;
    for (int n = 0; n < c->node_index; n++) {
        const ir_node *nd = &gr->nodes[n];
        bool any = false;
        for (int i = 0; i < nd->n_inputs; i++) any |= nd->inputs[i] >= 0 && reached[nd->inputs[i]];
        for (int o = 0; o < nd->n_outputs && any; o++)
            if (nd->outputs[o] >= 0) reached[nd->outputs[o]] = true;
    }
    vki_status st = VKI_OK;
    /* the seed: dy/dy = 1 */
    float *ones = op_temp_const(c, VKI_DTYPE_FLOAT, shape_numel(yv->dims, yv->rank) ? shape_numel(yv->dims, yv->rank) : 1,
                                &bw.grad[y]);
    if (!ones) st = op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int64_t i = 0; ones && i < shape_numel(yv->dims, yv->rank); i++) ones[i] = 1.0f;
    /* An epilogue a kernel applied (op_fuse_claim) leaves its input holding its output: safe
     * for Add (whose step reads no values; its input has no other reader) and Relu (x > 0 where
     * relu(x) > 0). The nodes of a pattern (fuse.c) never exist. */
    for (int n = c->node_index - 1; st == VKI_OK && n >= 0; n--) {
        const ir_node *nd = &gr->nodes[n];
        bool out_grad = false, want[2] = {false, false}, any = false;
        bool makes_x = false; /* each x is an independent variable: nothing flows past it */
        for (int o = 0; o < nd->n_outputs; o++) {
            out_grad |= nd->outputs[o] >= 0 && bw.grad[nd->outputs[o]] >= 0;
            for (int k = 0; k < n_xs; k++) makes_x |= nd->outputs[o] == op_in_index(c, k);
        }
        if (makes_x) continue;
        for (int i = 0; i < nd->n_inputs; i++) {
            bool w = nd->inputs[i] >= 0 && reached[nd->inputs[i]];
            if (i < 2) want[i] = w;
            any |= w;
        }
        if (!out_grad || !any) continue;
        if (nd->n_outputs != 1)
            st = op_error(c, VKI_ERROR_UNSUPPORTED, "cannot differentiate node '%s' (%s) on the way from xs to y: %d outputs",
                          nd->name, nd->op_type, nd->n_outputs);
        else if (c->plan->pattern[n] != PATTERN_NONE ||
                 (c->plan->fused[n] && strcmp(nd->op_type, "Relu") && strcmp(nd->op_type, "Add")))
            st = op_error(c, VKI_ERROR_UNSUPPORTED, "node '%s' (%s) on the way from xs to y was fused into another "
                          "kernel: its values do not exist (set VKINFER_NO_FUSION=1)", nd->name, nd->op_type);
        else
            st = node_steps(&bw, nd, want);
    }
    /* the outputs: each x's accumulator, or zeros where y does not depend on x */
    for (int k = 0; st == VKI_OK && k < n_xs; k++) {
        if (!op_has_output(c, k)) continue;
        int x = op_in_index(c, k), acc = bw.grad[x];
        st = step(&bw, acc >= 0 ? G_PASS : G_ZERO, 0, acc >= 0 ? acc : x, x, x, x, op_out_index(c, k), false);
    }
    free(reached);
    free(bw.grad);
    return st;
}

const op_def op_Gradient = {"Gradient", "ai.onnx.preview.training", "float32",
                            "y must be computed before the node in the graph's order (fusion is off in its plans); differentiates Add, "
                            "Sub, Mul, Div, Neg, MatMul, Relu, Sigmoid, Tanh, Exp and Identity",
                            plan_gradient, OP_READS_Y_ATTR};
