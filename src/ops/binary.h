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
/* (unary.c) Input 0 into output 0 (set already) by shaders/unary_f64.comp in double, where the
 * device has shaderFloat64 and the op computes float64 there: `code` is unary.glsl's (0: Cast,
 * params[0] != 0: no saturation), params its push constants. *done false: nothing recorded,
 * the caller records the fp32 kernel. */
vki_status unary_float64(op_ctx *c, int code, const float params[3], bool *done);
#endif
