#version 450
// ReverseSequence on bf16 tensors held as 16-bit words (the body is reverse_sequence.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define STORAGE_BF16
#include "common.glsl"
#include "storage.glsl"
#include "reverse_sequence.glsl"
