#version 450
// conv_splitk_reduce in 32-bit words (the body is conv_splitk_reduce.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "conv_splitk_reduce.glsl"
