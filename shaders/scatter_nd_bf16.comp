#version 450
// ScatterND on bf16 tensors held as 16-bit words (the body is scatter_nd.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_BF16
#include "common.glsl"
#include "storage.glsl"
#include "scatter_nd.glsl"
