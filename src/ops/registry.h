/* The op table (registry.c), for the session and `vkinfer ops`: an op by its domain
 * ("" = ai.onnx) and op_type, NULL if vkinfer has none; the session hands op_find to the
 * planner (op_finder). */
#ifndef VKI_OPS_REGISTRY_H
#define VKI_OPS_REGISTRY_H

#include "op.h"

const op_def *op_find(const char *domain, const char *name);
uint32_t op_registry_count(void);
const op_def *op_registry_get(uint32_t i);

#endif
