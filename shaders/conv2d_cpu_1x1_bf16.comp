#version 450
// conv2d_cpu_1x1 on bf16 tensors held as 16-bit words (the body is conv2d_cpu_1x1.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_BF16
#include "common.glsl"
#include "storage.glsl"
#include "conv2d_cpu_1x1.glsl"
