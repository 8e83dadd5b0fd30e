#version 450
// Per-channel affine map in 32-bit words, every dtype (the body is norm_affine.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "norm_affine.glsl"
