#version 450
// GatherND in 32-bit words, every dtype (the body is gather_nd.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "gather_nd.glsl"
