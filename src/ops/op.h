/* What every op family includes: the planner's contract (src/plan/op_api.h) and the dtype
 * lists an op_def names. */
#ifndef VKI_OP_H
#define VKI_OP_H

#include "../plan/op_api.h"

/* The dtypes an op runs, as `vkinfer ops` lists them. */
#define OP_DTYPES_FLOAT "float32 float16 bfloat16 float64"
#define OP_DTYPES_INT "int8 int16 int32 int64 uint8 uint16 uint32 uint64"
/* the float8/float4 formats and the 4- and 2-bit integers (Cast and the ops that move data) */
#define OP_DTYPES_SMALL "float8e4m3fn float8e4m3fnuz float8e5m2 float8e5m2fnuz float8e8m0 float4e2m1 float6e2m3 float6e3m2 int4 uint4 int2 uint2"
#define OP_DTYPES_NUMERIC OP_DTYPES_FLOAT " " OP_DTYPES_INT
#define OP_DTYPES_ALL OP_DTYPES_NUMERIC " bool"

#endif
