/* The views LayerNormalization's row kernel reads in place (norm_views.h). */
#include "norm_views.h"

#include <stdlib.h>
#include <string.h>

bool norm_rows_view_ok(int rank, const int64_t *dims, const int64_t *strides, int64_t elem)
{
    if (rank < 1 || elem != 0 || strides[rank - 1] != 1) return false;
    int leading = 0;
    for (int d = 0; d < rank - 1; d++) leading += dims[d] != 1;
    return leading <= 2;
}

int norm_channels_between(op_ctx *c, int v, const int64_t *perm, int rank)
{
    if (!c->vk->opts.channel_ln || !op_fusion_on(c) || rank < 2) return -1;
    int ln = op_only_reader(c, v, "LayerNormalization");
    if (ln < 0) return -1;
    const ir_node *n = op_graph_node(c, ln);
    if (*n->domain || n->n_inputs < 2 || n->inputs[0] != v || n->n_outputs < 1 || n->outputs[0] < 0) return -1;
    for (int o = 1; o < n->n_outputs; o++)
        if (n->outputs[o] >= 0) return -1; /* its statistics are read */
    int64_t axis = ir_attr_int(n, "axis", -1);
    if (axis != -1 && axis != rank - 1) return -1;
    int t2 = op_only_reader(c, n->outputs[0], "Transpose");
    if (t2 < 0) return -1;
    const ir_node *tn = op_graph_node(c, t2);
    const int64_t *p2;
    if (tn->n_outputs < 1 || tn->outputs[0] < 0 || ir_attr_ints(tn, "perm", &p2) != rank) return -1;
    for (int k = 0; k < rank; k++)
        if (p2[k] < 0 || p2[k] >= rank || perm[p2[k]] != k) return -1; /* back to the first's input order */
    return t2;
}
