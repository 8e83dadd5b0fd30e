#version 450
// Row normalization in 32-bit words, every dtype (the body is norm_rows.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "norm_rows.glsl"
