#version 450
// Attention's packed keys and values in 32-bit words (the body is attention_kv.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "attention_kv.glsl"
