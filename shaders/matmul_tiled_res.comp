#version 450
// matmul_tiled in 32-bit words, every dtype with a residual R added before the activation, at binding 4 (the body is matmul_tiled.glsl).
#define RESIDUAL
#include "common.glsl"
#include "storage.glsl"
#include "matmul_tiled.glsl"
