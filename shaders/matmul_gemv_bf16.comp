#version 450
// matmul_gemv on bf16 tensors held as 16-bit words (the body is matmul_gemv.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_BF16
#include "common.glsl"
#include "storage.glsl"
#include "matmul_gemv.glsl"
