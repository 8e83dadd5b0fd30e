#version 450
// matmul_cpu: its body and why it is shaped so are in matmul_cpu.glsl.
#include "matmul_cpu.glsl"
