/* The ONNX reader's internals shared with the control-flow expander (expand.c): the name
 * table of the graph being built and the parsers of its pieces. */
#ifndef VKI_ONNX_READER_INTERNAL_H
#define VKI_ONNX_READER_INTERNAL_H

#include "onnx_reader.h"
#include "protobuf.h"

typedef struct reader {
    onnx_model *model;
    ir_graph *g;
    /* name -> value index, open addressing */
    int *table;
    size_t table_cap;
    /* expanding a subgraph (ir_graph_expand): the name prefixes of the scopes, outermost
     * first; the last one prefixes the names the subgraph defines */
    const char *const *scopes;
    int n_scopes;
} reader;

vki_status reader_bad(const char *what);
vki_status reader_oom(void);
vki_status parse_tensor(const uint8_t *p, size_t len, ir_tensor *t, vki_arena *arena, onnx_model *m);
/* name -> value index, -1 if absent */
int find_value(reader *rd, const char *name);
vki_status grow_table(reader *rd);
/* Adds a value named `name` (which must not exist). */
vki_status add_value(reader *rd, const char *name, int *index);
vki_status parse_value_info(reader *rd, const pb_field *vf, const char **name, ir_value *info);
/* NodeProto -> g->nodes[node_index] (zeroed); names it defines get the innermost scope's prefix. */
vki_status parse_node(reader *rd, const pb_field *nf, int node_index);
/* A name a node reads: the innermost scope that defines it, else the main graph; -2: out of memory. */
int resolve_value(reader *rd, const char *name);

#endif
