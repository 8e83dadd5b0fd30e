#version 450
// Softmax, LogSoftmax and Hardmax in 32-bit words, every dtype (the body is softmax.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "softmax.glsl"
