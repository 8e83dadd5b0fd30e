#version 450
// RMSNormalization on bf16 tensors held as 16-bit words (the body is rms_norm.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_BF16
#include "common.glsl"
#include "storage.glsl"
#include "rms_norm.glsl"
