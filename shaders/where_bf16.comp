#version 450
// Where on bf16 tensors held as 16-bit words (the body is where.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_BF16
#include "common.glsl"
#include "storage.glsl"
#include "where.glsl"
