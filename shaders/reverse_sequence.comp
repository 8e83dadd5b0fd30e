#version 450
// ReverseSequence in 32-bit words, every dtype (the body is reverse_sequence.glsl).
#include "common.glsl"
#include "storage.glsl"
#include "reverse_sequence.glsl"
