/* What other op families use of normalization.c. */
#ifndef VKI_OPS_NORMALIZATION_H
#define VKI_OPS_NORMALIZATION_H
#include "op.h"
/* From an Add (output 0 set, inputs 0 and 1 of its shape): where a LayerNormalization alone
 * reads the sum (its statistics unread, Scale and B plan-time constants, the rows in one
 * binding, normalized along the last axis where an operand is a permuted view), records norm_rows over input 0 + input 1 into the Add's output, claims the
 * LayerNormalization (a view of that output) and sets *taken; else changes nothing. The sum
 * is rounded to the dtype before it is normalized, as the two nodes would. */
vki_status norm_fuse_add(op_ctx *c, bool *taken);
/* A LayerNormalization's (Scale, B) as norm_rows reads them for rows of len elements: pairs
 * made where both are plan-time constants of `dtype`, of len elements or one; *pairs -1 where
 * they are not (then nothing is made). */
vki_status norm_layer_pairs(op_ctx *c, int scale_v, int bias_v, int64_t len, vki_dtype dtype, int *pairs);
#endif
