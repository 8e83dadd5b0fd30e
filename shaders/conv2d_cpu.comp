#version 450
// conv2d_cpu in 32-bit words (the body is conv2d_cpu.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "conv2d_cpu.glsl"
