#version 450
// Per-channel affine map on f16 tensors held as 16-bit words (the body is norm_affine.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_F16
#include "common.glsl"
#include "storage.glsl"
#include "norm_affine.glsl"
