#version 450
// matmul_splitk_reduce in 32-bit words, every dtype (the body is matmul_splitk_reduce.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "matmul_splitk_reduce.glsl"
