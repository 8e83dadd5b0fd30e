#version 450
// matmul_sgemm (the body is matmul_sgemm.glsl).
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "fused_act.glsl"
#include "matmul_sgemm.glsl"
