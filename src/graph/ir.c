/* Attribute lookups on IR nodes. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

const ir_attr *ir_find_attr(const ir_node *node, const char *name)
{
    for (int i = 0; i < node->n_attrs; i++)
        if (strcmp(node->attrs[i].name, name) == 0) return &node->attrs[i];
    return NULL;
}

int64_t ir_attr_int(const ir_node *node, const char *name, int64_t fallback)
{
    const ir_attr *a = ir_find_attr(node, name);
    return a && a->type == ATTR_INT ? a->i : fallback;
}

float ir_attr_float(const ir_node *node, const char *name, float fallback)
{
    const ir_attr *a = ir_find_attr(node, name);
    return a && a->type == ATTR_FLOAT ? a->f : fallback;
}

const char *ir_attr_string(const ir_node *node, const char *name, const char *fallback)
{
    const ir_attr *a = ir_find_attr(node, name);
    return a && a->type == ATTR_STRING && a->s ? a->s : fallback;
}

int ir_attr_ints(const ir_node *node, const char *name, const int64_t **ints)
{
    const ir_attr *a = ir_find_attr(node, name);
    if (!a || a->type != ATTR_INTS) return -1;
    *ints = a->ints;
    return a->count;
}

void ir_graph_free(ir_graph *g) { arena_free(&g->arena); }

void ir_graph_free_expanded(ir_graph *g)
{
    while (g && g->expanded) {
        ir_graph *base = g->base;
        arena_free(&g->arena);
        free(g->values);
        free(g->nodes);
        free(g);
        g = base;
    }
}
