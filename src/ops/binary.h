/* What other op families use of binary.c. */
#ifndef VKI_OPS_BINARY_H
#define VKI_OPS_BINARY_H
#include "op.h"
/* Clip whose min or max is a runtime input: Max(x, min), then Min(that, max), on the GPU.
 * Output 0 must be set already. */
vki_status binary_clip_runtime(op_ctx *c);
/* out = a + b over `dims` (rank <= 6), a read through element strides `a_strides` (any
 * layout, e.g. a product's [C, N*HW] read as [N, C, HW]), b and out contiguous, all held in
 * storage st; with clamp, min(max(., lo), hi) (op_fuse_clamp's bounds). One dispatch. */
vki_status binary_add_strided(op_ctx *c, int a, const int64_t *a_strides, int b, int out, const int64_t *dims, int rank,
                              gpu_storage st, bool clamp, float lo, float hi);
#endif
