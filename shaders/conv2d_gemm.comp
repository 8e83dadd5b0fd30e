#version 450
// conv2d_gemm in 32-bit words (the body is conv2d_gemm.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "conv2d_gemm.glsl"
