#version 450
// Scale/shift folding in 32-bit words, every dtype (the body is norm_fold.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "norm_fold.glsl"
