/* If, Loop and Scan: decided at plan time, then inlined. Each op's plan function only finds
 * the decision (If's branch, Loop's trip count, Scan's length) from values known at plan time
 * and records it; the planner then replaces the node by its subgraph's nodes (one copy per
 * iteration, src/onnx/expand.c: ir_graph_expand) and plans the expanded graph, so the
 * body's math runs as ordinary GPU dispatches unrolled into the command buffer. A condition or
 * trip count computed from graph inputs keys the plan on those inputs (one plan per distinct
 * value, as for a shape fed by an input). A condition computed on the GPU from data is not
 * read: If runs both branches and Where selects the outputs on the GPU, a Loop of a few
 * iterations runs all M with each one's state kept only while the condition holds
 * (IR_DECIDE_ON_GPU). A trip count computed on the GPU, and the condition of a Loop without
 * M or with scan outputs, are read back (plan_loop). */
#include "op.h"
#include "../plan/plan.h"

#include <stdlib.h>
#include <string.h>

/* Unrolled copies of a body, at most. */
#define CONTROL_MAX_TRIPS IR_MAX_TRIPS

/* Input i's single value when it is known at plan time. With on_gpu non-NULL, a bool (an If's
 * condition) or, with ints too, any scalar computed on the GPU from data that no small graph
 * input can key sets *on_gpu instead. */
static vki_status control_scalar(op_ctx *c, int i, const char *what, int64_t *out, bool *on_gpu, bool ints)
{
    plan_value *v = op_in(c, i);
    const char *name = c->plan->graph->values[op_in_index(c, i)].name;
    char shape[128];
    if (shape_numel(v->dims, v->rank) != 1)
        return op_error(c, VKI_ERROR_MODEL, "the %s ('%s') has shape %s; one element expected", what, name,
                        shape_str(v->dims, v->rank, shape, sizeof shape));
    if (on_gpu) *on_gpu = false;
    if (!v->host) {
        int k = op_keyable_input(c->plan, op_in_index(c, i));
        if (k >= 0) c->plan->wanted_input = k; /* the session plans again, keyed on that input */
        if (k < 0 && on_gpu && (v->dtype == VKI_DTYPE_BOOL || (ints && !dtype_is_float(v->dtype)))) {
            *on_gpu = true;
            return VKI_OK;
        }
        return op_error(c, VKI_ERROR_UNSUPPORTED,
                        "the %s ('%s') is computed on the GPU from data; vkinfer inlines control flow at plan time and "
                        "needs it known then (a constant, or computed from constants and small graph inputs it keys the "
                        "plan on)", what, name);
    }
    *out = host_read_i64(v->dtype, v->host, 0);
    return VKI_OK;
}

static vki_status decide(op_ctx *c, int64_t value)
{
    c->plan->decision[c->node_index] = value;
    c->plan->expand_pending = true;
    return VKI_OK;
}

static vki_status plan_if(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    int64_t cond = 0;
    bool on_gpu;
    VKI_TRY(control_scalar(c, 0, "condition", &cond, &on_gpu, false));
    return decide(c, on_gpu ? IR_DECIDE_ON_GPU : cond != 0);
}

/* A Loop's trip count M and condition, each known at plan time, or computed on the GPU from
 * data. A trip count from data is read back once. A condition from data is kept per iteration
 * on the GPU (all M iterations recorded, each one's state kept while the condition holds)
 * when M is known and there are no scan outputs; otherwise (no M, or scan outputs, whose
 * length it decides) it is read back: before each iteration, one wait each, the plan made for
 * the trip count found (planned again when a run finds another), at most PLAN_MAX_SIZES reads
 * a run. Without M and with a condition known at plan time, the body runs until its condition
 * turns false, at most CONTROL_MAX_TRIPS times. */

static vki_status plan_loop(op_ctx *c)
{
    if (op_input_count(c) < 2) return op_error(c, VKI_ERROR_MODEL, "Loop needs at least 2 inputs (M, cond)");
    int64_t trips = CONTROL_MAX_TRIPS, cond = 1, read = 0;
    bool bounded = op_has_input(c, 0), on_gpu = false, known = true;
    if (bounded) {
        bool m_on_gpu;
        VKI_TRY(control_scalar(c, 0, "trip count M", &trips, &m_on_gpu, true));
        if (m_on_gpu) {
            VKI_TRY(op_read_back(c, 0, CONTROL_MAX_TRIPS, &trips, &known));
            if (!known) return VKI_OK;
            read |= IR_DECIDE_READ_M;
        }
    }
    if (op_has_input(c, 1)) VKI_TRY(control_scalar(c, 1, "condition", &cond, &on_gpu, false));
    /* scan outputs: beyond the carried values (a Loop of the rest, src/onnx/expand.c, also takes
     * what it scanned so far as inputs) */
    bool scans = op_output_count(c) > op_input_count(c) - 2 - ir_attr_int(c->node, IR_LOOP_SCANNED, 0);
    if (on_gpu && trips > 0 && (!bounded || scans)) {
        VKI_TRY(op_read_back(c, 1, 1, &cond, &known));
        if (!known) return VKI_OK;
        on_gpu = false;
        read |= IR_DECIDE_READ_COND;
    }
    if (!cond || trips < 0) trips = 0;
    if (trips > CONTROL_MAX_TRIPS)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "trip count %lld: vkinfer unrolls loops and allows at most %d iterations",
                        (long long)trips, CONTROL_MAX_TRIPS);
    return decide(c, (on_gpu && trips > 0 ? IR_DECIDE_ON_GPU | trips : trips) | read);
}

static vki_status plan_scan(op_ctx *c)
{
    bool v8 = c->opset < 9;
    int first = v8 ? 1 : 0; /* Scan-8's input 0 is sequence_lens */
    if (v8 && op_has_input(c, 0))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "Scan-8 with sequence_lens (a length per batch entry) is not supported");
    int n_in = (int)ir_attr_int(c->node, "num_scan_inputs", -1);
    int n_state = op_input_count(c) - first - n_in;
    if (n_in < 1 || n_state < 0)
        return op_error(c, VKI_ERROR_MODEL, "num_scan_inputs %d with %d inputs", n_in, op_input_count(c));
    const int64_t *axes = NULL;
    int n_axes = v8 ? -1 : ir_attr_ints(c->node, "scan_input_axes", &axes);
    if (n_axes >= 0 && n_axes != n_in)
        return op_error(c, VKI_ERROR_MODEL, "scan_input_axes has %d entries for %d scan inputs", n_axes, n_in);
    int64_t len = -1, batch = -1;
    for (int j = 0; j < n_state + n_in; j++) {
        if (!op_has_input(c, first + j)) return op_error(c, VKI_ERROR_MODEL, "input %d is missing", first + j);
        plan_value *x = op_in(c, first + j);
        if (v8) { /* every input has the batch axis 0 */
            if (x->rank < (j < n_state ? 1 : 2))
                return op_error(c, VKI_ERROR_SHAPE, "input %d has rank %d: Scan-8 needs a batch axis%s", first + j, x->rank,
                                j < n_state ? "" : " and a scan axis");
            if (batch >= 0 && x->dims[0] != batch)
                return op_error(c, VKI_ERROR_SHAPE, "input %d has batch %lld, others %lld", first + j, (long long)x->dims[0],
                                (long long)batch);
            batch = x->dims[0];
        }
        if (j < n_state) continue;
        int axis = 1;
        if (!v8) VKI_TRY(op_axis(c, n_axes >= 0 ? axes[j - n_state] : 0, x->rank, &axis));
        if (len >= 0 && x->dims[axis] != len)
            return op_error(c, VKI_ERROR_SHAPE, "scan input %d has %lld steps along axis %d, scan input 0 has %lld",
                            j - n_state, (long long)x->dims[axis], axis, (long long)len);
        len = x->dims[axis];
    }
    if ((len == 0 || batch == 0) && op_output_count(c) > n_state)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "a scan of 0 steps: its scan outputs' shapes are only known to the body");
    if (len > CONTROL_MAX_TRIPS || (v8 && batch * len > CONTROL_MAX_TRIPS))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "%lld steps: vkinfer unrolls scans and allows at most %d", (long long)len,
                        CONTROL_MAX_TRIPS);
    return decide(c, v8 ? batch << 32 | len : len);
}

#define CF_DTYPES OP_DTYPES_ALL
const op_def op_If = {"If", "", CF_DTYPES,
                      "the branch known at plan time is inlined; with a condition computed on the GPU both branches run "
                      "and Where selects (their outputs must have one shape; sequence and optional outputs need the "
                      "condition known at plan time)",
                      plan_if, OP_NOT_CONSTANT};
const op_def op_Loop = {"Loop", "", CF_DTYPES,
                        "unrolled at plan time; a condition computed on the GPU runs all M iterations, each one's state "
                        "kept while it holds, or is read back before each iteration (no M, or scan outputs; at most 64 "
                        "reads a run); an M computed on the GPU is read back once; no sequence values on a GPU condition",
                        plan_loop, OP_INPUT0_OPTIONAL | OP_TAKES_LISTS | OP_NOT_CONSTANT};
const op_def op_Scan = {"Scan", "", CF_DTYPES, "unrolled at plan time; Scan-8's sequence_lens is not supported",
                        plan_scan, OP_INPUT0_OPTIONAL_OPSET8 | OP_NOT_CONSTANT};
