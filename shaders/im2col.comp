#version 450
// im2col in 32-bit words (the body is im2col.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "im2col.glsl"
