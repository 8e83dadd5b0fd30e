#version 450
// RMSNormalization in 32-bit words (the body is rms_norm.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "rms_norm.glsl"
