/* What LayerNormalization's row kernel (norm_rows, normalization.c) reads in place, shared with
 * the ops whose outputs it may read as views (movement.c's Transpose) so that neither family
 * reaches into the other. */
#ifndef VKI_OPS_NORM_VIEWS_H
#define VKI_OPS_NORM_VIEWS_H
#include "op.h"
/* Whether norm_fuse_add reads an operand that is a permuted view of these dims, element
 * strides and offset in place: its last axis contiguous (the rows), at most two other dims of
 * size > 1, no offset. */
bool norm_rows_view_ok(int rank, const int64_t *dims, const int64_t *strides, int64_t elem);
/* Where value v (a Transpose's output, `perm` its order over `rank` axes) is read only by a
 * LayerNormalization over its last axis whose statistics are unread, and that only by a
 * Transpose of the inverse order (ConvNeXt's channels-last LayerNormalization inside NCHW:
 * permute, normalize, permute back), that second Transpose's index; else -1. The first
 * Transpose is then a permuted view, and the LayerNormalization normalizes X's channels in
 * place of both copies, claiming the second (norm_rows through strides, X and Y alike).
 * VKINFER_CHANNEL_LN=0: never (measuring). */
int norm_channels_between(op_ctx *c, int v, const int64_t *perm, int rank);
#endif
