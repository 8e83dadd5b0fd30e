#version 450
// Attention in one dispatch on fp32 words (the body is attention_rows.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "attention_rows.glsl"
