/* Data movement that is one strided copy per input or output: Transpose, Concat, Slice,
 * Split, Expand, Tile, DepthToSpace, SpaceToDepth (shaders/copy.glsl). Small constant inputs
 * are folded on the host so that shape subgraphs disappear from the plan. */
#include "movement.h"
#include "norm_views.h"

#include <stdlib.h>
#include <string.h>
#include <stdio.h>

/* Output = the input viewed with `view_dims` (same element count) and permuted by `perm`. */
static vki_status permuted_copy(op_ctx *c, const int64_t *view_dims, int rank, const int *perm)
{
    strided_copy s = {0};
    int64_t view_strides[COPY_MAX_RANK];
    contiguous_strides(view_dims, rank, view_strides);
    s.rank = rank;
    for (int k = 0; k < rank; k++) {
        s.dims[k] = view_dims[perm[k]];
        s.in_strides[k] = view_strides[perm[k]];
    }
    contiguous_strides(s.dims, rank, s.out_strides);
    bool fold = movement_folds(c);
    if (fold) movement_alloc_host_outputs(c);
    return copy_run(c, 0, 0, &s, fold);
}

static vki_status plan_transpose(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *x = op_in(c, 0);
    const int64_t *perm_attr;
    int n = ir_attr_ints(c->node, "perm", &perm_attr);
    int perm[VKI_MAX_RANK];
    bool seen[VKI_MAX_RANK] = {false};
    if (n >= 0 && n != x->rank)
        return op_error(c, VKI_ERROR_MODEL, "perm has %d entries for an input of rank %d", n, x->rank);
    for (int k = 0; k < x->rank; k++) {
        int64_t p = n >= 0 ? perm_attr[k] : x->rank - 1 - k;
        if (p < 0) p += x->rank; /* tolerated by onnxruntime */
        if (p < 0 || p >= x->rank || seen[p]) return op_error(c, VKI_ERROR_MODEL, "perm is not a permutation of 0..%d", x->rank - 1);
        seen[p] = true;
        perm[k] = (int)p;
    }
    int64_t dims[VKI_MAX_RANK];
    for (int k = 0; k < x->rank; k++) dims[k] = x->dims[perm[k]];
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, dims));
    /* Moving only axes of size 1 keeps the elements' order: a reshape, whoever reads it
     * (PyTorch 2's batch-first attention at batch 1: [1, S, D] -> [S, 1, D] and back) */
    int last = -1;
    bool same_order = op_fusion_on(c) && !x->permuted && !x->view_scale;
    for (int k = 0; k < x->rank && same_order; k++)
        if (x->dims[perm[k]] != 1) {
            same_order = perm[k] > last;
            last = perm[k];
        }
    /* Read by Shape or Size alone (the dynamo exporter's slice assignment, whose Transpose back
     * a Shape reads after the next Transpose undid it: src/plan/fuse.c undone_transpose): its
     * dims, no copy; its bytes are X's, which nothing reads in its order */
    bool dims_only = !x->permuted && !x->view_scale && op_dims_read_only(c, op_out_index(c, 0));
    if (same_order || dims_only) return op_output_alias(c, 0, 0);
    /* A Transpose that only a MatMul reads (attention's head split, K transposed) is a permuted
     * view of X: the product kernels take any strides, so nothing is copied. Not where it
     * would cut a product in pieces: A with its batch axes moved, times a 2-D B, is one
     * product of all of A's rows when A is copied (a [seq,batch,d] activation times a
     * weight), but one small product per batch as a view. */
    plan_value *y = op_out(c, 0);
    int operand = -1; /* the view of y that the MatMul reads */
    bool direct = true;
    const ir_node *mm = y ? op_product_reader(c, op_out_index(c, 0), &operand, &direct) : NULL;
    bool batch_moved = false;
    for (int k = 0; k < x->rank - 2; k++) batch_moved |= perm[k] != k;
    bool pieces = mm && direct && mm->n_inputs == 2 && mm->inputs[0] == operand && batch_moved &&
                  x->rank > 2 && op_value(c, mm->inputs[1])->shaped &&
                  op_value(c, mm->inputs[1])->rank <= 2; /* B planned already: a weight, or made before */
    int64_t src[VKI_MAX_RANK]; /* X's element strides: row-major, or a permuted view's own */
    value_strides(x, src);
    bool product_view = y && x->rank >= 2 && mm && !pieces;
    /* A Transpose that only an element-wise Add, Sub, Mul or Div reads (ConvNeXt's NHWC -> NCHW
     * before its layer scale) is a permuted view too: src/ops/binary.c reads it through its
     * strides (or copies it, where that pass cannot). X bound whole, counted in words as the
     * binary pass counts: a strided pass is never cut into windows, and a Transpose too large
     * for one binding takes the windowed copy. */
    int code, reader = y && !mm ? op_arithmetic_reader(c, op_out_index(c, 0), &code) : -1, scale, bias;
    bool elementwise_view = reader >= 0 && !x->split_inner && op_fusion_on(c) && dtype_is_float(x->dtype) &&
                            (uint64_t)shape_numel(x->dims, x->rank) * 4 + x->view_offset <= op_max_binding_bytes(c);
    /* A residual Add that a LayerNormalization reads is added up by norm_rows in its own pass
     * (src/ops/normalization.c norm_fuse_add), which reads such a view in place where its rows
     * (the last axis, the one normalized) stay contiguous and at most two other dims remain
     * (PyTorch 1.13's batch-first encoder layer transposes its attention back before the
     * residual: [S,B,E] -> [B,S,E]); other views of it are copied first. */
    float eps;
    int64_t axis;
    if (elementwise_view && code == 0 &&
        op_layer_norm_reader(c, op_graph_node(c, reader)->outputs[0], &scale, &bias, &eps, &axis) >= 0) {
        int64_t vs[VKI_MAX_RANK];
        for (int k = 0; k < x->rank; k++) vs[k] = src[perm[k]];
        if (axis < 0) axis += y->rank;
        elementwise_view = axis == y->rank - 1 && norm_rows_view_ok(y->rank, y->dims, vs, x->permuted ? x->view_elem : 0);
    }
    /* A Transpose that only a LayerNormalization over its last axis reads, followed by the
     * inverse Transpose (ConvNeXt's channels-last LayerNormalization inside NCHW): a permuted
     * view that the LayerNormalization normalizes through its strides into the second
     * Transpose's output (src/ops/normalization.c channel_layer_norm): neither is a copy */
    int64_t perm64[VKI_MAX_RANK];
    for (int k = 0; k < x->rank; k++) perm64[k] = perm[k];
    /* (both read X's elements whole, in one binding, from X's own row-major layout) */
    bool whole_x = y && !mm && !x->permuted && !x->split_inner && dtype_is_float(x->dtype) &&
                   (uint64_t)shape_numel(x->dims, x->rank) * 4 + x->view_offset <= op_max_binding_bytes(c);
    bool channel_ln = whole_x && norm_channels_between(c, op_out_index(c, 0), perm64, x->rank) >= 0;
    /* A Transpose whose output is split by Gathers of constant indices along its first axis,
     * each read by a MatMul through views (PyTorch 2's nn.MultiheadAttention: q, k and v taken
     * from the in-projection after moving their axis first): a permuted view, each Gather a
     * view of it (src/ops/gather.c) */
    int large = 0; /* at most the split axis, the sequence and the features: at batch 1 (at batch 8
                    * the heads of a view would need a split dim, which attention's kernels do not
                    * read: they stayed three dispatches, against one after a copy) */
    for (int k = 0; y && k < y->rank; k++) large += y->dims[k] > 1;
    bool gather_view = whole_x && large <= 3 && !channel_ln && op_gather_split_readers(c, op_out_index(c, 0));
    if ((product_view || elementwise_view || channel_ln || gather_view) && !x->host && !x->view_scale &&
        op_storage(c, op_in_index(c, 0)) == y->storage) {
        VKI_TRY(op_output_alias(c, 0, 0));
        if (y->alias_of >= 0) {
            y->permuted = true;
            y->view_elem = x->permuted ? x->view_elem : 0;
            for (int k = 0; k < x->rank; k++) y->view_strides[k] = src[perm[k]];
            if (x->split_inner > 0) { /* the split dim moves with the perm */
                for (int k = 0; k < x->rank; k++)
                    if (perm[k] == x->split_dim) y->split_dim = k;
                y->split_inner = x->split_inner, y->split_stride = x->split_stride;
            }
            return VKI_OK;
        }
    }
    if (x->permuted) { /* a view whose chain ended elsewhere: its elements, permuted, copied */
        strided_copy s = {0};
        int64_t ld[VKI_MAX_RANK + 1], ls[VKI_MAX_RANK + 1];
        int lrank, map[VKI_MAX_RANK];
        view_layout(x, &lrank, ld, ls, map);
        s.in_base = x->view_elem;
        for (int k = 0; k < x->rank; k++) { /* a split dim as its two parts, outer first */
            int parts = x->split_inner > 0 && perm[k] == x->split_dim ? 2 : 1;
            for (int j = 0; j < parts; j++) {
                s.dims[s.rank] = ld[map[perm[k]] + j];
                s.in_strides[s.rank++] = ls[map[perm[k]] + j];
            }
        }
        contiguous_strides(s.dims, s.rank, s.out_strides);
        return copy_values(c, op_in_index(c, 0), op_out_index(c, 0), &s, op_storage(c, op_in_index(c, 0)));
    }
    return permuted_copy(c, x->dims, x->rank, perm);
}

/* Whether Concat input i is a row-major view into its root held in the copy's storage (a
 * piece of a Split or a Slice along the outermost axes, op_output_offset_view, or a reshape
 * of one): its root, or -1. */
static int concat_piece_root(op_ctx *c, int i)
{
    plan_value *x = op_in(c, i);
    if (x->host || x->alias_of < 0 || x->permuted || x->view_elem || x->view_scale) return -1;
    int root = op_root(c, op_in_index(c, i));
    plan_value *r = op_value(c, root);
    if (r->storage != copy_storage(c, 0) || shape_numel(r->dims, r->rank) > INT32_MAX ||
        (uint64_t)shape_numel(r->dims, r->rank) * storage_size(r->storage) > op_max_binding_bytes(c))
        return -1;
    return root;
}

/* The last input of the run that starts at input i of consecutive pieces of one root: views
 * whose elements follow one another in the root, each filling one contiguous stretch of the
 * output (every dim before the axis 1). ACT's encoder input is such a run: `list(tokens)`
 * cuts a [300, 1, 512] map into 300 pieces (a Split, or 300 Slices, and Squeezes) that
 * `torch.stack` puts back after two more tokens; copied one piece a dispatch, that was 610 of
 * its 849 dispatches and 47% of its GPU time on the H200. Returns i where there is no run. */
static int concat_run_end(op_ctx *c, int i, const int64_t *dims, int axis)
{
    plan_value *y = op_out(c, 0);
    if (!y || (uint64_t)shape_numel(dims, y->rank) * storage_size(copy_storage(c, 0)) > op_max_binding_bytes(c)) return i;
    for (int k = 0; k < axis; k++)
        if (dims[k] != 1) return i;
    int root = concat_piece_root(c, i), last = i;
    if (root < 0) return i;
    uint64_t elem = storage_size(op_value(c, root)->storage);
    while (last + 1 < op_input_count(c) && concat_piece_root(c, last + 1) == root) {
        plan_value *x = op_in(c, last), *next = op_in(c, last + 1);
        if (next->view_offset != x->view_offset + (uint64_t)shape_numel(x->dims, x->rank) * elem) break;
        last++;
    }
    return last;
}

/* Inputs first..last (a run of concat_run_end) copied from their root into the output from
 * element out_base on, in one dispatch. */
static vki_status concat_run_copy(op_ctx *c, int first, int last, int64_t out_base)
{
    int root = op_root(c, op_in_index(c, first));
    gpu_storage st = op_value(c, root)->storage;
    int64_t count = 0;
    for (int k = first; k <= last; k++) count += shape_numel(op_in(c, k)->dims, op_in(c, k)->rank);
    strided_copy s = {.rank = 1, .dims = {count}, .in_strides = {1}, .out_strides = {1},
                      .in_base = (int64_t)(op_in(c, first)->view_offset / storage_size(st)), .out_base = out_base};
    return copy_values(c, root, op_out_index(c, 0), &s, st);
}

static vki_status plan_concat(op_ctx *c)
{
    int n = op_input_count(c);
    if (n < 1) return op_error(c, VKI_ERROR_MODEL, "Concat needs at least one input");
    for (int i = 0; i < n; i++)
        if (!op_has_input(c, i)) return op_error(c, VKI_ERROR_MODEL, "input %d is missing", i);
    plan_value *x0 = op_in(c, 0);
    const ir_attr *axis_attr = ir_find_attr(c->node, "axis");
    if (!axis_attr && c->opset >= 4) return op_error(c, VKI_ERROR_MODEL, "Concat needs the 'axis' attribute");
    int axis;
    VKI_TRY(op_axis(c, axis_attr ? axis_attr->i : 1, x0->rank, &axis));
    int64_t dims[VKI_MAX_RANK];
    memcpy(dims, x0->dims, sizeof dims);
    dims[axis] = 0;
    for (int i = 0; i < n; i++) {
        plan_value *x = op_in(c, i);
        if (x->dtype != x0->dtype) return op_error(c, VKI_ERROR_MODEL, "inputs have different dtypes");
        if (x->rank != x0->rank) return op_error(c, VKI_ERROR_SHAPE, "inputs have different ranks");
        for (int k = 0; k < x->rank; k++)
            if (k != axis && x->dims[k] != x0->dims[k])
                return op_error(c, VKI_ERROR_SHAPE, "input %d differs from input 0 in dimension %d", i, k);
        dims[axis] += x->dims[axis];
    }
    VKI_TRY(op_set_output(c, 0, x0->dtype, x0->rank, dims));
    bool fold = movement_folds(c);
    if (fold) movement_alloc_host_outputs(c);
    int64_t out_strides[VKI_MAX_RANK], offset = 0;
    contiguous_strides(dims, x0->rank, out_strides);
    for (int i = 0; i < n; i++) {
        int last = fold ? i : concat_run_end(c, i, dims, axis);
        if (last > i) { /* inputs i..last: one copy of their root's elements */
            VKI_TRY(concat_run_copy(c, i, last, offset * out_strides[axis]));
            for (int k = i; k <= last; k++) offset += op_in(c, k)->dims[axis];
            i = last;
            continue;
        }
        plan_value *x = op_in(c, i);
        strided_copy s = {0};
        s.rank = x->rank;
        memcpy(s.dims, x->dims, (size_t)x->rank * sizeof *s.dims);
        contiguous_strides(x->dims, x->rank, s.in_strides);
        memcpy(s.out_strides, out_strides, sizeof out_strides);
        s.out_base = offset * (x->rank ? out_strides[axis] : 0);
        offset += x->dims[axis];
        VKI_TRY(copy_run(c, i, 0, &s, fold));
    }
    return VKI_OK;
}

/* Reads an integer list given as an attribute (before `input_since`) or a constant input. */
static vki_status ints_from(op_ctx *c, const char *attr, int input, int64_t input_since, int64_t *out, int *count)
{
    if (c->opset < input_since) {
        const int64_t *v;
        int n = ir_attr_ints(c->node, attr, &v);
        if (n > VKI_MAX_RANK) return op_error(c, VKI_ERROR_UNSUPPORTED, "'%s' has more than %d entries", attr, VKI_MAX_RANK);
        if (n >= 0) memcpy(out, v, (size_t)n * sizeof *v);
        *count = n;
        return VKI_OK;
    }
    if (!op_has_input(c, input)) {
        *count = -1;
        return VKI_OK;
    }
    return op_const_ints(c, input, out, VKI_MAX_RANK, count);
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Whether the elements a copy reads form one contiguous run of its input (then the output
 * can be a view of it at s->in_base, op_output_offset_view). */
static bool one_run(const strided_copy *s)
{
    strided_copy run = *s;
    copy_collapse(&run);
    return run.rank == 1 && (run.in_strides[0] == 1 || run.dims[0] == 1);
}

/* Output i, the elements of X that strided copy s (forward steps) would move, as a view of X at
 * their strides and first element, where only an element-wise Add, Sub, Mul or Div reads it
 * (FiLM's scale and shift, chunks of one conditioning vector; src/ops/binary.c reads it in
 * place, or copies it where its pass cannot) or a MatMul does, through Reshapes, Transposes and
 * a constant scale that are views in turn (attention's q, k and v cut from one projection's
 * columns by a Slice or a Split: the product kernels take the first element and the strides,
 * src/ops/matmul.c). Whether it was taken. */
static bool strided_view(op_ctx *c, int i, const strided_copy *s)
{
    plan_value *x = op_in(c, 0), *y = op_out(c, i);
    int operand;
    bool direct;
    if (!y || !op_fusion_on(c) || !dtype_is_float(x->dtype) || x->host || x->permuted || x->view_scale ||
        shape_numel(y->dims, y->rank) == 0 || op_storage(c, op_in_index(c, 0)) != y->storage)
        return false;
    /* the reader binds X whole, from its start (in words, as binary.c counts) */
    if (x->view_offset + (uint64_t)shape_numel(x->dims, x->rank) * 4 > op_max_binding_bytes(c)) return false;
    if (op_arithmetic_reader(c, op_out_index(c, i), NULL) < 0 &&
        op_product_reader(c, op_out_index(c, i), &operand, &direct) == NULL)
        return false;
    /* (not op_output_alias: the view has fewer elements than X; it is bound from X's start) */
    y->alias_of = op_in_index(c, 0);
    y->view_offset = x->view_offset;
    y->permuted = true;
    y->view_elem = s->in_base;
    memcpy(y->view_strides, s->in_strides, sizeof s->in_strides[0] * (size_t)x->rank);
    return true;
}

static vki_status plan_slice(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, c->opset < 10 ? 1 : 3, c->opset < 10 ? 1 : 5));
    plan_value *x = op_in(c, 0);
    int64_t starts[VKI_MAX_RANK], ends[VKI_MAX_RANK], axes[VKI_MAX_RANK], steps[VKI_MAX_RANK];
    int n_starts, n_ends, n_axes, n_steps = -1;
    VKI_TRY(ints_from(c, "starts", 1, 10, starts, &n_starts));
    VKI_TRY(ints_from(c, "ends", 2, 10, ends, &n_ends));
    VKI_TRY(ints_from(c, "axes", 3, 10, axes, &n_axes));
    if (c->opset >= 10) VKI_TRY(ints_from(c, "steps", 4, 10, steps, &n_steps));
    if (n_starts < 0 || n_ends != n_starts)
        return op_error(c, VKI_ERROR_MODEL, "starts and ends must be given with the same length");
    if (n_axes >= 0 && n_axes != n_starts) return op_error(c, VKI_ERROR_MODEL, "axes and starts differ in length");
    if (n_steps >= 0 && n_steps != n_starts) return op_error(c, VKI_ERROR_MODEL, "steps and starts differ in length");
    int64_t begin[VKI_MAX_RANK] = {0}, step[VKI_MAX_RANK], dims[VKI_MAX_RANK];
    bool seen[VKI_MAX_RANK] = {false};
    for (int k = 0; k < x->rank; k++) {
        step[k] = 1;
        dims[k] = x->dims[k];
    }
    for (int i = 0; i < n_starts; i++) {
        int axis;
        VKI_TRY(op_axis(c, n_axes >= 0 ? axes[i] : i, x->rank, &axis));
        if (seen[axis]) return op_error(c, VKI_ERROR_MODEL, "axis %d is sliced twice", axis);
        seen[axis] = true;
        int64_t d = x->dims[axis], s = n_steps >= 0 ? steps[i] : 1, b = starts[i], e = ends[i];
        if (s == 0) return op_error(c, VKI_ERROR_MODEL, "a step is 0");
        if (b < 0) b += d;
        if (e < 0) e += d;
        if (s > 0) {
            b = clamp64(b, 0, d);
            e = clamp64(e, 0, d);
            dims[axis] = e > b ? (e - b + s - 1) / s : 0;
        } else {
            b = clamp64(b, 0, d - 1);
            e = clamp64(e, -1, d - 1);
            dims[axis] = b > e ? (b - e - s - 1) / -s : 0;
        }
        if (d == 0) dims[axis] = 0;
        begin[axis] = b;
        step[axis] = s;
    }
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, dims));
    strided_copy s = {0};
    int64_t in_strides[VKI_MAX_RANK];
    contiguous_strides(x->dims, x->rank, in_strides);
    s.rank = x->rank;
    for (int k = 0; k < x->rank; k++) {
        s.dims[k] = dims[k];
        s.in_base += begin[k] * in_strides[k];
        s.in_strides[k] = in_strides[k] * step[k];
    }
    contiguous_strides(dims, x->rank, s.out_strides);
    bool fold = movement_folds(c);
    if (fold) movement_alloc_host_outputs(c);
    /* elements that lie together in X (a run of rows along the outermost sliced axis): a view */
    if (!fold && one_run(&s) && op_output_offset_view(c, 0, 0, s.in_base)) return VKI_OK;
    bool forward = true;
    for (int k = 0; k < x->rank; k++) forward = forward && step[k] > 0;
    if (forward && !fold && strided_view(c, 0, &s)) return VKI_OK;
    return copy_run(c, 0, 0, &s, fold);
}

/* Any number of outputs: the TorchScript exporter splits ACT's 300 action queries one by one. */
static vki_status split_outputs(op_ctx *c, int axis, int64_t *sizes, int n_out)
{
    plan_value *x = op_in(c, 0);
    int n_sizes = -1;
    if (c->opset < 13) {
        const int64_t *v;
        n_sizes = ir_attr_ints(c->node, "split", &v);
        if (n_sizes > n_out) return op_error(c, VKI_ERROR_MODEL, "split has %d entries for %d outputs", n_sizes, n_out);
        if (n_sizes > 0) memcpy(sizes, v, (size_t)n_sizes * sizeof *v);
    } else if (op_has_input(c, 1)) {
        plan_value *s = op_in(c, 1);
        if (s->shaped && shape_numel(s->dims, s->rank) > n_out)
            return op_error(c, VKI_ERROR_MODEL, "split has %lld entries for %d outputs", (long long)shape_numel(s->dims, s->rank), n_out);
        VKI_TRY(op_const_ints(c, 1, sizes, n_out, &n_sizes));
    }
    int64_t d = x->dims[axis];
    if (n_sizes >= 0 && ir_find_attr(c->node, "num_outputs"))
        return op_error(c, VKI_ERROR_MODEL, "both split and num_outputs are given");
    if (n_sizes >= 0) {
        if (n_sizes != n_out) return op_error(c, VKI_ERROR_MODEL, "split has %d entries for %d outputs", n_sizes, n_out);
        int64_t total = 0;
        for (int i = 0; i < n_sizes; i++) {
            if (sizes[i] < 0) return op_error(c, VKI_ERROR_MODEL, "split sizes must not be negative");
            total += sizes[i];
        }
        if (total != d) return op_error(c, VKI_ERROR_SHAPE, "split sizes add up to %lld, the axis has %lld", (long long)total, (long long)d);
    } else {
        int64_t parts = ir_attr_int(c->node, "num_outputs", n_out);
        if (parts != n_out) return op_error(c, VKI_ERROR_MODEL, "num_outputs is %lld but the node has %d outputs", (long long)parts, n_out);
        int64_t chunk = (d + parts - 1) / parts; /* opset 18: the last chunk may be smaller */
        if (c->opset < 18 && d % parts)
            return op_error(c, VKI_ERROR_SHAPE, "axis of size %lld does not split into %d equal parts", (long long)d, n_out);
        for (int i = 0; i < n_out; i++) sizes[i] = clamp64(d - i * chunk, 0, chunk);
    }
    for (int i = 0; i < n_out; i++) {
        int64_t dims[VKI_MAX_RANK];
        memcpy(dims, x->dims, sizeof dims);
        dims[axis] = sizes[i];
        VKI_TRY(op_set_output(c, i, x->dtype, x->rank, dims));
    }
    bool fold = movement_folds(c);
    if (fold) movement_alloc_host_outputs(c);
    int64_t in_strides[VKI_MAX_RANK], offset = 0;
    contiguous_strides(x->dims, x->rank, in_strides);
    for (int i = 0; i < n_out; i++) {
        strided_copy s = {0};
        s.rank = x->rank;
        memcpy(s.dims, x->dims, (size_t)x->rank * sizeof *s.dims);
        s.dims[axis] = sizes[i];
        memcpy(s.in_strides, in_strides, sizeof in_strides);
        contiguous_strides(s.dims, s.rank, s.out_strides);
        s.in_base = offset * in_strides[axis];
        offset += sizes[i];
        /* a piece whose elements lie together in X is a view */
        if (!fold && op_out(c, i) && one_run(&s) && op_output_offset_view(c, i, 0, s.in_base)) continue;
        /* else one that only element-wise arithmetic or a MatMul reads is a strided view (the
         * q, k and v of VQ-BeT's and ACT's attention: 24 and 18 copy dispatches) */
        if (!fold && strided_view(c, i, &s)) continue;
        VKI_TRY(copy_run(c, 0, i, &s, fold));
    }
    return VKI_OK;
}

static vki_status plan_split(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 2));
    plan_value *x = op_in(c, 0);
    int axis, n_out = op_output_count(c);
    VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", 0), x->rank, &axis));
    if (n_out < 1) return op_error(c, VKI_ERROR_MODEL, "Split needs at least one output");
    int64_t *sizes = malloc((size_t)n_out * sizeof *sizes);
    if (!sizes) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory for %d split sizes", n_out);
    vki_status st = split_outputs(c, axis, sizes, n_out);
    free(sizes);
    return st;
}

static vki_status plan_expand(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    plan_value *x = op_in(c, 0);
    int64_t shape[VKI_MAX_RANK], dims[VKI_MAX_RANK];
    int n;
    VKI_TRY(op_const_ints(c, 1, shape, VKI_MAX_RANK, &n));
    int rank = n > x->rank ? n : x->rank;
    strided_copy s = {0};
    int64_t in_strides[VKI_MAX_RANK];
    contiguous_strides(x->dims, x->rank, in_strides);
    s.rank = rank;
    for (int k = 0; k < rank; k++) {
        int xk = k - (rank - x->rank), sk = k - (rank - n);
        int64_t a = xk >= 0 ? x->dims[xk] : 1, b = sk >= 0 ? shape[sk] : 1;
        if (a != b && a != 1 && b != 1)
            return op_error(c, VKI_ERROR_SHAPE, "dimension %lld cannot expand to %lld", (long long)a, (long long)b);
        dims[k] = a == 1 ? b : a;
        s.dims[k] = dims[k];
        s.in_strides[k] = xk >= 0 && a != 1 ? in_strides[xk] : 0;
    }
    VKI_TRY(op_set_output(c, 0, x->dtype, rank, dims));
    contiguous_strides(dims, rank, s.out_strides);
    bool fold = movement_folds(c);
    if (fold) movement_alloc_host_outputs(c);
    return copy_run(c, 0, 0, &s, fold);
}

static vki_status plan_tile(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    if (c->opset < 6) return op_error(c, VKI_ERROR_UNSUPPORTED, "Tile before opset 6 (tiles/axis inputs) is not supported");
    plan_value *x = op_in(c, 0);
    int64_t repeats[VKI_MAX_RANK], dims[VKI_MAX_RANK];
    int n;
    VKI_TRY(op_const_ints(c, 1, repeats, VKI_MAX_RANK, &n));
    if (n != x->rank) return op_error(c, VKI_ERROR_MODEL, "repeats has %d entries for an input of rank %d", n, x->rank);
    for (int k = 0; k < n; k++) {
        if (repeats[k] < 0) return op_error(c, VKI_ERROR_MODEL, "repeats must not be negative");
        dims[k] = x->dims[k] * repeats[k];
    }
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, dims));
    /* the output viewed as [r0, d0, r1, d1, ...]: the repeat index does not move the input */
    int64_t in_strides[VKI_MAX_RANK], out_strides[VKI_MAX_RANK];
    contiguous_strides(x->dims, x->rank, in_strides);
    contiguous_strides(dims, x->rank, out_strides);
    strided_copy s = {0};
    s.rank = 2 * x->rank;
    for (int k = 0; k < x->rank; k++) {
        s.dims[2 * k] = repeats[k];
        s.in_strides[2 * k] = 0;
        s.out_strides[2 * k] = x->dims[k] * out_strides[k];
        s.dims[2 * k + 1] = x->dims[k];
        s.in_strides[2 * k + 1] = in_strides[k];
        s.out_strides[2 * k + 1] = out_strides[k];
    }
    bool fold = movement_folds(c);
    if (fold) movement_alloc_host_outputs(c);
    return copy_run(c, 0, 0, &s, fold);
}

static vki_status block_size(op_ctx *c, int64_t *b)
{
    plan_value *x = op_in(c, 0);
    if (x->rank != 4) return op_error(c, VKI_ERROR_SHAPE, "the input must have rank 4 (N, C, H, W)");
    const ir_attr *a = ir_find_attr(c->node, "blocksize");
    if (!a || a->i <= 0) return op_error(c, VKI_ERROR_MODEL, "needs a positive 'blocksize' attribute");
    *b = a->i;
    return VKI_OK;
}

static vki_status plan_depth_to_space(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *x = op_in(c, 0);
    int64_t b = 1; /* block_size sets it or fails; gcc -O3 cannot see that (maybe-uninitialized) */
    VKI_TRY(block_size(c, &b));
    const char *mode = ir_attr_string(c->node, "mode", "DCR");
    bool crd = !strcmp(mode, "CRD");
    if (!crd && strcmp(mode, "DCR")) return op_error(c, VKI_ERROR_MODEL, "mode '%s' is neither DCR nor CRD", mode);
    int64_t n = x->dims[0], ch = x->dims[1], h = x->dims[2], w = x->dims[3];
    if (ch % (b * b)) return op_error(c, VKI_ERROR_SHAPE, "channels are not a multiple of blocksize^2 = %lld", (long long)(b * b));
    int64_t co = ch / (b * b), dims[4] = {n, co, h * b, w * b};
    VKI_TRY(op_set_output(c, 0, x->dtype, 4, dims));
    if (crd) {
        int64_t view[6] = {n, co, b, b, h, w};
        int perm[6] = {0, 1, 4, 2, 5, 3};
        return permuted_copy(c, view, 6, perm);
    }
    int64_t view[6] = {n, b, b, co, h, w};
    int perm[6] = {0, 3, 4, 1, 5, 2};
    return permuted_copy(c, view, 6, perm);
}

static vki_status plan_space_to_depth(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *x = op_in(c, 0);
    int64_t b = 1; /* block_size sets it or fails; gcc -O3 cannot see that (maybe-uninitialized) */
    VKI_TRY(block_size(c, &b));
    int64_t n = x->dims[0], ch = x->dims[1], h = x->dims[2], w = x->dims[3];
    if (h % b || w % b) return op_error(c, VKI_ERROR_SHAPE, "height and width must be multiples of blocksize %lld", (long long)b);
    int64_t dims[4] = {n, ch * b * b, h / b, w / b};
    VKI_TRY(op_set_output(c, 0, x->dtype, 4, dims));
    /* opset 28's mode: the output's channels in (block row, block column, channel) order (DCR,
     * the default) or (channel, block row, block column) (CRD) */
    const char *mode = ir_attr_string(c->node, "mode", "DCR");
    bool crd = !strcmp(mode, "CRD");
    if (!crd && strcmp(mode, "DCR")) return op_error(c, VKI_ERROR_MODEL, "mode '%s' is neither DCR nor CRD", mode);
    int64_t view[6] = {n, ch, h / b, b, w / b, b};
    int perm_dcr[6] = {0, 3, 5, 1, 2, 4}, perm_crd[6] = {0, 1, 3, 5, 2, 4};
    return permuted_copy(c, view, 6, crd ? perm_crd : perm_dcr);
}

#define ALL_DTYPES OP_DTYPES_ALL
const op_def op_Transpose = {"Transpose", "", ALL_DTYPES, "", plan_transpose};
const op_def op_Concat = {"Concat", "", ALL_DTYPES, "", plan_concat};
const op_def op_Slice = {"Slice", "", ALL_DTYPES, "starts/ends/axes/steps must be plan-time constants", plan_slice};
const op_def op_Split = {"Split", "", ALL_DTYPES, "split sizes must be plan-time constants", plan_split};
const op_def op_Expand = {"Expand", "", ALL_DTYPES, "the shape must be a plan-time constant", plan_expand};
const op_def op_Tile = {"Tile", "", ALL_DTYPES, "repeats must be a plan-time constant; opset >= 6", plan_tile};
const op_def op_DepthToSpace = {"DepthToSpace", "", ALL_DTYPES, "", plan_depth_to_space};
const op_def op_SpaceToDepth = {"SpaceToDepth", "", ALL_DTYPES, "", plan_space_to_depth};
