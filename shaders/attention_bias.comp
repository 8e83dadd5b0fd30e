#version 450
// Attention's additive bias in fp32 words (the body is attention_bias.glsl).
#include "common.glsl"
#include "attention_bias.glsl"
