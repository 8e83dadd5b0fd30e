#version 450
#extension GL_EXT_samplerless_texture_functions : require
// conv2d_cpu_depthwise in 32-bit words, X read as a texel buffer of words (one gather for all
// lanes where a storage-buffer load is a loop over them); the body is conv2d_cpu_depthwise.glsl.
#define DEPTHWISE_TEXEL_X
#include "common.glsl"
#include "storage.glsl"
#include "conv2d_cpu_depthwise.glsl"
