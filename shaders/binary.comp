#version 450
// binary in 32-bit words, every dtype (the body is binary.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "binary.glsl"
