#version 450
// pool in 32-bit words (the body is pool.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "pool.glsl"
