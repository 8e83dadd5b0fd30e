#version 450
// Attention's output in 32-bit words (the body is attention.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "attention_common.glsl"
#include "attention.glsl"
