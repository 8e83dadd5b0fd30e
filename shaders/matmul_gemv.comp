#version 450
// matmul_gemv in 32-bit words, every dtype (the body is matmul_gemv.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "matmul_gemv.glsl"
