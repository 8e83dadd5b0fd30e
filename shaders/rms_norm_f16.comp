#version 450
// RMSNormalization on f16 tensors held as 16-bit words (the body is rms_norm.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_F16
#include "common.glsl"
#include "storage.glsl"
#include "rms_norm.glsl"
