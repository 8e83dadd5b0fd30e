#version 450
// Strided copy of 16-bit elements, any 16-bit storage (the body is copy.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define COPY_ELEM uint16_t
#include "common.glsl"
#include "copy.glsl"
