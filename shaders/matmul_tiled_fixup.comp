#version 450
// matmul_tiled with split K finished in the same dispatch (MM_FIXUP in matmul_tiled.glsl), in
// 32-bit words, every dtype: six storage buffers, so only where the device allows that many.
#define MM_FIXUP
#include "common.glsl"
#include "storage.glsl"
#include "matmul_tiled.glsl"
