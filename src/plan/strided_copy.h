/* The strided copy that most data-movement ops reduce to (shaders/copy.glsl), and the strides
 * of views that kernels read through: below the op families, which share it, and used by the
 * planner's own reads (op_read_back). */
#ifndef VKI_PLAN_STRIDED_COPY_H
#define VKI_PLAN_STRIDED_COPY_H

#include "op_api.h"

#define COPY_MAX_RANK (2 * VKI_MAX_RANK) /* Tile views rank r as 2r before collapsing */

/* Element at row-major position idx of `dims` moves from input element
 * in_base + sum idx_k * in_strides_k to output element out_base + sum idx_k * out_strides_k. */
typedef struct strided_copy {
    int rank;
    int64_t dims[COPY_MAX_RANK];
    int64_t in_base, out_base;
    int64_t in_strides[COPY_MAX_RANK], out_strides[COPY_MAX_RANK];
} strided_copy;

/* Row-major element strides of a shape. */
void contiguous_strides(const int64_t *dims, int rank, int64_t *strides);
/* The element strides a kernel reads v through: a permuted view's own, else row-major. */
void value_strides(const plan_value *v, int64_t strides[VKI_MAX_RANK]);
/* The layout of v's elements as dims and element strides of rank `*rank` (v's rank, or one more
 * for a view with a split dim: its outer and inner parts, in that order, at that dim's place);
 * map[k]: where v's dim k starts in it. */
void view_layout(const plan_value *v, int *rank, int64_t dims[VKI_MAX_RANK + 1], int64_t strides[VKI_MAX_RANK + 1],
                 int map[VKI_MAX_RANK]);
/* True when every input is a plan-time constant and every output has at most 4096 elements:
 * then the op computes its outputs on the host (shape subgraphs fold completely). */
bool movement_folds(op_ctx *c);
/* Allocates every output's host data when folding. */
void movement_alloc_host_outputs(op_ctx *c);
/* Drops unit dimensions and merges neighbours that are contiguous on both sides, so that the
 * shader's rank (and its index arithmetic) stays small. */
void copy_collapse(strided_copy *s);
/* The storage the copy moves elements in: the output's own when the device can address its
 * width (copy_16, copy_8; float64's 8 bytes are two words, copy_64, on every device), else
 * 32-bit words. An input held otherwise (a float32 graph input in the fp16 mode) is converted
 * once, and every input of a Concat lands in one storage. */
gpu_storage copy_storage(op_ctx *c, int out);
/* Runs one copy from input `in` to output `out`: on the host when `on_host` (the output's host
 * data must be allocated), else as a dispatch of shaders/copy.glsl. */
vki_status copy_run(op_ctx *c, int in, int out, const strided_copy *copy, bool on_host);
/* One dispatch of a copy kernel (shaders/copy.glsl) from value `from` to value `to` (plan value
 * indices, both bound whole, both held in storage st); the copy's bases and strides are in
 * elements. */
vki_status copy_values(op_ctx *c, int from, int to, const strided_copy *copy, gpu_storage st);
/* A scratch value live only during this node holding permuted view v's elements in row-major
 * order, in v's storage (for a kernel that cannot read strides). */
vki_status op_contiguous_copy(op_ctx *c, int v, int *copy);

#endif
