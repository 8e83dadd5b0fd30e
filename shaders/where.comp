#version 450
// Where in 32-bit words, every dtype (the body is where.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "where.glsl"
