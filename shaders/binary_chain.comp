#version 450
// binary_chain in 32-bit words (float32; the body is binary_chain.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "binary_chain.glsl"
