#version 450
// Attention in one dispatch on f16 tensors held as 16-bit words (the body is attention_rows.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_F16
#include "common.glsl"
#include "storage.glsl"
#include "attention_rows.glsl"
