/* The graph IR: values, nodes and attributes as read from ONNX. Nothing here knows Vulkan.
 * A model's IR is immutable after load; each plan works on its own copy of value state. */
#ifndef VKI_IR_H
#define VKI_IR_H

#include "../util/util.h"

enum ir_attr_type {
    ATTR_UNDEFINED = 0, ATTR_FLOAT = 1, ATTR_INT = 2, ATTR_STRING = 3, ATTR_TENSOR = 4,
    ATTR_GRAPH = 5, ATTR_FLOATS = 6, ATTR_INTS = 7, ATTR_STRINGS = 8, ATTR_TENSORS = 9,
    ATTR_GRAPHS = 10, ATTR_SPARSE_TENSOR = 11, ATTR_SPARSE_TENSORS = 12, ATTR_TYPE_PROTO = 13,
    ATTR_TYPE_PROTOS = 14,
};

typedef struct ir_tensor {
    const char *name;
    vki_dtype dtype;
    int rank;
    int64_t dims[VKI_MAX_RANK];
    const void *data; /* into the file mapping (raw_data, external data) or the model arena */
    size_t bytes;
} ir_tensor;

typedef struct ir_attr {
    const char *name;
    enum ir_attr_type type;
    float f;
    int64_t i;
    const char *s; /* STRING, NUL-terminated copy */
    size_t s_len;
    int count; /* elements of FLOATS / INTS / STRINGS / TENSORS / GRAPHS */
    float *floats;
    int64_t *ints;
    const char **strings;
    ir_tensor *tensor;   /* TENSOR, or TENSORS[count] */
    const uint8_t *graph_bytes; /* GRAPH: the serialized GraphProto, parsed when an op needs it */
    size_t graph_len;
} ir_attr;

typedef struct ir_node {
    const char *name; /* never NULL: "" becomes "<op_type>_<index>" */
    const char *op_type;
    const char *domain; /* "" for ai.onnx */
    int n_inputs, n_outputs, n_attrs;
    int *inputs; /* value index, -1 for an omitted optional input */
    int *outputs;
    ir_attr *attrs;
    /* a node expanded from a subgraph (src/onnx/expand.c): the name prefixes of its scopes,
     * outermost first, which its subgraphs' outer-scope names resolve through */
    const char *const *scopes;
    int n_scopes;
} ir_node;

enum ir_value_kind { VALUE_INTERMEDIATE = 0, VALUE_INPUT, VALUE_INITIALIZER };

/* The declared type of a graph input or output (public numbers: vki_value_kind). dtype, rank
 * and dims describe the tensor, or a sequence's or optional's element tensor. */
enum ir_type_kind { IR_TENSOR = 0, IR_SEQUENCE = 1, IR_OPTIONAL = 2, IR_OPTIONAL_SEQUENCE = 3 };

typedef struct ir_value {
    const char *name;
    enum ir_value_kind kind;
    bool is_output;
    vki_dtype dtype; /* UNDEFINED until known */
    int rank;        /* -1 when the model does not declare a shape */
    int64_t dims[VKI_MAX_RANK]; /* -1 for a symbolic or unknown dimension */
    const char *dim_names[VKI_MAX_RANK];
    ir_tensor init; /* VALUE_INITIALIZER: its data */
    int producer;   /* node index, -1 for inputs, initializers and constants */
    uint8_t type_kind; /* enum ir_type_kind, as declared (graph inputs and outputs) */
} ir_value;

typedef struct ir_graph {
    vki_arena arena;
    ir_value *values;
    int n_values, cap_values;
    ir_node *nodes;
    int n_nodes;
    int *inputs; /* graph inputs that are not initializers */
    int n_inputs;
    int *outputs;
    int n_outputs;
    int64_t opset; /* version of the default (ai.onnx) domain */
    int64_t ir_version;
    /* a graph expanded from another (control flow inlined at plan time): its nodes and values
     * are malloc'ed and it shares strings with `base`, which is freed with it when owned */
    struct ir_graph *base;
    bool expanded;
} ir_graph;

const ir_attr *ir_find_attr(const ir_node *node, const char *name);
int64_t ir_attr_int(const ir_node *node, const char *name, int64_t fallback);
float ir_attr_float(const ir_node *node, const char *name, float fallback);
const char *ir_attr_string(const ir_node *node, const char *name, const char *fallback);
/* INTS attribute: count or -1 if absent. */
int ir_attr_ints(const ir_node *node, const char *name, const int64_t **ints);
void ir_graph_free(ir_graph *g);
/* Frees an expanded graph (and the expanded graphs it was made from). */
void ir_graph_free_expanded(ir_graph *g);

/* Expands the control-flow nodes (If, Loop, Scan, SequenceMap) of `src` that have a decision into plain
 * nodes: decision[n] is If's branch (1 then, 0 else), Loop's trip count, Scan's sequence
 * length, or SequenceMap's length N | mask << 32 (bit j of mask: input j is a sequence); INT64_MIN leaves node n as it is. Value indices of `src` keep their meaning (graph
 * inputs, outputs and initializers are unchanged); new values are intermediates. Takes
 * ownership of `src` when it is itself expanded. Defined in src/onnx/expand.c. */
vki_status ir_graph_expand(ir_graph *src, const int64_t *decision, ir_graph **out);
/* A decision made without the condition's value, which the GPU computes from data: If runs
 * both branches and selects each output by the condition (Where); Loop (decision = this flag |
 * the trip count M) runs all M iterations, keeping an iteration's state only while the
 * condition holds. Selected values must have one shape. */
#define IR_DECIDE_ON_GPU (INT64_C(1) << 62)
/* A Loop decided from values the plan read back from the GPU (src/ops/control.c): its trip
 * count M, its condition. The expansion keeps each read where the Loop was, as an Identity
 * of that input with attribute IR_READ_BACK = the largest value it may have (so that the
 * expanded plan reads the same values in the same order, and plans again when a run finds
 * another). */
#define IR_DECIDE_READ_M (INT64_C(1) << 61)
#define IR_DECIDE_READ_COND (INT64_C(1) << 60)
#define IR_READ_BACK "vkinfer.read_back"
/* Attributes of a Loop that continues another (the rest of a loop whose body computes its
 * condition, src/onnx/expand.c): the number of its first iteration, and how many scan outputs
 * it receives already stacked, as inputs after the loop-carried ones. */
#define IR_LOOP_FIRST_ITERATION "vkinfer.first_iteration"
#define IR_LOOP_SCANNED "vkinfer.scanned"
/* Unrolled copies of a Loop or Scan body, at most. */
#define IR_MAX_TRIPS 100000

#endif
