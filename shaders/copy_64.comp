#version 450
// Strided copy of 8-byte groups: a copy whose innermost run is contiguous on both sides and
// whose offsets and strides are whole groups moves 2 words or 4 halves at a time (the body is
// copy.glsl; src/ops/movement.c's copy_dispatch_values regroups the region).
#define COPY_ELEM uvec2
#include "common.glsl"
#include "copy.glsl"
