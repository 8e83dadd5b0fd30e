#version 450
// MatMul and Gemm on tensor cores (VK_NV_cooperative_matrix2) for fp16 operands: the body is
// matmul_coopmat2.glsl.
#extension GL_GOOGLE_include_directive : require // glslc enables it itself, glslang does not
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
#define ELEM float16_t
#include "common.glsl"
#include "fused_act.glsl"
#include "matmul_coopmat2.glsl"
