#version 450
#extension GL_EXT_samplerless_texture_functions : require
// matmul_cpu with A's texels fetched a lane each and handed round by subgroupShuffle
// (matmul_cpu.glsl, A_LANES): for devices with subgroup shuffles whose subgroup is the workgroup.
#extension GL_KHR_shader_subgroup_shuffle : require
#define MM_A_LANES
#include "matmul_cpu.glsl"
