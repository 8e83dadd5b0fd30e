#version 450
// gather on float64 held as its 8 bytes (GPU_F64), moved unchanged on every device (the body is
// gather.glsl).
#define STORAGE_F64
#include "common.glsl"
#include "storage.glsl"
#include "gather.glsl"
