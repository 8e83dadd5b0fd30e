#version 450
// Attention's qk_matmul_output in 32-bit words (the body is attention_scores.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "attention_common.glsl"
#include "attention_scores.glsl"
