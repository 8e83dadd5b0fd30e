#version 450
// matmul_tiled in 32-bit words, every dtype (the body is matmul_tiled.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "matmul_tiled.glsl"
