/* ai.onnx.ml TreeEnsemble (opset 5) on the GPU (shaders/tree_ensemble.comp): the trees are
 * flattened at plan time into one table (nodes, roots, leaves, membership sets); one
 * invocation per row walks every tree, aggregates and post-transforms. The semantics are
 * ONNX's reference: a root with both branches leaves of one id is a tree of one leaf, that of
 * the root's own index; membership_values lists the sets of the BRANCH_MEMBER nodes in the
 * order of the nodes, each ended by NaN. */
#include "op.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MODE_LEQ = 0, MODE_MEMBER = 6 };

/* A numeric TENSOR attribute as doubles (malloc'ed into *out); count -1 if absent. */
static vki_status tensor_attr(op_ctx *c, const char *name, double **out, int64_t *count)
{
    const ir_attr *a = ir_find_attr(c->node, name);
    *out = NULL;
    *count = -1;
    if (!a) return VKI_OK;
    if (a->type != ATTR_TENSOR || !a->tensor)
        return op_error(c, VKI_ERROR_MODEL, "attribute %s must be a tensor", name);
    const ir_tensor *t = a->tensor;
    if (t->dtype == VKI_DTYPE_STRING) return op_error(c, VKI_ERROR_UNSUPPORTED, "attribute %s: strings unsupported", name);
    if (vki_dtype_size(t->dtype) == 0 || t->bytes < (size_t)shape_numel(t->dims, t->rank) * vki_dtype_size(t->dtype))
        return op_error(c, VKI_ERROR_MODEL, "attribute %s: a %s tensor is not supported here", name, vki_dtype_name(t->dtype));
    *count = shape_numel(t->dims, t->rank);
    *out = malloc(sizeof(double) * (size_t)(*count ? *count : 1));
    if (!*out) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int64_t i = 0; i < *count; i++) (*out)[i] = host_read_f64(t->dtype, t->data, (size_t)i);
    return VKI_OK;
}

typedef struct forest {
    int n_nodes, n_leaves, n_trees;
    const int64_t *feature, *true_id, *false_id, *true_leaf, *false_leaf, *missing, *target, *roots;
    double *modes, *splits, *weights, *members;
    int64_t n_members;
} forest;

/* A tree's walk ends at leaves: every reachable child in range, no cycle (the shader bounds
 * its walk by the node count; a cycle is refused here). */
static vki_status check_tree(op_ctx *c, const forest *f, int64_t root, uint8_t *state, int *stack)
{
    int top = 0;
    stack[top++] = (int)root;
    while (top) {
        int n = stack[top - 1];
        if (state[n] == 0) {
            state[n] = 1;
            for (int side = 0; side < 2; side++) {
                int64_t child = side ? f->false_id[n] : f->true_id[n];
                bool leaf = side ? f->false_leaf[n] : f->true_leaf[n];
                if (child < 0 || child >= (leaf ? f->n_leaves : f->n_nodes))
                    return op_error(c, VKI_ERROR_MODEL, "node %d: %s child %lld is outside the %d %s", n,
                                    side ? "false" : "true", (long long)child, leaf ? f->n_leaves : f->n_nodes,
                                    leaf ? "leaves" : "nodes");
                if (leaf) continue;
                if (state[child] == 1) return op_error(c, VKI_ERROR_MODEL, "the tree of root %lld has a cycle", (long long)root);
                if (state[child] == 0) stack[top++] = (int)child;
            }
        } else {
            state[n] = 2;
            top--;
        }
    }
    return VKI_OK;
}

static vki_status build_table(op_ctx *c, const forest *f, int64_t features, int64_t targets, int *table, uint32_t *roots_at,
                              uint32_t *leaves_at)
{
    int64_t member_nodes = 0;
    for (int n = 0; n < f->n_nodes; n++) {
        int64_t mode = (int64_t)f->modes[n];
        if (mode < MODE_LEQ || mode > MODE_MEMBER || f->modes[n] != (double)mode)
            return op_error(c, VKI_ERROR_MODEL, "nodes_modes[%d] is %g: must be 0 (BRANCH_LEQ) to 6 (BRANCH_MEMBER)", n,
                            f->modes[n]);
        if (f->feature[n] < 0 || f->feature[n] >= features)
            return op_error(c, VKI_ERROR_MODEL, "nodes_featureids[%d] is %lld: X has %lld features", n,
                            (long long)f->feature[n], (long long)features);
        member_nodes += mode == MODE_MEMBER;
    }
    int64_t nans = 0;
    for (int64_t k = 0; k < f->n_members; k++) nans += isnan(f->members[k]);
    if (member_nodes && (f->n_members < 0 || nans != member_nodes))
        return op_error(c, VKI_ERROR_MODEL, "%lld BRANCH_MEMBER nodes need as many sets in membership_values, each ended "
                        "by NaN (%lld found)", (long long)member_nodes, (long long)(f->n_members < 0 ? 0 : nans));
    for (int l = 0; l < f->n_leaves; l++)
        if (f->target[l] < 0 || f->target[l] >= targets)
            return op_error(c, VKI_ERROR_MODEL, "leaf_targetids[%d] is %lld: n_targets is %lld", l, (long long)f->target[l],
                            (long long)targets);
    uint8_t *state = calloc((size_t)f->n_nodes + 1, 1);
    int *stack = malloc(sizeof(int) * ((size_t)f->n_nodes + 1));
    vki_status st = state && stack ? VKI_OK : op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    int64_t at = 6 * (int64_t)f->n_nodes;
    *roots_at = (uint32_t)at;
    for (int t = 0; st == VKI_OK && t < f->n_trees; t++) {
        int64_t r = f->roots[t];
        if (r < 0 || r >= f->n_nodes) {
            st = op_error(c, VKI_ERROR_MODEL, "tree_roots[%d] is %lld: there are %d nodes", t, (long long)r, f->n_nodes);
        } else if (f->true_leaf[r] && f->false_leaf[r] && f->true_id[r] == f->false_id[r]) {
            if (r >= f->n_leaves) st = op_error(c, VKI_ERROR_MODEL, "tree_roots[%d]: a tree of one leaf, leaf %lld, "
                                                "beyond the %d leaves", t, (long long)r, f->n_leaves);
            table[at + t] = -1 - (int)r;
        } else {
            st = check_tree(c, f, r, state, stack);
            table[at + t] = (int)r;
        }
    }
    free(state);
    free(stack);
    VKI_TRY(st);
    at += f->n_trees;
    *leaves_at = (uint32_t)at;
    for (int l = 0; l < f->n_leaves; l++) {
        float w = (float)f->weights[l];
        memcpy(&table[at + 2 * l], &w, 4);
        table[at + 2 * l + 1] = (int)f->target[l];
    }
    at += 2 * (int64_t)f->n_leaves;
    int64_t member = 0;
    for (int n = 0; n < f->n_nodes; n++) {
        int *rec = table + 6 * n;
        rec[0] = (int)f->feature[n];
        rec[1] = (int)f->modes[n] | (f->missing && f->missing[n] ? 1 << 8 : 0);
        rec[3] = f->true_leaf[n] ? -1 - (int)f->true_id[n] : (int)f->true_id[n];
        rec[4] = f->false_leaf[n] ? -1 - (int)f->false_id[n] : (int)f->false_id[n];
        if ((int)f->modes[n] == MODE_MEMBER) {
            rec[2] = (int)at;
            for (; !isnan(f->members[member]); member++, at++) {
                float m = (float)f->members[member];
                memcpy(&table[at], &m, 4);
                rec[5]++;
            }
            member++;
        } else {
            float s = (float)f->splits[n];
            memcpy(&rec[2], &s, 4);
        }
    }
    return VKI_OK;
}

static vki_status plan_tree_ensemble(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_float(c, 0));
    plan_value *x = op_in(c, 0);
    if (x->rank != 2) return op_error(c, VKI_ERROR_SHAPE, "X must be [N, F]");
    forest f = {0};
    int n_true = ir_attr_ints(c->node, "nodes_truenodeids", &f.true_id);
    int n_false = ir_attr_ints(c->node, "nodes_falsenodeids", &f.false_id);
    int n_tl = ir_attr_ints(c->node, "nodes_trueleafs", &f.true_leaf), n_fl = ir_attr_ints(c->node, "nodes_falseleafs", &f.false_leaf);
    int n_feat = ir_attr_ints(c->node, "nodes_featureids", &f.feature);
    int n_missing = ir_attr_ints(c->node, "nodes_missing_value_tracks_true", &f.missing);
    f.n_leaves = ir_attr_ints(c->node, "leaf_targetids", &f.target);
    f.n_trees = ir_attr_ints(c->node, "tree_roots", &f.roots);
    int64_t targets = ir_attr_int(c->node, "n_targets", -1), agg = ir_attr_int(c->node, "aggregate_function", 1);
    int64_t post = ir_attr_int(c->node, "post_transform", 0);
    int64_t n_modes, n_splits, n_weights;
    vki_status st = tensor_attr(c, "nodes_modes", &f.modes, &n_modes);
    if (st == VKI_OK) st = tensor_attr(c, "nodes_splits", &f.splits, &n_splits);
    if (st == VKI_OK) st = tensor_attr(c, "leaf_weights", &f.weights, &n_weights);
    if (st == VKI_OK) st = tensor_attr(c, "membership_values", &f.members, &f.n_members);
    f.n_nodes = n_true;
    if (st == VKI_OK && (n_true < 1 || n_false != n_true || n_tl != n_true || n_fl != n_true || n_feat != n_true ||
                         n_modes != n_true || n_splits != n_true || (n_missing >= 0 && n_missing != n_true)))
        st = op_error(c, VKI_ERROR_MODEL, "the nodes_* attributes must all list the same number (>= 1) of nodes");
    if (n_missing < 0) f.missing = NULL;
    if (st == VKI_OK && (f.n_leaves < 1 || n_weights != f.n_leaves))
        st = op_error(c, VKI_ERROR_MODEL, "leaf_targetids (%d) and leaf_weights (%lld) must list the same leaves",
                      f.n_leaves, (long long)n_weights);
    if (st == VKI_OK && (f.n_trees < 1 || targets < 1 || agg < 0 || agg > 3 || post < 0 || post > 4))
        st = op_error(c, VKI_ERROR_MODEL, "tree_roots (%d entries), n_targets %lld, aggregate_function %lld (0-3) or "
                      "post_transform %lld (0-4) out of range", f.n_trees, (long long)targets, (long long)agg, (long long)post);
    int64_t dims[2] = {x->dims[0], targets};
    if (st == VKI_OK) st = op_set_output(c, 0, x->dtype, 2, dims);
    int64_t words = 6 * (int64_t)f.n_nodes + f.n_trees + 2 * (int64_t)f.n_leaves + (f.n_members > 0 ? f.n_members : 0);
    if (st == VKI_OK && (words > INT32_MAX || x->dims[0] * targets > UINT32_MAX || shape_numel(x->dims, 2) > UINT32_MAX))
        st = op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    int table = -1;
    uint32_t roots_at = 0, leaves_at = 0;
    if (st == VKI_OK && x->dims[0] > 0) {
        int *t = op_temp_const(c, VKI_DTYPE_INT32, words, &table);
        st = t ? build_table(c, &f, x->dims[1], targets, t, &roots_at, &leaves_at)
               : op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    free(f.modes);
    free(f.splits);
    free(f.weights);
    free(f.members);
    if (st != VKI_OK || x->dims[0] == 0) return st;
    struct { uint32_t rows, features, targets, trees, nodes, roots_at, leaves_at; } push = {
        (uint32_t)x->dims[0], (uint32_t)x->dims[1], (uint32_t)targets, (uint32_t)f.n_trees, (uint32_t)f.n_nodes,
        roots_at, leaves_at};
    uint32_t spec[3] = {64, (uint32_t)agg, (uint32_t)post}, gx, gy;
    int values[3] = {op_in_index(c, 0), table, op_out_index(c, 0)};
    op_grid_1d((uint64_t)x->dims[0], 64, &gx, &gy);
    return op_dispatch(c, "tree_ensemble", spec, 3, &push, sizeof push, values, 3, gx, gy, 1);
}

const op_def op_TreeEnsemble = {"TreeEnsemble", "ai.onnx.ml", OP_DTYPES_FLOAT,
                                "one invocation per row; computes in float32", plan_tree_ensemble};
