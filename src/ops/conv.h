/* What src/ops/conv.c and src/ops/conv_winograd.c share: a convolution's geometry. Internal to
 * these two files. */
#ifndef VKI_OPS_CONV_H
#define VKI_OPS_CONV_H

#include "op.h"

/* A convolution's shape facts; spatial arrays hold the first nsp entries. */
typedef struct conv_geom {
    int nsp; /* spatial dims, 1..3 */
    int64_t batch, cin, cout, groups;
    int64_t in[3], out[3], kernel[3], stride[3], dil[3], pad_begin[3];
} conv_geom;

/* A 3x3, stride-1 2-D float32 convolution without groups on a CPU device as Winograd F(2x2,
 * 3x3): an input transform, 16 products on the CPU MatMul, an output transform with the bias
 * and the fused activation. *taken false (nothing recorded) where it does not apply. */
vki_status conv_winograd_record(op_ctx *c, const conv_geom *g, bool *taken);

#endif
