/* vki_model_inspect: what a model file holds (inputs, outputs, opset, ops and whether vkinfer
 * runs them, weight bytes) without a Vulkan device, for `vkinfer info` and bindings. Kept out
 * of session.c: it shares only the ONNX reader and the op registry. */
#include "../onnx/onnx_reader.h"
#include "../ops/registry.h"
#include "vkinfer.h"

#include <stdlib.h>
#include <string.h>

struct vki_model_report {
    onnx_model onnx;
    vki_model_summary summary;
    vki_model_op_use *ops; /* summary.op_type_count entries */
};

vki_status vki_model_inspect(const char *path, vki_model_report **out)
{
    if (!path || !out) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_model_inspect: NULL argument");
    *out = NULL;
    vki_model_report *r = calloc(1, sizeof *r);
    if (!r) return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    vki_status st = onnx_model_load(path, &r->onnx);
    if (st != VKI_OK) {
        free(r);
        return st;
    }
    const ir_graph *g = &r->onnx.graph;
    /* at most one entry per node, so n_nodes entries always suffice */
    r->ops = calloc((size_t)g->n_nodes + 1, sizeof *r->ops);
    if (!r->ops) {
        vki_model_report_destroy(r);
        return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    vki_model_summary *s = &r->summary;
    s->ir_version = g->ir_version;
    s->opset = g->opset;
    s->input_count = (uint32_t)g->n_inputs;
    s->output_count = (uint32_t)g->n_outputs;
    s->node_count = (uint32_t)g->n_nodes;
    for (int v = 0; v < g->n_values; v++) {
        if (g->values[v].kind != VALUE_INITIALIZER) continue;
        s->initializer_count++;
        s->weight_bytes += g->values[v].init.bytes;
    }
    for (int n = 0; n < g->n_nodes; n++) {
        const ir_node *node = &g->nodes[n];
        uint32_t k = 0;
        while (k < s->op_type_count &&
               (strcmp(r->ops[k].op, node->op_type) || strcmp(r->ops[k].domain, node->domain)))
            k++;
        if (k == s->op_type_count) {
            r->ops[k] = (vki_model_op_use){node->op_type, node->domain, 0, op_find(node->domain, node->op_type) != NULL};
            s->op_type_count++;
        }
        r->ops[k].node_count++;
        if (!r->ops[k].supported) s->unsupported_node_count++;
    }
    *out = r;
    return VKI_OK;
}

void vki_model_report_destroy(vki_model_report *r)
{
    if (!r) return;
    onnx_model_free(&r->onnx);
    free(r->ops);
    free(r);
}

vki_status vki_model_report_summary(const vki_model_report *r, vki_model_summary *out)
{
    if (!r || !out) return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_model_report_summary: NULL argument");
    *out = r->summary;
    return VKI_OK;
}

vki_status vki_model_report_op(const vki_model_report *r, uint32_t index, vki_model_op_use *out)
{
    if (!r || !out || index >= r->summary.op_type_count)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_model_report_op: index %u out of range", index);
    *out = r->ops[index];
    return VKI_OK;
}

/* As session.c's describe_value: rank -1 when the model declares no shape. */
static void describe(const ir_value *v, vki_tensor_info *out)
{
    memset(out, 0, sizeof *out);
    out->name = v->name;
    out->dtype = v->dtype;
    out->rank = v->rank;
    for (int d = 0; d < v->rank; d++) {
        out->dims[d] = v->dims[d];
        out->dim_names[d] = v->dim_names[d];
    }
    out->kind = v->type_kind;
}

vki_status vki_model_report_input(const vki_model_report *r, uint32_t index, vki_tensor_info *out)
{
    if (!r || !out || index >= r->summary.input_count)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_model_report_input: index %u out of range", index);
    describe(&r->onnx.graph.values[r->onnx.graph.inputs[index]], out);
    return VKI_OK;
}

vki_status vki_model_report_output(const vki_model_report *r, uint32_t index, vki_tensor_info *out)
{
    if (!r || !out || index >= r->summary.output_count)
        return vki_fail(VKI_ERROR_INVALID_ARGUMENT, "vki_model_report_output: index %u out of range", index);
    describe(&r->onnx.graph.values[r->onnx.graph.outputs[index]], out);
    return VKI_OK;
}
