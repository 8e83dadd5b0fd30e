#version 450
// Attention's packed keys and values on f16 tensors held as 16-bit words (the body is attention_kv.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_F16
#include "common.glsl"
#include "storage.glsl"
#include "attention_kv.glsl"
