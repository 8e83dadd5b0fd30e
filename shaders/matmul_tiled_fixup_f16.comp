#version 450
// matmul_tiled_fixup on f16 tensors held as 16-bit words (the body is matmul_tiled.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_F16
#define MM_FIXUP
#include "common.glsl"
#include "storage.glsl"
#include "matmul_tiled.glsl"
