#version 450
// conv_splitk_reduce on f16 tensors held as 16-bit words (the body is conv_splitk_reduce.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_F16
#include "common.glsl"
#include "storage.glsl"
#include "conv_splitk_reduce.glsl"
