#version 450
// Strided copy of 32-bit words (the body is copy.glsl).
#define COPY_ELEM uint
#include "common.glsl"
#include "copy.glsl"
