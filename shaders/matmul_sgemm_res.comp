#version 450
// matmul_sgemm (the body is matmul_sgemm.glsl) with a residual R added before the activation, at binding 4.
#extension GL_EXT_control_flow_attributes : require
#define RESIDUAL
#include "common.glsl"
#include "fused_act.glsl"
#include "matmul_sgemm.glsl"
