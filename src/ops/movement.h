/* What the data-movement ops share: the strided copy (src/plan/strided_copy.h) and Reshape's
 * shape resolution (shape.c). */
#ifndef VKI_MOVEMENT_H
#define VKI_MOVEMENT_H

#include "op.h"
#include "../plan/strided_copy.h"

/* Reshape's new dims (src/ops/shape.c): `shape`'s n entries with 0 (a copy of the input's dim,
 * unless allowzero) and one -1 (inferred) resolved against the input's dims `in`, into out;
 * false with the reason in why where the shape is not one for that input. */
bool reshape_resolve(const int64_t *shape, int n, bool allowzero, const int64_t *in, int in_rank, int64_t *out,
                     char *why, size_t why_size);
#endif
