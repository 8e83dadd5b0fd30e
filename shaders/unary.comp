#version 450
// unary in 32-bit words, every dtype (the body is unary.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "unary.glsl"
