#version 450
// RotaryEmbedding in 32-bit words (the body is rotary.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "rotary.glsl"
