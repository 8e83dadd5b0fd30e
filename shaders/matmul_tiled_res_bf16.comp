#version 450
// matmul_tiled on bf16 tensors held as 16-bit words with a residual R added before the activation, at binding 4 (the body is matmul_tiled.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_BF16
#define RESIDUAL
#include "common.glsl"
#include "storage.glsl"
#include "matmul_tiled.glsl"
