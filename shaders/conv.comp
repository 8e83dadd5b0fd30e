#version 450
// conv in 32-bit words (the body is conv.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "conv.glsl"
