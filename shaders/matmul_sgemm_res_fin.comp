#version 450
// matmul_sgemm (the body is matmul_sgemm.glsl), split K finished by each tile's last workgroup (FINISH) with a residual R added before the activation, at binding 4.
#extension GL_EXT_control_flow_attributes : require
#define RESIDUAL
#define FINISH
#include "common.glsl"
#include "fused_act.glsl"
#include "matmul_sgemm.glsl"
