#version 450
// ScatterND in 32-bit words, every dtype (the body is scatter_nd.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "scatter_nd.glsl"
