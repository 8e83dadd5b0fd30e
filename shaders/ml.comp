#version 450
// ai.onnx.ml's element maps. MODE 0, Binarizer: y = x > threshold ? 1 : 0. MODE 1,
// ArrayFeatureExtractor: y[r, j] = x[r, indices[j]] over rows of `cols` entries (an index
// outside [0, cols) reads 0). 32-bit words; DT is X's dtype.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const uint MODE = 0u;

layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer Indices { int indices[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Push { uint count, cols, picks; float threshold; } pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    if (MODE == 0u) {
        y[i] = from_float(DT, as_float(DT, x[i]) > pc.threshold ? 1.0 : 0.0);
        return;
    }
    uint row = i / pc.picks;
    int col = indices[i % pc.picks];
    y[i] = col >= 0 && uint(col) < pc.cols ? x[row * pc.cols + uint(col)] : 0u;
}
