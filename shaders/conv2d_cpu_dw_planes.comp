#version 450
#extension GL_EXT_samplerless_texture_functions : require
// conv2d_cpu_dw_planes with X read as a texel buffer of 32-bit words (any width); the body is
// conv2d_cpu_dw_planes.glsl.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "fused_act.glsl"
#include "conv2d_cpu_dw_planes.glsl"
