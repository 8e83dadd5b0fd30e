#version 450
// binary_chain on f16 tensors held as 16-bit words (the body is binary_chain.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_F16
#include "common.glsl"
#include "storage.glsl"
#include "binary_chain.glsl"
