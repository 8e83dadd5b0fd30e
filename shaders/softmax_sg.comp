#version 450
// Softmax and LogSoftmax, a subgroup per row, in 32-bit words, every dtype (the body is softmax.glsl).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#define SOFTMAX_SUBGROUP
#include "common.glsl"
#include "storage.glsl"
#include "softmax.glsl"
