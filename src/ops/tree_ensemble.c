/* ai.onnx.ml's tree ensembles on the GPU (shaders/tree_ensemble.glsl): TreeEnsemble (opset
 * 5), TreeEnsembleRegressor and TreeEnsembleClassifier (opset 3). Each op reads its
 * attributes into one forest form, flattened at plan time into one table (nodes, roots,
 * leaves, membership sets, base values, labels); one invocation per row walks every tree,
 * aggregates and post-transforms. The semantics are ONNX's reference: in TreeEnsemble a root
 * with both branches leaves of one id is a tree of one leaf, that of the root's own index,
 * and membership_values lists the BRANCH_MEMBER nodes' sets in node order, each ended by
 * NaN; in the opset-3 ops each tree is rooted at its first node listed. */
#include "op.h"

#include <math.h>
#include <stdio.h>
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

/* A forest in one form for the three ops: branch nodes 0..n_nodes-1 (children are nodes or
 * leaves, by the *_leaf flags), leaves 0..n_leaves-1 each holding the (target, weight) pairs
 * [leaf_start[l], leaf_start[l + 1]), and per tree its root node, or its one leaf
 * (root_leaf[t] >= 0). */
typedef struct forest {
    int n_nodes, n_leaves, n_trees;
    int64_t *feature, *mode, *true_id, *false_id, *missing;
    uint8_t *true_leaf, *false_leaf;
    double *splits;
    int64_t *leaf_start, *entry_target;
    double *entry_weight;
    int64_t *roots, *root_leaf;
    double *members; /* the BRANCH_MEMBER nodes' sets, in node order, each ended by NaN */
    int64_t n_members;
} forest;

static void forest_free(forest *f)
{
    free(f->feature), free(f->mode), free(f->true_id), free(f->false_id), free(f->missing), free(f->true_leaf);
    free(f->false_leaf), free(f->splits), free(f->leaf_start), free(f->entry_target), free(f->entry_weight);
    free(f->roots), free(f->root_leaf), free(f->members);
}

/* Allocates a forest's arrays (members, if any, are set by the caller). */
static bool forest_alloc(forest *f, int nodes, int leaves, int64_t entries, int trees)
{
    size_t n = (size_t)nodes + 1, l = (size_t)leaves + 1, e = (size_t)entries + 1, t = (size_t)trees + 1;
    f->n_nodes = nodes, f->n_leaves = leaves, f->n_trees = trees;
    f->feature = calloc(n, 8), f->mode = calloc(n, 8), f->true_id = calloc(n, 8), f->false_id = calloc(n, 8);
    f->missing = calloc(n, 8), f->true_leaf = calloc(n, 1), f->false_leaf = calloc(n, 1), f->splits = calloc(n, 8);
    f->leaf_start = calloc(l, 8), f->entry_target = calloc(e, 8), f->entry_weight = calloc(e, 8);
    f->roots = calloc(t, 8), f->root_leaf = calloc(t, 8);
    return f->feature && f->mode && f->true_id && f->false_id && f->missing && f->true_leaf && f->false_leaf &&
           f->splits && f->leaf_start && f->entry_target && f->entry_weight && f->roots && f->root_leaf;
}

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

/* The table (shaders/tree_ensemble.glsl) of a checked forest, with base values and labels
 * (NULL: none) appended; malloc'ed into *out. */
typedef struct table_layout {
    uint32_t roots_at, leaves_at, base_at, labels_at;
    int64_t words;
} table_layout;

static vki_status build_table(op_ctx *c, const forest *f, int64_t features, int64_t targets, const double *base,
                              const int64_t *labels, int64_t n_labels, int32_t **out, table_layout *lay)
{
    int64_t member_nodes = 0, nans = 0;
    for (int n = 0; n < f->n_nodes; n++) {
        if (f->mode[n] < MODE_LEQ || f->mode[n] > MODE_MEMBER)
            return op_error(c, VKI_ERROR_MODEL, "node %d: mode %lld, not 0 (BRANCH_LEQ) to 6 (BRANCH_MEMBER)", n,
                            (long long)f->mode[n]);
        if (f->feature[n] < 0 || f->feature[n] >= features)
            return op_error(c, VKI_ERROR_MODEL, "node %d: feature %lld, and X has %lld features", n, (long long)f->feature[n],
                            (long long)features);
        member_nodes += f->mode[n] == MODE_MEMBER;
    }
    for (int64_t k = 0; k < f->n_members; k++) nans += isnan(f->members[k]);
    if (member_nodes && nans != member_nodes)
        return op_error(c, VKI_ERROR_MODEL, "%lld BRANCH_MEMBER nodes need as many sets in membership_values, each ended "
                        "by NaN (%lld found)", (long long)member_nodes, (long long)nans);
    int64_t entries = f->leaf_start[f->n_leaves];
    for (int64_t e = 0; e < entries; e++)
        if (f->entry_target[e] < 0 || f->entry_target[e] >= targets)
            return op_error(c, VKI_ERROR_MODEL, "a leaf's target (or class) id is %lld, outside the %lld targets (or classes)",
                            (long long)f->entry_target[e], (long long)targets);
    lay->roots_at = (uint32_t)(6 * (int64_t)f->n_nodes);
    lay->leaves_at = lay->roots_at + (uint32_t)f->n_trees;
    int64_t at = lay->leaves_at + f->n_leaves + 2 * entries;
    lay->base_at = (uint32_t)at;
    lay->labels_at = (uint32_t)(at + (base ? targets : 0));
    lay->words = lay->labels_at + n_labels + (f->n_members > 0 ? f->n_members : 0);
    if (lay->words > INT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "a forest of more than 2^31 words");
    int32_t *t = calloc((size_t)lay->words + 1, 4);
    uint8_t *state = calloc((size_t)f->n_nodes + 1, 1);
    int *stack = malloc(sizeof(int) * ((size_t)f->n_nodes + 1));
    int32_t *leaf_at = malloc(sizeof(int32_t) * ((size_t)f->n_leaves + 1));
    vki_status st = t && state && stack && leaf_at ? VKI_OK : op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    /* leaves: their pair count, then (weight, target) pairs; a child names one by its offset */
    int64_t w = lay->leaves_at;
    for (int l = 0; st == VKI_OK && l < f->n_leaves; l++) {
        leaf_at[l] = (int32_t)(w - lay->leaves_at);
        t[w++] = (int32_t)(f->leaf_start[l + 1] - f->leaf_start[l]);
        for (int64_t e = f->leaf_start[l]; e < f->leaf_start[l + 1]; e++) {
            float weight = (float)f->entry_weight[e];
            memcpy(&t[w++], &weight, 4);
            t[w++] = (int32_t)f->entry_target[e];
        }
    }
    for (int k = 0; st == VKI_OK && k < f->n_trees; k++) {
        if (f->root_leaf[k] >= 0) {
            t[lay->roots_at + k] = -1 - leaf_at[f->root_leaf[k]];
        } else if (f->roots[k] < 0 || f->roots[k] >= f->n_nodes) {
            st = op_error(c, VKI_ERROR_MODEL, "tree %d: root %lld is outside the %d nodes", k, (long long)f->roots[k], f->n_nodes);
        } else {
            st = check_tree(c, f, f->roots[k], state, stack);
            t[lay->roots_at + k] = (int32_t)f->roots[k];
        }
    }
    for (int64_t k = 0; st == VKI_OK && base && k < targets; k++) {
        float b = (float)base[k];
        memcpy(&t[lay->base_at + k], &b, 4);
    }
    for (int64_t k = 0; st == VKI_OK && k < n_labels; k++) {
        if (labels[k] < INT32_MIN || labels[k] > INT32_MAX)
            st = op_error(c, VKI_ERROR_UNSUPPORTED, "class label %lld is outside int32, which int64 is held in", (long long)labels[k]);
        t[lay->labels_at + k] = (int32_t)labels[k];
    }
    at = lay->labels_at + n_labels;
    int64_t member = 0;
    for (int n = 0; st == VKI_OK && n < f->n_nodes; n++) {
        int32_t *rec = t + 6 * n;
        rec[0] = (int32_t)f->feature[n];
        rec[1] = (int32_t)f->mode[n] | (f->missing[n] ? 1 << 8 : 0);
        rec[3] = f->true_leaf[n] ? -1 - leaf_at[f->true_id[n]] : (int32_t)f->true_id[n];
        rec[4] = f->false_leaf[n] ? -1 - leaf_at[f->false_id[n]] : (int32_t)f->false_id[n];
        if (f->mode[n] == MODE_MEMBER) {
            rec[2] = (int32_t)at;
            for (; !isnan(f->members[member]); member++, at++) {
                float m = (float)f->members[member];
                memcpy(&t[at], &m, 4);
                rec[5]++;
            }
            member++;
        } else {
            float split = (float)f->splits[n];
            memcpy(&rec[2], &split, 4);
        }
    }
    free(state);
    free(stack);
    free(leaf_at);
    if (st != VKI_OK) free(t);
    else *out = t;
    return st;
}

/* Uploads the table and records the kernel: scores into output `scores`, labels into output
 * `labels_out` (-1: none). */
static vki_status dispatch_forest(op_ctx *c, const forest *f, int64_t targets, uint32_t agg, uint32_t post, const double *base,
                                  const int64_t *labels, int64_t n_labels, bool binary, int scores, int labels_out)
{
    plan_value *x = op_in(c, 0);
    int32_t *host = NULL;
    table_layout lay = {0};
    VKI_TRY(build_table(c, f, x->dims[1], targets, base, labels, n_labels, &host, &lay));
    int table;
    int32_t *t = op_temp_const(c, VKI_DTYPE_INT32, lay.words, &table);
    if (t) memcpy(t, host, sizeof(int32_t) * (size_t)lay.words);
    free(host);
    if (!t) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (x->dims[0] == 0) return VKI_OK;
    struct { uint32_t rows, features, targets, trees, nodes, roots_at, leaves_at, has_base, base_at, labels_at, one_label; } push = {
        (uint32_t)x->dims[0], (uint32_t)x->dims[1], (uint32_t)targets, (uint32_t)f->n_trees, (uint32_t)f->n_nodes,
        lay.roots_at, lay.leaves_at, base != NULL, lay.base_at, lay.labels_at, n_labels == 1};
    uint32_t spec[5] = {64, agg, post, op_dtype_code(x->dtype), binary}, gx, gy;
    int values[4] = {op_in_index(c, 0), table, op_out_index(c, scores), labels_out >= 0 ? op_out_index(c, labels_out) : -1};
    op_grid_1d((uint64_t)x->dims[0], 64, &gx, &gy);
    return op_dispatch(c, labels_out >= 0 ? "tree_ensemble_classifier" : "tree_ensemble", spec, 5, &push, sizeof push,
                       values, labels_out >= 0 ? 4 : 3, gx, gy, 1);
}

static vki_status plan_tree_ensemble(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_float(c, 0));
    plan_value *x = op_in(c, 0);
    if (x->rank != 2) return op_error(c, VKI_ERROR_SHAPE, "X must be [N, F]");
    const int64_t *feature, *true_id, *false_id, *true_leaf, *false_leaf, *missing, *target, *roots;
    int n = ir_attr_ints(c->node, "nodes_truenodeids", &true_id);
    int n_false = ir_attr_ints(c->node, "nodes_falsenodeids", &false_id);
    int n_tl = ir_attr_ints(c->node, "nodes_trueleafs", &true_leaf), n_fl = ir_attr_ints(c->node, "nodes_falseleafs", &false_leaf);
    int n_feat = ir_attr_ints(c->node, "nodes_featureids", &feature);
    int n_missing = ir_attr_ints(c->node, "nodes_missing_value_tracks_true", &missing);
    int n_leaves = ir_attr_ints(c->node, "leaf_targetids", &target);
    int n_trees = ir_attr_ints(c->node, "tree_roots", &roots);
    int64_t targets = ir_attr_int(c->node, "n_targets", -1), agg = ir_attr_int(c->node, "aggregate_function", 1);
    int64_t post = ir_attr_int(c->node, "post_transform", 0);
    double *modes = NULL, *splits = NULL, *weights = NULL;
    int64_t n_modes, n_splits, n_weights;
    forest f = {0};
    vki_status st = tensor_attr(c, "nodes_modes", &modes, &n_modes);
    if (st == VKI_OK) st = tensor_attr(c, "nodes_splits", &splits, &n_splits);
    if (st == VKI_OK) st = tensor_attr(c, "leaf_weights", &weights, &n_weights);
    if (st == VKI_OK) st = tensor_attr(c, "membership_values", &f.members, &f.n_members);
    if (st == VKI_OK && (n < 1 || n_false != n || n_tl != n || n_fl != n || n_feat != n || n_modes != n || n_splits != n ||
                         (n_missing >= 0 && n_missing != n)))
        st = op_error(c, VKI_ERROR_MODEL, "the nodes_* attributes must all list the same number (>= 1) of nodes");
    if (st == VKI_OK && (n_leaves < 1 || n_weights != n_leaves))
        st = op_error(c, VKI_ERROR_MODEL, "leaf_targetids (%d) and leaf_weights (%lld) must list the same leaves",
                      n_leaves, (long long)n_weights);
    if (st == VKI_OK && (n_trees < 1 || targets < 1 || agg < 0 || agg > 3 || post < 0 || post > 4))
        st = op_error(c, VKI_ERROR_MODEL, "tree_roots (%d entries), n_targets %lld, aggregate_function %lld (0-3) or "
                      "post_transform %lld (0-4) out of range", n_trees, (long long)targets, (long long)agg, (long long)post);
    double *members = f.members;
    int64_t n_members = f.n_members;
    f.members = NULL;
    if (st == VKI_OK && !forest_alloc(&f, n, n_leaves, n_leaves, n_trees))
        st = op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    f.members = members, f.n_members = n_members;
    for (int k = 0; st == VKI_OK && k < n; k++) {
        if (modes[k] != (double)(int64_t)modes[k])
            st = op_error(c, VKI_ERROR_MODEL, "nodes_modes[%d] is %g", k, modes[k]);
        f.feature[k] = feature[k], f.mode[k] = (int64_t)modes[k], f.splits[k] = splits[k];
        f.true_id[k] = true_id[k], f.false_id[k] = false_id[k], f.true_leaf[k] = true_leaf[k] != 0;
        f.false_leaf[k] = false_leaf[k] != 0, f.missing[k] = n_missing >= 0 && missing[k];
    }
    for (int l = 0; st == VKI_OK && l <= n_leaves; l++) {
        f.leaf_start[l] = l;
        if (l < n_leaves) f.entry_target[l] = target[l], f.entry_weight[l] = weights[l];
    }
    /* a root whose branches are both the leaf of one id is a tree of one leaf: leaf `root`, as
     * ONNX's reference reads it */
    for (int k = 0; st == VKI_OK && k < n_trees; k++) {
        int64_t r = roots[k];
        f.roots[k] = r, f.root_leaf[k] = -1;
        if (r >= 0 && r < n && true_leaf[r] && false_leaf[r] && true_id[r] == false_id[r]) {
            if (r >= n_leaves)
                st = op_error(c, VKI_ERROR_MODEL, "tree_roots[%d]: a tree of one leaf, leaf %lld, beyond the %d leaves", k,
                              (long long)r, n_leaves);
            f.root_leaf[k] = r;
        }
    }
    int64_t dims[2] = {x->dims[0], targets};
    if (st == VKI_OK) st = op_set_output(c, 0, x->dtype, 2, dims);
    if (st == VKI_OK && (x->dims[0] * targets > UINT32_MAX || shape_numel(x->dims, 2) > UINT32_MAX))
        st = op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    if (st == VKI_OK) st = dispatch_forest(c, &f, targets, (uint32_t)agg, (uint32_t)post, NULL, NULL, 0, false, 0, -1);
    free(modes), free(splits), free(weights);
    forest_free(&f);
    return st;
}

/* ---- TreeEnsembleRegressor and TreeEnsembleClassifier (opset 3): nodes named by (tree id,
 * node id), leaves by mode LEAF, their weights listed apart ---- */

typedef struct node_key {
    int64_t tree, node;
    int index;
} node_key;

static int compare_keys(const void *pa, const void *pb)
{
    const node_key *a = pa, *b = pb;
    if (a->tree != b->tree) return a->tree < b->tree ? -1 : 1;
    return a->node < b->node ? -1 : a->node > b->node;
}

static int find_node(const node_key *keys, int n, int64_t tree, int64_t node)
{
    node_key want = {tree, node, 0};
    const node_key *hit = bsearch(&want, keys, (size_t)n, sizeof *keys, compare_keys);
    return hit ? hit->index : -1;
}

/* FLOATS attribute `name`, or TENSOR `name`_as_tensor, as doubles (malloc'ed); -1: absent. */
static vki_status floats_attr(op_ctx *c, const char *name, double **out, int64_t *count)
{
    char tensor[64];
    snprintf(tensor, sizeof tensor, "%s_as_tensor", name);
    VKI_TRY(tensor_attr(c, tensor, out, count));
    if (*out) return VKI_OK;
    const ir_attr *a = ir_find_attr(c->node, name);
    if (!a) return VKI_OK;
    if (a->type != ATTR_FLOATS) return op_error(c, VKI_ERROR_MODEL, "attribute %s must be a list of floats", name);
    *count = a->count;
    *out = malloc(sizeof(double) * (size_t)(a->count + 1));
    if (!*out) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int k = 0; k < a->count; k++) (*out)[k] = a->floats[k];
    return VKI_OK;
}

static int enum_index(const char *s, const char *const *names, int n)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(s, names[k])) return k;
    return -1;
}

/* The forest of an opset-3 ensemble: `prefix` names its leaves' lists ("target" or "class"). */
static vki_status read_legacy_forest(op_ctx *c, const char *prefix, forest *f)
{
    static const char *const mode_names[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "LEAF"};
    const int64_t *tree, *node, *feature, *true_id, *false_id, *missing, *e_tree, *e_node, *e_id;
    char a_tree[32], a_node[32], a_id[32], a_weight[32];
    snprintf(a_tree, sizeof a_tree, "%s_treeids", prefix);
    snprintf(a_node, sizeof a_node, "%s_nodeids", prefix);
    snprintf(a_id, sizeof a_id, "%s_ids", prefix);
    snprintf(a_weight, sizeof a_weight, "%s_weights", prefix);
    int n = ir_attr_ints(c->node, "nodes_treeids", &tree);
    const ir_attr *modes = ir_find_attr(c->node, "nodes_modes");
    int64_t n_values, n_weights;
    double *values = NULL, *weights = NULL;
    VKI_TRY(floats_attr(c, "nodes_values", &values, &n_values));
    vki_status st = floats_attr(c, a_weight, &weights, &n_weights);
    int n_entries = ir_attr_ints(c->node, a_tree, &e_tree);
    int n_missing = ir_attr_ints(c->node, "nodes_missing_value_tracks_true", &missing);
    if (st == VKI_OK &&
        (n < 1 || ir_attr_ints(c->node, "nodes_nodeids", &node) != n || ir_attr_ints(c->node, "nodes_featureids", &feature) != n ||
         ir_attr_ints(c->node, "nodes_truenodeids", &true_id) != n || ir_attr_ints(c->node, "nodes_falsenodeids", &false_id) != n ||
         !modes || modes->type != ATTR_STRINGS || modes->count != n || (n_values >= 0 && n_values != n) ||
         (n_missing >= 0 && n_missing != n)))
        st = op_error(c, VKI_ERROR_MODEL, "the nodes_* attributes must all list the same number (>= 1) of nodes");
    if (st == VKI_OK && (n_entries < 0 || ir_attr_ints(c->node, a_node, &e_node) != n_entries ||
                         ir_attr_ints(c->node, a_id, &e_id) != n_entries || n_weights != n_entries))
        st = op_error(c, VKI_ERROR_MODEL, "%s, %s, %s and %s must list the same leaves' weights", a_tree, a_node, a_id, a_weight);
    node_key *keys = st == VKI_OK ? malloc(sizeof *keys * (size_t)n) : NULL;
    int *number = st == VKI_OK ? malloc(sizeof(int) * (size_t)n) : NULL; /* a node's branch or leaf number */
    if (st == VKI_OK && (!keys || !number)) st = op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    int branches = 0, leaves = 0, trees = 0;
    for (int k = 0; st == VKI_OK && k < n; k++) {
        int mode = enum_index(modes->strings[k], mode_names, 7);
        if (mode < 0) st = op_error(c, VKI_ERROR_MODEL, "nodes_modes[%d] is '%s'", k, modes->strings[k]);
        else if (mode < 6 && n_values < 0) st = op_error(c, VKI_ERROR_MODEL, "branch nodes need nodes_values");
        number[k] = mode == 6 ? leaves++ : branches++;
        keys[k] = (node_key){tree[k], node[k], k};
    }
    if (st == VKI_OK) qsort(keys, (size_t)n, sizeof *keys, compare_keys);
    for (int k = 0; st == VKI_OK && k < n; k++) {
        if (k && !compare_keys(&keys[k - 1], &keys[k]))
            st = op_error(c, VKI_ERROR_MODEL, "tree %lld lists node %lld twice", (long long)keys[k].tree, (long long)keys[k].node);
        trees += !k || keys[k].tree != keys[k - 1].tree;
    }
    if (st == VKI_OK && !forest_alloc(f, branches, leaves, n_entries, trees))
        st = op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    /* trees in id order, each rooted at its first node in the list (ONNX's reference) */
    for (int k = 0, t = -1; st == VKI_OK && k < n; k++) {
        if (!k || keys[k].tree != keys[k - 1].tree) {
            int root = keys[k].index;
            for (int j = k; j < n && keys[j].tree == keys[k].tree; j++)
                if (keys[j].index < root) root = keys[j].index;
            t++;
            bool leaf = !strcmp(modes->strings[root], "LEAF");
            f->roots[t] = leaf ? -1 : number[root];
            f->root_leaf[t] = leaf ? number[root] : -1;
        }
    }
    for (int k = 0; st == VKI_OK && k < n; k++) {
        int mode = enum_index(modes->strings[k], mode_names, 7);
        if (mode == 6) continue;
        int b = number[k];
        f->feature[b] = feature[k], f->mode[b] = mode, f->splits[b] = values[k];
        f->missing[b] = n_missing >= 0 && missing[k];
        for (int side = 0; side < 2 && st == VKI_OK; side++) {
            int64_t id = side ? false_id[k] : true_id[k];
            int j = find_node(keys, n, tree[k], id);
            if (j < 0) {
                st = op_error(c, VKI_ERROR_MODEL, "tree %lld, node %lld: its %s node %lld does not exist", (long long)tree[k],
                              (long long)node[k], side ? "false" : "true", (long long)id);
                break;
            }
            bool leaf = !strcmp(modes->strings[j], "LEAF");
            (side ? f->false_id : f->true_id)[b] = number[j];
            (side ? f->false_leaf : f->true_leaf)[b] = leaf;
        }
    }
    /* the weights, grouped by leaf in list order */
    int *entry_leaf = st == VKI_OK ? malloc(sizeof(int) * ((size_t)n_entries + 1)) : NULL;
    if (st == VKI_OK && !entry_leaf) st = op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int e = 0; st == VKI_OK && e < n_entries; e++) {
        int j = find_node(keys, n, e_tree[e], e_node[e]);
        if (j < 0 || strcmp(modes->strings[j], "LEAF"))
            st = op_error(c, VKI_ERROR_MODEL, "%s[%d]: tree %lld, node %lld is no leaf", a_weight, e, (long long)e_tree[e],
                          (long long)e_node[e]);
        else
            entry_leaf[e] = number[j], f->leaf_start[number[j] + 1]++;
    }
    for (int l = 0; st == VKI_OK && l < leaves; l++) f->leaf_start[l + 1] += f->leaf_start[l];
    if (st == VKI_OK) {
        int64_t *cursor = malloc(sizeof(int64_t) * ((size_t)leaves + 1));
        if (!cursor) st = op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        for (int l = 0; cursor && l < leaves; l++) cursor[l] = f->leaf_start[l];
        for (int e = 0; cursor && e < n_entries; e++) {
            int64_t at = cursor[entry_leaf[e]]++;
            f->entry_target[at] = e_id[e], f->entry_weight[at] = weights[e];
        }
        free(cursor);
    }
    free(entry_leaf), free(keys), free(number), free(values), free(weights);
    return st;
}

static const char *const post_names[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};

static vki_status plan_tree_regressor(op_ctx *c)
{
    static const char *const agg_names[] = {"AVERAGE", "SUM", "MIN", "MAX"};
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *x = op_in(c, 0);
    if (x->rank != 2 || x->dtype == VKI_DTYPE_BOOL) return op_error(c, VKI_ERROR_SHAPE, "X must be a numeric [N, F]");
    int agg = enum_index(ir_attr_string(c->node, "aggregate_function", "SUM"), agg_names, 4);
    int post = enum_index(ir_attr_string(c->node, "post_transform", "NONE"), post_names, 5);
    int64_t targets = ir_attr_int(c->node, "n_targets", -1), n_base;
    if (agg < 0 || post < 0 || targets < 1)
        return op_error(c, VKI_ERROR_MODEL, "aggregate_function '%s' (AVERAGE, SUM, MIN, MAX), post_transform '%s' or "
                        "n_targets %lld is not valid", ir_attr_string(c->node, "aggregate_function", "SUM"),
                        ir_attr_string(c->node, "post_transform", "NONE"), (long long)targets);
    double *base = NULL;
    forest f = {0};
    vki_status st = floats_attr(c, "base_values", &base, &n_base);
    if (st == VKI_OK && base && n_base != targets)
        st = op_error(c, VKI_ERROR_MODEL, "base_values has %lld entries for %lld targets", (long long)n_base, (long long)targets);
    if (st == VKI_OK) st = read_legacy_forest(c, "target", &f);
    int64_t dims[2] = {x->dims[0], targets};
    if (st == VKI_OK) st = op_set_output(c, 0, VKI_DTYPE_FLOAT, 2, dims);
    if (st == VKI_OK && (x->dims[0] * targets > UINT32_MAX || shape_numel(x->dims, 2) > UINT32_MAX))
        st = op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    if (st == VKI_OK) st = dispatch_forest(c, &f, targets, (uint32_t)agg, (uint32_t)post, base, NULL, 0, false, 0, -1);
    free(base);
    forest_free(&f);
    return st;
}

static vki_status plan_tree_classifier(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *x = op_in(c, 0);
    if (x->rank != 2 || x->dtype == VKI_DTYPE_BOOL) return op_error(c, VKI_ERROR_SHAPE, "X must be a numeric [N, F]");
    if (ir_find_attr(c->node, "classlabels_strings"))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "classlabels_strings: strings unsupported");
    const int64_t *labels, *class_ids;
    int n_classes = ir_attr_ints(c->node, "classlabels_int64s", &labels);
    int post = enum_index(ir_attr_string(c->node, "post_transform", "NONE"), post_names, 5);
    if (n_classes < 1 || post < 0)
        return op_error(c, VKI_ERROR_MODEL, "needs classlabels_int64s and a valid post_transform (not '%s')",
                        ir_attr_string(c->node, "post_transform", "NONE"));
    if (n_classes == 1 && labels[0] != 1)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "a single class label must be 1 (the binary case), not %lld", (long long)labels[0]);
    int n_ids = ir_attr_ints(c->node, "class_ids", &class_ids);
    bool binary = n_ids > 0;
    for (int k = 1; k < n_ids; k++) binary &= class_ids[k] == class_ids[0];
    int64_t n_base;
    double *base = NULL;
    forest f = {0};
    vki_status st = floats_attr(c, "base_values", &base, &n_base);
    if (st == VKI_OK && base && n_base != n_classes)
        st = op_error(c, VKI_ERROR_MODEL, "base_values has %lld entries for %d classes", (long long)n_base, n_classes);
    if (st == VKI_OK) st = read_legacy_forest(c, "class", &f);
    int64_t width = binary && n_classes < 2 ? 2 : n_classes;
    int64_t dims[2] = {x->dims[0], width};
    if (st == VKI_OK) st = op_set_output(c, 0, VKI_DTYPE_INT64, 1, dims);
    if (st == VKI_OK) st = op_set_output(c, 1, VKI_DTYPE_FLOAT, 2, dims);
    if (st == VKI_OK && (x->dims[0] * width > UINT32_MAX || shape_numel(x->dims, 2) > UINT32_MAX))
        st = op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    if (st == VKI_OK && !op_has_output(c, 1)) /* the kernel needs the scores */
        st = op_error(c, VKI_ERROR_UNSUPPORTED, "output Z (the scores) must be kept");
    if (st == VKI_OK)
        st = dispatch_forest(c, &f, n_classes, 1, (uint32_t)post, base, labels, n_classes, binary, 1, op_has_output(c, 0) ? 0 : -1);
    free(base);
    forest_free(&f);
    return st;
}

const op_def op_TreeEnsemble = {"TreeEnsemble", "ai.onnx.ml", OP_DTYPES_FLOAT,
                                "one invocation per row; computes in float32", plan_tree_ensemble};
const op_def op_TreeEnsembleRegressor = {"TreeEnsembleRegressor", "ai.onnx.ml", "float32 float64 int32 int64",
                                         "one invocation per row; computes in float32", plan_tree_regressor};
const op_def op_TreeEnsembleClassifier = {"TreeEnsembleClassifier", "ai.onnx.ml", "float32 float64 int32 int64",
                                          "classlabels_int64s only (strings unsupported); Z must be kept",
                                          plan_tree_classifier};
