#version 450
// pool_global in 32-bit words (the body is pool_global.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "pool_global.glsl"
