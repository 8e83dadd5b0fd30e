#version 450
// conv2d_depthwise in 32-bit words (the body is conv2d_depthwise.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "conv2d_depthwise.glsl"
