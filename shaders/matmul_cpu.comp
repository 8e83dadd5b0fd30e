#version 450
#extension GL_EXT_samplerless_texture_functions : require
// matmul_cpu: its body and why it is shaped so are in matmul_cpu.glsl.
#include "matmul_cpu.glsl"
