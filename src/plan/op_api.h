/* The contract between the planner and one op family: what an op's plan function is given
 * (op_ctx, plan_value) and may call, all implemented in src/plan. An op's plan function
 * validates its inputs, sets its outputs' shapes and dtypes, and then either computes its
 * outputs on the host (constant folding), declares an output a view of an input (Reshape,
 * Squeeze...), or records GPU dispatches. It runs once per plan, never per inference. The ops
 * include it through src/ops/op.h; the planner reaches them only through their op_def. */
#ifndef VKI_PLAN_OP_API_H
#define VKI_PLAN_OP_API_H

#include "../graph/ir.h"
#include "../vk/vk.h"

/* Per-plan state of one value. */
typedef struct plan_value {
    vki_dtype dtype;
    int rank;
    int64_t dims[VKI_MAX_RANK];
    bool shaped;       /* dtype and shape known */
    const void *host;  /* constant data in the dtype's host layout, or NULL */
    size_t host_bytes;
    bool kernel_state; /* host data only initialises it: its kernels update it (op_temp_state) */
    int alias_of;      /* the value whose device storage this one views, or -1 */
    /* a permuted view (a Transpose that only a MatMul reads, op_transpose_view): element i of
     * this value's dims lies at sum i_k * view_strides[k] of its root, not in row-major order */
    bool permuted;
    int64_t view_strides[VKI_MAX_RANK];
    /* and, for a strided Slice that only an element-wise Add, Sub, Mul or Div reads (FiLM's
     * scale and shift cut from one conditioning vector), the element its index 0 lies at */
    int64_t view_elem;
    /* and, for such a view whose dim split_dim is two dims of its root (split_inner > 0: a
     * Reshape that merges a batch axis with attention's heads, [S,B,H*D] -> [S,B*H,D], read
     * only by a MatMul; src/ops/shape.c): each of its dims[split_dim] / split_inner outer steps
     * is view_strides[split_dim] apart, the split_inner inner ones split_stride. view_layout
     * (src/plan/strided_copy.h) gives its elements' dims and strides */
    int split_dim;
    int64_t split_inner, split_stride;
    /* a view that starts this many bytes into its root (op_output_offset_view: a contiguous
     * Slice, Split or Gather of one index); kernels bind it through a window at that offset,
     * a multiple of the binding alignment */
    uint64_t view_offset;
    /* a scaled view (op_output_scaled_view: a Mul or Div by a constant scalar that only a
     * MatMul reads): this value is its root's elements times view_scale, which the product
     * applies as its alpha; 0 when not scaled */
    float view_scale;
    gpu_storage storage; /* how its elements lie in device memory (a view: its root's) */
    /* a sequence or optional (src/plan/sequence.c): a plan-time list of other values, with no
     * storage of its own. PV_SEQUENCE: items[0..n_items) are its elements (tensor values, dtype
     * theirs); PV_OPTIONAL: none (n_items 0) or items[0], a tensor or a sequence */
    uint8_t kind;
    int n_items;
    int *items;
    /* memory planning */
    bool on_gpu;       /* needs device storage */
    int first_use, last_use; /* dispatch indices */
    int buffer;        /* PLAN_BUF_* */
    int block;         /* PLAN_BUF_WEIGHTS: the plan's weight block; PLAN_BUF_SHARED: the weight cache's */
    uint64_t offset, bytes;
} plan_value;

enum plan_value_kind { PV_TENSOR = 0, PV_SEQUENCE, PV_OPTIONAL };

enum { PLAN_BUF_NONE = 0, PLAN_BUF_WEIGHTS, PLAN_BUF_ARENA, PLAN_BUF_SHARED /* the session's weight cache */ };

typedef struct plan plan;

enum { OP_MAX_COMPUTED = 4 };

typedef struct op_ctx {
    plan *plan;
    const ir_node *node;
    int node_index;
    vk_context *vk;
    int64_t opset;
    /* 1 + the value where the node's epilogue fusion goes on, when the node has already folded
     * the nodes after its output 0 into its own results (Conv's per-channel Mul and Add,
     * src/ops/conv.c); 0: from output 0 (op_epilogue_value) */
    int epilogue_from;
    /* outputs of later nodes this node's kernels compute (op_claim_computed): written like
     * its own outputs */
    int computed[OP_MAX_COMPUTED];
    int n_computed;
} op_ctx;

typedef struct op_def {
    const char *name;   /* ONNX op_type */
    const char *domain; /* "" = ai.onnx */
    const char *dtypes; /* what it runs, shown by `vkinfer ops` */
    const char *notes;  /* what it does not support yet */
    vki_status (*plan)(op_ctx *c);
    uint32_t flags;     /* enum op_flags: what the planner must know of the op before planning it */
} op_def;

/* What the planner does differently for an op, read from its op_def in place of its name. */
enum op_flags {
    /* input 0 may be omitted (Constant, RandomUniform, RandomNormal, SequenceEmpty, Optional,
     * OptionalHasElement, Loop's M); the planner refuses any other node without it */
    OP_INPUT0_OPTIONAL = 1u << 0,
    /* the same below opset 9 (Scan-8's sequence_lens) */
    OP_INPUT0_OPTIONAL_OPSET8 = 1u << 1,
    /* reads sequence or optional values; the planner refuses them as inputs of any other op */
    OP_TAKES_LISTS = 1u << 2,
    /* a sequence or optional input is passed on as it is, by the planner (Identity) */
    OP_PASSES_LISTS = 1u << 3,
    /* its output depends only on its input's shape (Shape, Size): known before planning */
    OP_SHAPE_ONLY = 1u << 4,
    /* not planned ahead of the graph's order even when its inputs are constants: control flow,
     * the random generators, the sequence ops */
    OP_NOT_CONSTANT = 1u << 5,
    /* also reads the value its `y` attribute names, with the nodes that compute it (Gradient) */
    OP_READS_Y_ATTR = 1u << 6,
};

/* How the planner finds the op of a node: the registry's lookup (src/ops/registry.c op_find),
 * handed to plan_create by its caller. */
typedef const op_def *(*op_finder)(const char *domain, const char *name);

/* ---- inputs and outputs ---- */
int op_input_count(const op_ctx *c);  /* including omitted optional ones */
int op_output_count(const op_ctx *c);
bool op_has_input(const op_ctx *c, int i);
bool op_has_output(const op_ctx *c, int i);
plan_value *op_in(op_ctx *c, int i);   /* NULL if absent */
plan_value *op_out(op_ctx *c, int i);  /* NULL if absent */
int op_in_index(const op_ctx *c, int i);  /* value index for dispatch bindings */
int op_out_index(const op_ctx *c, int i);
bool op_input_is_const(op_ctx *c, int i);
/* Whether input i is a float scalar known before planning (plan_const_scalar); its value in *out. */
bool op_const_scalar(op_ctx *c, int i, double *out);
bool op_all_inputs_const(op_ctx *c);
vki_status op_set_output(op_ctx *c, int i, vki_dtype dtype, int rank, const int64_t *dims);
/* Reads a constant integer input (shape, axes, starts...). Fails naming the input if it is
 * not a plan-time constant. */
/* A graph input that value v is computed from, small enough to key the plan on (integers up to
 * 1024 elements, others up to 8) and not keyed yet; -1 if none. */
int op_keyable_input(const plan *p, int v);
vki_status op_const_ints(op_ctx *c, int i, int64_t *out, int max, int *count);
/* An INTS attribute of exactly `n` entries, each in [lo, hi], into out; `fill` everywhere when
 * the node lacks it (strides, dilations, pads...). Fails naming the attribute otherwise. */
vki_status op_attr_ints_n(op_ctx *c, const char *name, int n, int64_t fill, int64_t lo, int64_t hi, int64_t *out);
vki_status op_const_floats(op_ctx *c, int i, double *out, int max, int *count);
/* Host result: allocates the output's constant data (after op_set_output). */
void *op_output_host(op_ctx *c, int i);
/* The output is the input's storage with a new shape (same element count). */
vki_status op_output_alias(op_ctx *c, int out, int in);
/* Makes output `out` (already shaped) a view of input `in`'s elements from `first` on, held
 * in place of a copy, when that is possible: the input lives on the GPU in the output's
 * storage, is no permuted view, the offset is a multiple of the binding alignment and the
 * output is no graph output. Returns whether it did. */
bool op_output_offset_view(op_ctx *c, int out, int in, int64_t first);
/* Makes output 0 a scaled view of input `in` (times `scale`) when only a MatMul reads it and
 * it has the input's shape and storage; returns whether it did. */
bool op_output_scaled_view(op_ctx *c, int in, double scale);
/* The MatMul that reads value v through a chain of views, each node the sole reader of the
 * one before: Transpose, Reshape, Flatten, Squeeze, Unsqueeze (each keeps a permuted input's
 * strides or copies it), then at most one Mul/Div by a constant scalar right before the
 * MatMul (a scaled view, op_output_scaled_view);
 * *operand: the value the MatMul reads, *direct: no reshape or transpose on the way. NULL if
 * none. */
const ir_node *op_product_reader(op_ctx *c, int v, int *operand, bool *direct);
/* Whether value v (a Transpose's output) is read, through Squeeze or Unsqueeze nodes each the
 * sole reader of the one before, only by Gathers of one constant index along axis 0 (PyTorch 2's
 * nn.MultiheadAttention export splitting q, k and v: Reshape, Unsqueeze, Transpose, Squeeze,
 * three Gathers), each of whose outputs op_product_reader follows to a MatMul. The Gathers are
 * looked for among the next 64 nodes (preparation stays linear). */
bool op_gather_split_readers(op_ctx *c, int v);
/* Whether fusion and views are on (VKINFER_NO_FUSION unset: no graph as it is to measure against). */
bool op_fusion_on(const op_ctx *c);
/* Whether only Shape and Size nodes read value v (not a graph output, fusion on): its dims
 * are all that is needed of it */
bool op_dims_read_only(op_ctx *c, int v);
/* A scratch value live only during this node, held as 32-bit words (GPU_W32). */
vki_status op_temp(op_ctx *c, vki_dtype dtype, int64_t numel, int *value_index);
plan_value *op_value(op_ctx *c, int value_index);
/* A scratch value holding inputs ins[0..2] (input slots, -1: none) of counts[0..2] 32-bit words
 * one after another (shaders/pack_words.comp), so that a kernel binds them as one buffer: the
 * Android Baseline 2022 allows four storage buffers per stage. */
vki_status op_pack_words(op_ctx *c, const int *ins, const uint32_t *counts, int *out);
/* A scratch constant: zeroed host data (returned) that the caller fills; it is uploaded with
 * the weights (folded parameters such as BatchNormalization's scale and shift). */
void *op_temp_const(op_ctx *c, vki_dtype dtype, int64_t numel, int *value_index);
/* The same, for state that its kernels update from that start (counters): it keeps bytes of its
 * own, where equal constants may share theirs (src/plan/memory.c). */
void *op_temp_state(op_ctx *c, vki_dtype dtype, int64_t numel, int *value_index);

/* Epilogue fusion: a kernel that can apply a following node where it stores its results
 * claims that node, which then becomes a view of the kernel's output with no dispatch. Each
 * helper looks at the node that alone reads value `v` (once), where v is a float value that
 * is not a graph output, and changes nothing when the pattern does not hold.
 *
 * op_fuse_clamp_value: that node is Relu or Clip with plan-time bounds: claims it and returns
 * its bounds; the kernel must then store min(max(r, *lo), *hi). op_fuse_clamp does it for
 * output `out` of the current node. */
bool op_fuse_clamp_value(op_ctx *c, int v, float *lo, float *hi);
bool op_fuse_clamp(op_ctx *c, int out, float *lo, float *hi);
/* op_fuse_activation_value: as op_fuse_clamp_value, or that node is a GELU (src/plan/fuse.c's
 * erf or tanh pattern, or opset 20's Gelu), a SiLU (fuse.c's Mul(x, Sigmoid(x)), or opset
 * 24's Swish with alpha 1), a Sigmoid, an ELU with alpha 1, a Mish (fuse.c's pattern or
 * opset 18's op) or a Tanh: claims it and returns *lo = +inf, *hi = 0 (erf GELU), 1 (tanh
 * GELU), 2 (SiLU), 3 (Sigmoid), 4 (ELU), 5 (Mish) or 6 (Tanh), which
 * shaders/common.glsl's fused_clamp applies.
 * Only for kernels whose epilogue is fused_clamp on the fp32 result (the MatMul/Gemm and
 * Conv kernels). op_fuse_activation does it for output `out` of the current node. */
bool op_fuse_activation_value(op_ctx *c, int v, float *lo, float *hi);
bool op_fuse_activation(op_ctx *c, int out, float *lo, float *hi);
/* The value whose reader a further epilogue fusion of output 0 looks at: output 0, or the last
 * node the kernel has folded in already (op_ctx.epilogue_from). op_fuse_activation(c, 0, ...)
 * starts there. */
int op_epilogue_value(const op_ctx *c);
/* The code of shaders/fused_act.glsl's fused_act for what op_fuse_activation (or op_fuse_clamp)
 * returned (fused, lo, hi): 0 none, 1 a clamp, 2-8 an activation. The kernels made for CPU
 * devices take it as their ACT specialization constant, so that only that activation is
 * compiled (llvmpipe computes every side of a branch it cannot prove uniform). */
uint32_t op_act_code(bool fused, float lo, float hi);
/* op_fuse_add_find: that node is Add(v, o) or Add(o, v) where o is another value of v's dtype
 * known now (a constant or the output of a node planned earlier) that broadcasts to v's shape
 * without growing it (a bias, or a residual of v's shape): returns the node and sets *other to
 * o, claiming nothing, so that the kernel may look at o's shape first; -1 otherwise.
 * op_fuse_claim: the kernel takes node `node` (one found above) into its results, stored in
 * v; op_fused_output is that node's output, where a further epilogue (a clamp) may follow. */
int op_fuse_add_find(op_ctx *c, int v, int *other);
/* Whether one node alone reads value v (once), is an `op_type` node of the default domain,
 * v is a float value that is not a graph output, and fusion is on (VKINFER_NO_FUSION unset). */
bool op_read_only_by(op_ctx *c, int v, const char *op_type);
/* The same node's index, or -1. */
int op_only_reader(op_ctx *c, int v, const char *op_type);
/* The exporters' guard after a softmax whose rows may be masked whole (PyTorch's decomposed
 * scaled_dot_product_attention: Where(IsNaN(p), 0, p), so that such a row gives zeros, not NaN):
 * where exactly that IsNaN and that Where read v and nothing else does, the Where's index, with
 * the IsNaN's in *isnan_node; -1 otherwise (and with fusion off). */
int op_nan_guard_reader(op_ctx *c, int v, int *isnan_node);
/* Whether an op family takes its CPU-device kernels: on CPU devices (lavapipe), unless its
 * option (`force`, c->vk->opts.*_kernels) says OPT_KERNELS_GPU or OPT_KERNELS_CPU (CI on
 * lavapipe runs both families). */
bool op_cpu_kernels(const op_ctx *c, int force);
/* Whether o, broadcast numpy-wise against dims[0..rank), leaves that shape as it is (every dim
 * of o, aligned right, equal or 1; no more dims than rank). */
bool op_broadcasts_within(const plan_value *o, const int64_t *dims, int rank);
/* The node that alone reads v if it is an Add, Sub, Mul or Div (the binary kernel's arithmetic,
 * which reads views through their strides), with *code 0..3 in that order; -1 otherwise. */
int op_arithmetic_reader(op_ctx *c, int v, int *code);
/* The Add, Sub, Mul or Div that reads value v as both its operands and nothing else reads v's
 * elements (a square, x * x), with its code as op_arithmetic_reader's; -1 otherwise. */
int op_square_reader(op_ctx *c, int v, int *code);
/* Node n of the graph being planned (an index from op_only_reader or op_value_producer), and
 * the node that computes value v (-1 for graph inputs, initializers and made values). */
const ir_node *op_graph_node(op_ctx *c, int n);
int op_value_producer(op_ctx *c, int v);
/* The node that alone reads value v as the X of a LayerNormalization whose statistics are
 * unread: the op, or opset < 17's nine nodes that src/plan/fuse.c plans as one. Its index, with
 * its Scale and B values (B -1 if none), epsilon and axis; -1 otherwise (and with fusion off).
 * op_fuse_claim_input0 then claims it: it becomes a view of v. */
int op_layer_norm_reader(op_ctx *c, int v, int *scale, int *bias, float *eps, int64_t *axis);
/* The same for a LayerNormalization that reads v among other readers (a pre-norm transformer's
 * residual stream, read by the next block's LayerNormalization and its residual Add), not yet
 * claimed; -1 otherwise (and with fusion off). A kernel that computes its output too claims it
 * with op_claim_computed. */
int op_layer_norm_any_reader(op_ctx *c, int v, int *scale, int *bias, float *eps, int64_t *axis);
/* Claims node `node`, whose output 0 this node's kernel computes (it must be recorded by this
 * node, which then writes it as one of its own outputs, in its own storage): shapes that output
 * and marks the node planned. At most OP_MAX_COMPUTED a node. */
vki_status op_claim_computed(op_ctx *c, int node, vki_dtype dtype, int rank, const int64_t *dims);
void op_fuse_claim_input0(op_ctx *c, int node);
void op_fuse_claim(op_ctx *c, int node, int v);
int op_fused_output(const op_ctx *c, int node);

/* Data-dependent output sizes (NonZero, Compress, Unique, NonMaxSuppression). The op first
 * records the kernels that compute the size into `size_value` (an int32 scalar it made with
 * op_temp), then calls this with the largest size possible. *known: the plan is made for a
 * size of this node, *size (in [0, max]); the op records the rest for it. At run time the
 * plan reads size_value back right after those kernels (one wait); the dispatches after it run
 * only when the size is the one planned for, else the session plans again for the new size.
 * Not *known: the op returns at once without outputs; planning stops there and the session runs
 * this probe plan to read the size, then plans again with it. */
vki_status op_data_size(op_ctx *c, int size_value, int64_t max, int64_t *size, bool *known);
/* Input i, a scalar the GPU computes (an integer, or a bool as 0 or 1, in [0, max]), read back
 * into the plan through op_data_size (a Loop's trip count or condition, src/ops/control.c; a
 * sequence position, src/ops/sequence.c). */
vki_status op_read_back(op_ctx *c, int i, int64_t max, int64_t *out, bool *known);

/* Sequences and optionals (src/plan/sequence.c): values that are plan-time lists of other
 * values (plan_value.kind). op_set_sequence makes output `out` a sequence of items[0..n) with
 * elements of dtype `dtype`; op_copy_list makes it what value v is (a sequence or optional:
 * the same list). */
vki_status op_set_sequence(op_ctx *c, int out, vki_dtype dtype, const int *items, int n);
vki_status op_copy_list(op_ctx *c, int out, int v);
/* Elements of one sequence, at most (each is a plan value). */
#define SEQ_MAX_ITEMS 100000

/* ---- recording ---- */
/* values[]: value indices bound at bindings 0..n-1 (inputs first, then outputs, by
 * convention). Zero-sized grids are skipped. */
vki_status op_dispatch(op_ctx *c, const char *shader, const uint32_t *spec, uint32_t n_spec,
                       const void *push, uint32_t push_bytes, const int *values, int n_values,
                       uint32_t gx, uint32_t gy, uint32_t gz);
/* Windowed bindings, for tensors larger than one binding may address: binding i sees only
 * bytes [offset, offset + size) of its value (size 0: the whole value). Offsets must be
 * multiples of op_binding_alignment(). */
typedef struct op_window {
    uint64_t offset, size;
} op_window;
vki_status op_dispatch_windowed(op_ctx *c, const char *shader, const uint32_t *spec, uint32_t n_spec,
                                const void *push, uint32_t push_bytes, const int *values,
                                const op_window *windows, int n_values, uint32_t gx, uint32_t gy,
                                uint32_t gz);
/* The floating-point operations (2 per multiply-add) of the dispatch this node recorded last,
 * for the profile's GFLOP/s (vki_dispatch_profile.flops). Nothing if it recorded none. */
void op_note_flops(op_ctx *c, double flops);
/* How many dispatches the plan has so far, and the flops of the first dispatch the node
 * recorded since (storage conversions aside), for nodes whose first kernel is the one that
 * computes. */
int op_dispatch_mark(const op_ctx *c);
void op_note_flops_at(op_ctx *c, int mark, double flops);
/* Like op_dispatch_windowed for kernels that read or write 8- and 16-bit storages: stores[i]
 * is the storage binding i's kernel expects (op_dispatch and op_dispatch_windowed expect
 * GPU_W32 for every binding). A value held in another storage is converted first: on the
 * host at plan time for constants, by a GPU dispatch otherwise (once per plan and value); an
 * output held in another storage is written to a scratch copy in the kernel's storage and
 * converted once the node's plan function returns. Windows are in the kernel's storage. */
vki_status op_dispatch_stored(op_ctx *c, const char *shader, const uint32_t *spec, uint32_t n_spec,
                              const void *push, uint32_t push_bytes, const int *values,
                              const op_window *windows, const gpu_storage *stores, int n_values,
                              uint32_t gx, uint32_t gy, uint32_t gz);
/* The storage value_index is held in (its root's, for a view). */
gpu_storage op_storage(op_ctx *c, int value_index);
/* The value whose device storage value_index views (itself where it is no view). */
int op_root(op_ctx *c, int value_index);
/* The elements a binding of the value holds (in its storage): its own, or for a strided view
 * (a permuted value with a first element, bound from its root's start) its root's from the
 * view's offset on. */
int64_t op_bound_numel(op_ctx *c, int value_index);
/* Whether kernels may declare 16-bit (8-bit) storage buffers on this device
 * (storageBuffer16BitAccess / storageBuffer8BitAccess). Without them, 16- and 8-bit values are
 * still held packed, and kernels see them through conversions to GPU_W32. */
bool op_has_storage16(const op_ctx *c);
bool op_has_storage8(const op_ctx *c);
/* Whether kernels may compute in double (shaderFloat64). Without it, float64 values (held as
 * GPU_F64 everywhere) reach kernels through conversions to fp32 words. */
bool op_has_float64(const op_ctx *c);
/* The dtype code of float64 held as such, for the *_f64 kernels (DT_F64 in shaders/f64_bits.glsl);
 * op_dtype_code gives float64 float32's code (the word form the other kernels see). */
#define OP_DTYPE_F64 24u
/* The 16-bit float storage (GPU_F16 or GPU_BF16) shared by every value in values[0..n), where
 * the device lets kernels declare 16-bit buffers; GPU_W32 otherwise. In the fp16 mode float32
 * values held as words (graph inputs and outputs) may sit beside GPU_F16 ones: they are
 * converted to halves for the kernel. A kernel that has
 * `<name>_f16` / `<name>_bf16` variants (shaders/storage.glsl) then runs them on those values
 * as they are held, with no conversion. Values < 0 are skipped. */
gpu_storage op_half_storage(op_ctx *c, const int *values, int n);
/* For kernels that move elements without computing (Gather, GatherND, ReverseSequence, Where):
 * GPU_F64 where every value in values[0..n) is float64 held as such (their `<name>_f64`
 * variants move 8-byte elements on every device), else op_half_storage's answer. */
gpu_storage op_move_storage(op_ctx *c, const int *values, int n);
/* "<base>" for GPU_W32, "<base>_f16", "<base>_bf16", "<base>_f64": the kernel variant for that
 * storage. */
const char *op_variant(op_ctx *c, const char *base, gpu_storage s);
uint64_t op_max_binding_bytes(const op_ctx *c);
uint64_t op_binding_alignment(const op_ctx *c);
/* The most items of a batch one dispatch may take so that every binding (item_bytes[i]
 * bytes per item) fits one binding and every chunk starts aligned. 0 if one item is too big. */
int64_t op_batch_chunk(const op_ctx *c, int64_t items, const uint64_t *item_bytes, int n);

/* 1-D grid over `count` invocations in workgroups of `local`: sets gx, gy so that shaders
 * use  id = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * local. */
void op_grid_1d(uint64_t count, uint32_t local, uint32_t *gx, uint32_t *gy);
/* The grid of the element-wise kernels (shaders/common.glsl's ELEMENTWISE_MAIN: binary,
 * unary, copy); returns their GRID_STRIDE spec constant. On GPUs at most
 * OP_ELEMENTWISE_GROUPS workgroups (VKINFER_ELEMENTWISE_GROUPS overrides, 0: no cap), each
 * invocation taking every grid-stride-th element, so that a large tensor is not hundreds of
 * thousands of one-element-per-invocation workgroups; on CPU devices an invocation per
 * element (lavapipe grows its memory per dispatch of a kernel with that loop).
 * Measured on the H200 (bench/tuning/env_sweep.sh, 0 / 1024 / 4096 / 16384): resnet50 at batch 32,
 * whose residual Adds run over 25.7M elements, 16.67 -> 16.09 ms in float32 and 10.01 -> 9.22
 * in the fp16 mode; batch-1 models unchanged. */
enum { OP_ELEMENTWISE_GROUPS = 4096 };
uint32_t op_grid_elementwise(op_ctx *c, uint64_t count, uint32_t local, uint32_t *gx, uint32_t *gy);

/* ---- errors: "node 'name' (Op) [inputs float32[1,3,8,8], ...]: message" ---- */
vki_status op_error(op_ctx *c, vki_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Common checks. */
vki_status op_require_inputs(op_ctx *c, int min, int max);
vki_status op_require_float(op_ctx *c, int i);
vki_status op_require_gpu_dtype(op_ctx *c, int i);

/* Spec constant describing a dtype for shaders: see shaders/common.glsl (DT_*). The small
 * dtypes held widened (float8, float6, float4, float8e8m0: DT_F32; int4, uint4, int2, uint2:
 * DT_I32) get their storage's code; op_dtype_code_exact gives their own codes
 * (shaders/small_dtypes.glsl), for the kernels that round or wrap to them (Cast, quantizers). */
uint32_t op_dtype_code(vki_dtype t);
uint32_t op_dtype_code_exact(vki_dtype t);
/* Normalizes a possibly negative axis; error if out of range. */
vki_status op_axis(op_ctx *c, int64_t axis, int rank, int *out);

#endif
