/* The op table: one line per op. It drives model loading, `vkinfer ops` and the README's
 * op table. */
#include "op.h"

#include <string.h>

#define OPS(X)                                                                             \
    /* unary.c */                                                                          \
    X(Relu) X(Sigmoid) X(Tanh) X(Exp) X(Log) X(Neg) X(Abs) X(Sqrt) X(Reciprocal) X(Clip)    \
    X(HardSigmoid) X(HardSwish) X(LeakyRelu) X(Floor) X(Ceil) X(Round) X(Sin) X(Cos) X(Tan) \
    X(Asin) X(Acos) X(Atan) X(Sinh) X(Cosh) X(Asinh) X(Acosh) X(Atanh) X(Erf) X(Sign)       \
    X(Softplus) X(Softsign) X(Elu) X(Selu) X(Celu) X(ThresholdedRelu) X(Not) X(IsNaN)       \
    X(IsInf) X(Gelu) X(Mish) X(BitwiseNot) X(Identity) X(Cast) X(Dropout)                 \
    /* binary.c */                                                                         \
    /* conv.c */                                                                           \
    /* matmul.c */                                                                         \
    /* pool.c, normalization.c */                                                          \
    /* reduce.c, softmax.c */                                                              \
    /* shape.c, movement.c */                                                              \
    /* end */

#define DECLARE(name) extern const op_def op_##name;
OPS(DECLARE)
#undef DECLARE

#define ENTRY(name) &op_##name,
static const op_def *const registry[] = {OPS(ENTRY)};
#undef ENTRY

uint32_t op_registry_count(void) { return sizeof registry / sizeof *registry; }

const op_def *op_registry_get(uint32_t i) { return i < op_registry_count() ? registry[i] : NULL; }

const op_def *op_find(const char *domain, const char *name)
{
    for (uint32_t i = 0; i < op_registry_count(); i++)
        if (!strcmp(registry[i]->name, name) && !strcmp(registry[i]->domain, domain)) return registry[i];
    return NULL;
}
