#version 450
// Strided copy of bytes: int8, uint8 and bool storage (the body is copy.glsl).
#extension GL_EXT_shader_8bit_storage : require
#define COPY_ELEM uint8_t
#include "common.glsl"
#include "copy.glsl"
