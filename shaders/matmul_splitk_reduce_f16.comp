#version 450
// matmul_splitk_reduce on f16 tensors held as 16-bit words (the body is matmul_splitk_reduce.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_F16
#include "common.glsl"
#include "storage.glsl"
#include "matmul_splitk_reduce.glsl"
