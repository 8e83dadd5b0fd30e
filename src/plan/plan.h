/* A plan: one graph at one set of input shapes, turned into dispatches, memory placed by
 * liveness and one recorded command buffer that every run re-submits. */
#ifndef VKI_PLAN_H
#define VKI_PLAN_H

#include "op_api.h"

/* Initializers uploaded once per session and shared by all its plans (a plan for a new input
 * shape uploads only those no earlier plan needed, as a new block). */
typedef struct weight_cache {
    vk_buffer *blocks;
    int n_blocks;
    int *block_of;       /* per graph value: its block, or -1 while not uploaded */
    uint64_t *offset_of; /* per graph value: its offset in that block */
    uint64_t bytes;
} weight_cache;

vki_status weight_cache_init(weight_cache *wc, int n_values);

/* Constants are packed into device buffers of at most weight_block_limit bytes (1 GiB, or the
 * device's maxMemoryAllocationSize where smaller): a value starts a new block where it would
 * take the current one past the limit, so a model's weights are not bounded by one allocation. */
uint64_t weight_block_limit(const vk_context *vk);
uint64_t weight_block_place(uint64_t limit, uint64_t bytes, int *block, uint64_t *used);
void weight_cache_free(vk_context *vk, weight_cache *wc);

/* Data-dependent sizes a plan may depend on (see struct plan): NonZero-like outputs, and the
 * conditions of Loops read back, one per iteration (src/ops/control.c). */
#define PLAN_MAX_SIZES 64

typedef struct plan_dispatch {
    vk_pipeline *pipeline;
    uint32_t groups[3];
    uint8_t push[VK_PUSH_BYTES];
    uint32_t push_bytes;
    int n_bind;
    int bind[8];    /* value indices */
    bool writes[8]; /* which bindings are written (outputs) */
    uint64_t win_offset[8], win_size[8]; /* a window of the value in bytes; size 0 = all */
    int node;
    double flops; /* floating-point operations it computes (op_note_flops; 0: not counted) */
} plan_dispatch;

struct plan {
    vk_context *vk;
    weight_cache *cache; /* the session's; unchanged initializers live there */
    const ir_graph *graph;
    op_finder find_op;     /* the op table's lookup (plan_create's caller) */
    const op_def **defs;   /* per node: its op, NULL where the table has none */
    plan_value *values;
    int n_values, cap_values;
    int *temp_owner; /* for values past graph->n_values: the node that made them */
    plan_dispatch *dispatches;
    int n_dispatches, cap_dispatches;
    vki_arena arena; /* host constants made while planning */
    int current_node;
    /* device memory */
    vk_buffer intermediates, upload, download;
    /* the plan's own constants (PLAN_BUF_WEIGHTS): block b is weight_blocks[b], used
     * weight_block_bytes[b] bytes; weight_bytes is their sum */
    vk_buffer *weight_blocks;
    uint64_t *weight_block_bytes;
    int n_weight_blocks;
    int *same_bytes; /* per value: the constant whose device bytes it shares (memory.c), or -1 */
    uint64_t weight_bytes, arena_bytes, unshared_bytes;
    /* large host constants made while planning, by content (plan_share_host_constants): the
     * table's slots hold value indices or -1; hashes beside them */
    int *host_table;
    uint64_t *host_hashes;
    size_t host_cap, host_count;
    /* graph inputs and outputs as the tensors copied between host and device: a tensor is one,
     * a sequence its elements, an optional none or what it holds. Graph input i is
     * io_in[in_first[i] .. + in_count[i]) (in_count -1: an optional that is none); likewise
     * outputs. For a graph of tensors io_in is graph->inputs and io_out graph->outputs. */
    int *io_in, *in_first, *in_count, n_io_in;
    int *io_out, *out_first, *out_count, n_io_out;
    uint64_t *input_offsets;  /* in the upload buffer, per io_in entry */
    uint64_t *output_offsets; /* in the download buffer, per io_out entry */
    VkDescriptorPool pool;
    VkBufferView *views;      /* of the texel-buffer bindings, made with the descriptor sets */
    int n_views;
    VkCommandBuffer cmd;      /* the dispatches, recorded once */
    VkCommandBuffer cmd_in, cmd_out; /* input and output copies, re-recorded when bindings change */
    VkCommandPool io_pool;    /* the session's, which cmd_in and cmd_out come from */
    uint64_t io_generation;   /* the session's binding generation they were recorded for, 0: never */
    VkFence fence;
    bool profiling;
    VkQueryPool queries; /* n_dispatches + 1 timestamps when profiling */
    /* key and stats */
    int64_t *input_dims; /* n_io_in * VKI_MAX_RANK */
    /* inputs whose values the plan was made for (shape operands fed by graph inputs) */
    const bool *keyed;
    uint8_t *key_values; /* their data, concatenated */
    size_t key_bytes;
    int wanted_input; /* set when an op needs the value of this graph input */
    double plan_ms;
    uint32_t gpu_nodes, folded_nodes, aliased_nodes, fused_nodes;
    /* epilogue fusion: readers of each graph value, and nodes claimed by their producer */
    /* storage: float32 values held as halves (the fp16 execution mode) */
    bool fp16_mode;
    bool building; /* inside plan_create, which holds the context's plan lock */
    int *converted; /* [root * GPU_STORAGE_COUNT + storage]: a copy of root in that storage, or -1 */
    int *out_copy;  /* per value: this node's scratch copy of the output in its kernel's storage, or -1 */
    int *uses;     /* input slots of live nodes that read the value */
    int *shape_reads; /* of those, the Shape and Size nodes', which read only its dims */
    int *reader;   /* the last live node that reads its elements */
    int *ln_reader; /* a live LayerNormalization (or PATTERN_LAYER_NORM) whose X it is, whatever else reads it; -1: none */
    /* per value: made from dims and constants only (a Shape or Size, a Constant, or a node whose
     * inputs all are such or initializers), so a host constant once planned (attention's scale
     * computed from the query's shape) */
    bool *from_dims;
    int *fused;    /* per node: 1 + the input slot whose value's producer applied the node (its
                    * output is a view of that input); 0: planned as itself; PLAN_FUSED_DONE: an
                    * earlier node's kernel computed its output, which that node shaped
                    * (op_claim_computed) */
    uint8_t *pattern; /* per node: enum plan_pattern (src/plan/fuse.c) */
    int *pattern_in;  /* per node, PATTERN_INPUTS each: the inputs of the pattern whose last node this is (-1: none) */
    float *pattern_eps; /* per node: PATTERN_LAYER_NORM's and PATTERN_RMS_NORM's epsilon */
    bool no_fusion;   /* VKINFER_NO_FUSION: no patterns, no epilogues */
    /* control flow (src/ops/control.c): per node, If's branch, Loop's trip count or Scan's
     * length once decided (INT64_MIN: not a decided control node); when any is decided the
     * planner expands the graph and plans it again */
    int64_t *decision;
    bool expand_pending;
    ir_graph *owned_graph; /* the expanded graph this plan runs, freed with it */
    /* data-dependent sizes (op_data_size: NonZero, Compress, Unique, NonMaxSuppression). The
     * plan is made for sizes[0..n_sizes), taken by such nodes in planning order. Read k
     * (k < n_reads) copies the int32 scalar read_value[k] to the download buffer at
     * read_at + 16 k once dispatches [0, read_after[k]) ran; the command buffer is split
     * there (segments[k] ends with read k, cmd runs the rest), so that the session checks each
     * size before going on. A probe plan met a node whose size it was not made for: planning
     * stopped there, its last read is that size, and it has no outputs. */
    int64_t sizes[PLAN_MAX_SIZES];
    int n_sizes, n_reads;
    int read_value[PLAN_MAX_SIZES + 1], read_after[PLAN_MAX_SIZES + 1];
    int read_node[PLAN_MAX_SIZES + 1]; /* the node that asked for read k (messages) */
    uint64_t read_at;
    bool probe;
    VkCommandBuffer segments[PLAN_MAX_SIZES + 1];
};

/* Patterns of several nodes planned as one op (src/plan/fuse.c). The pattern's last node is
 * planned as the op (on inputs pattern_in, writing the last node's output); the other nodes
 * are PATTERN_INNER: skipped, their outputs never exist. */
enum { PLAN_FUSED_DONE = -1 };

enum plan_pattern { PATTERN_NONE = 0, PATTERN_INNER, PATTERN_GELU, PATTERN_GELU_TANH, PATTERN_LAYER_NORM,
                    PATTERN_MISH, PATTERN_SILU, PATTERN_RMS_NORM, PATTERN_SCATTER_SLICES, PATTERN_SAME };
enum { PATTERN_INPUTS = 6 }; /* pattern_in entries per node */

/* Finds the patterns among live nodes and marks them in p->pattern / p->pattern_in, then
 * counts p->uses and p->reader over the nodes as they will be planned. */
vki_status plan_fuse_patterns(plan *p, const bool *live);
/* Whether value v is a float scalar known before planning (an initializer or a Constant
 * node's tensor, or a Reshape, Identity or (Un)squeeze of one, of one element); its value in *out. */
bool plan_const_scalar(const plan *p, int v, double *out);
/* The perms of the ScatterSlices pattern ending at node `last`: P, the Transpose of the pieces,
 * and Q, the Transpose after it (*n_out 0: none). */
void plan_scatter_slices_perms(const plan *p, int last, const int64_t **perm, int *n_perm, const int64_t **out_perm,
                               int *n_out);

/* Builds a plan for the given input shapes (ranks[k], dims[k*VKI_MAX_RANK...]) and
 * data-dependent sizes sizes[0..n_sizes) (see struct plan; a probe plan when a node needs one
 * more), finding each node's op with find_op (the op table's op_find). Inputs with
 * keyed[i] are treated as constants holding data[i] (an op needs their values at plan time:
 * Reshape's shape, Slice's starts... fed by a graph input). When an op needs the value of
 * an input that is not keyed yet, planning fails and *wanted_input names it, so the caller
 * can key it and plan again. counts[i] (NULL: all 1) is what graph input i holds: 1 for a
 * tensor, a sequence's length, -1 for an optional that is none (an optional tensor: 1, an
 * optional sequence: its length); ranks, dims, data and bytes are per tensor, the inputs'
 * tensors one after another (keyed stays per graph input). */
vki_status plan_create(vk_context *vk, const ir_graph *g, op_finder find_op, const int *counts, const int *ranks,
                       const int64_t *dims,
                       const void *const *data, const size_t *bytes, const bool *keyed,
                       const int64_t *sizes, int n_sizes,
                       bool profiling, bool fp16_mode, weight_cache *cache, int *wanted_input, plan **out);
void plan_destroy(plan *p);

/* The storage a new value of dtype t is held in: its own width (float32 as halves in the fp16
 * mode), except graph inputs and outputs, which keep their host layout (int64 narrowed). */
gpu_storage plan_storage_for(const plan *p, int value_index, vki_dtype t);
/* Records the conversions of outputs written through scratch copies (op_dispatch_stored). */
vki_status plan_finish_node(op_ctx *c);
/* Converts numel elements of value src (held in storage `from`) into value dst (storage `to`)
 * on the GPU (src/plan/op_dispatch.c). */
vki_status plan_record_convert(op_ctx *c, int src, gpu_storage from, int dst, gpu_storage to, int64_t numel);
/* Device bytes of a value in its storage (a multiple of 4, at least 16). */
uint64_t plan_value_bytes(const plan_value *v);

/* Liveness placement of intermediates (src/plan/memory.c). */
vki_status plan_memory(plan *p);
/* After node `node` is planned: each host constant of more than 64 KiB it made (values from
 * `first_value` on, and its outputs, allocated after arena mark `mark`) that equals one made
 * earlier takes that one's bytes, and its own go back to the arena (src/plan/memory.c). */
vki_status plan_share_host_constants(plan *p, const ir_node *node, int first_value, const void *mark);
/* Device buffers, weight upload, descriptor sets and the command buffer (src/plan/record.c). */
vki_status plan_record(plan *p);

/* Records cmd_in and cmd_out (allocated from `pool` on first use): inputs copied from in_src[k]
 * (per io_in entry)
 * (a device tensor's buffer) or, where VK_NULL_HANDLE, from the upload buffer; outputs copied
 * to out_dst[k] (per io_out entry) or the download buffer. */
vki_status plan_record_io(plan *p, VkCommandPool pool, const VkBuffer *in_src, const VkBuffer *out_dst);

/* Sequences and optionals (src/plan/sequence.c). Called by the planner for each node before
 * its op `def`: a node reading a sequence or optional must be one that takes them
 * (OP_TAKES_LISTS, else an error naming it); Identity of one copies it (OP_PASSES_LISTS), and
 * *done says the node needs nothing more. */
vki_status seq_plan_node(op_ctx *c, const op_def *def, bool *done);
/* The tensors graph output value v holds (a tensor: itself; a sequence: its elements; an
 * optional: none or what it holds) appended to list (may be NULL to count); *count: how many,
 * -1 for an optional that is none. */
vki_status seq_flatten(plan *p, int v, int *list, int *count);

/* Room for `extra` more values (plan_value pointers taken before may move). */
vki_status plan_reserve_values(plan *p, int extra);

/* The storage root of a value (follows aliases). */
int plan_root(const plan *p, int v);

#endif
