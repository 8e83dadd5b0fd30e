#version 450
// LayerNormalization statistics in 32-bit words, every dtype (the body is norm_stats_split.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "norm_stats_split.glsl"
