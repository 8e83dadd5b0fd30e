#version 450
// Softmax and LogSoftmax, a subgroup per row, on f16 tensors held as 16-bit words (the body is softmax.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_F16
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#define SOFTMAX_SUBGROUP
#include "common.glsl"
#include "storage.glsl"
#include "softmax.glsl"
