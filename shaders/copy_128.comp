#version 450
// Strided copy of 16-byte groups: 4 words, 8 halves or 16 bytes at a time (the body is
// copy.glsl; src/ops/movement.c's copy_dispatch_values regroups the region).
#define COPY_ELEM uvec4
#include "common.glsl"
#include "copy.glsl"
