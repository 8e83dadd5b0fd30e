#version 450
// Reductions in 32-bit words, every dtype (the body is reduce.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "reduce.glsl"
