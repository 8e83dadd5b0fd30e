#version 450
// im2col on bf16 tensors held as 16-bit words (the body is im2col.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_BF16
#include "common.glsl"
#include "storage.glsl"
#include "im2col.glsl"
