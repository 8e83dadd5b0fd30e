#version 450
// Gather in 32-bit words, every dtype (the body is gather.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "gather.glsl"
