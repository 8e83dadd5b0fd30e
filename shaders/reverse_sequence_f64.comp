#version 450
// reverse_sequence on float64 held as its 8 bytes (GPU_F64), moved unchanged on every device (the body is
// reverse_sequence.glsl).
#define STORAGE_F64
#include "common.glsl"
#include "storage.glsl"
#include "reverse_sequence.glsl"
