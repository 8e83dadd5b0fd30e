#version 450
// LpNormalization in 32-bit words (the body is lp_normalization.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "lp_normalization.glsl"
