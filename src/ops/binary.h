/* What other op families use of binary.c. */
#ifndef VKI_OPS_BINARY_H
#define VKI_OPS_BINARY_H
#include "op.h"
/* Clip whose min or max is a runtime input: Max(x, min), then Min(that, max), on the GPU.
 * Output 0 must be set already. */
vki_status binary_clip_runtime(op_ctx *c);
#endif
