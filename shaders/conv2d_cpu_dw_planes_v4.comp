#version 450
#extension GL_EXT_samplerless_texture_functions : require
// conv2d_cpu_dw_planes with X read as RGBA32F texels, 4 columns a fetch (rows of whole texels);
// the body is conv2d_cpu_dw_planes.glsl.
#extension GL_EXT_control_flow_attributes : require
#define DW_X_VEC4
#include "common.glsl"
#include "fused_act.glsl"
#include "conv2d_cpu_dw_planes.glsl"
