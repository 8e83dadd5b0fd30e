#version 450
// pool_global on f16 tensors held as 16-bit words (the body is pool_global.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_F16
#include "common.glsl"
#include "storage.glsl"
#include "pool_global.glsl"
