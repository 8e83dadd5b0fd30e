#version 450
// conv2d_cpu_1x1 in 32-bit words (the body is conv2d_cpu_1x1.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "conv2d_cpu_1x1.glsl"
