#version 450
// gather_nd on float64 held as its 8 bytes (GPU_F64), moved unchanged on every device (the body is
// gather_nd.glsl).
#define STORAGE_F64
#include "common.glsl"
#include "storage.glsl"
#include "gather_nd.glsl"
