#version 450
#extension GL_EXT_samplerless_texture_functions : require
// Winograd F(4x4, 3x3) output transform, transposed (src/ops/conv_winograd.c): the 4x4 outputs
// of tile t and channel co are A^T m A of the 36 products M^T[xi][t][co] (A^T
// winograd4.glsl's at6), plus the bias, a residual of Y's shape and the fused activation,
// stored into Y [N, Cout, OH, OW]. An invocation takes one tile and 4 consecutive channels,
// reading each product's 4 values as one texel (Cout a multiple of 4); where OW is a multiple
// of 4 a tile's output row is one uvec4 store.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "winograd4.glsl"
#include "fused_act.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool HAS_BIAS = false;
layout(constant_id = 2) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)
layout(constant_id = 3) const bool QUADS = false; // OW a multiple of 4: a row of a tile as one uvec4
layout(constant_id = 4) const bool RESIDUAL = false; // R added before the activation

layout(binding = 0) uniform textureBuffer M; // [36][rows][cout] as texels of 4 channels
layout(std430, binding = 1) readonly buffer Bias { uint bias[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
layout(std430, binding = 2) writeonly buffer Y4 { uvec4 y4[]; };
layout(std430, binding = 3) readonly buffer R { uint res[]; };
layout(std430, binding = 3) readonly buffer R4 { uvec4 res4[]; };
layout(push_constant) uniform Push {
    uint count;           // rows * cout / 4
    uint cout, rows;
    uint tiles, tiles_w, images;
    uint oh, ow;
    float lo, hi;
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint quads = pc.cout / 4u, cq = i % quads, t = i / quads;
    uint n = t / pc.tiles, r = t % pc.tiles;
    uint oy0 = r / pc.tiles_w * 4u, ox = r % pc.tiles_w * 4u;
    vec4 s[4][6]; // A^T m: [output row][column of m], each over the 4 channels
    [[unroll]] for (int b = 0; b < 6; b++) {
        vec4 col[6], o[4];
        [[unroll]] for (int a = 0; a < 6; a++) col[a] = texelFetch(M, int((uint(a * 6 + b) * pc.rows + t) * quads + cq));
        at6(col[0], col[1], col[2], col[3], col[4], col[5], o);
        [[unroll]] for (int a = 0; a < 4; a++) s[a][b] = o[a];
    }
    [[unroll]] for (uint a = 0u; a < 4u; a++) {
        uint oy = oy0 + a;
        if (oy >= pc.oh) break;
        vec4 o[4]; // (A^T m) A: output columns 0..3 of row a, each over the 4 channels
        at6(s[a][0], s[a][1], s[a][2], s[a][3], s[a][4], s[a][5], o);
        [[unroll]] for (uint e = 0u; e < 4u; e++) {
            uint co = cq * 4u + e;
            uint at = (n * pc.cout + co) * pc.oh * pc.ow + oy * pc.ow + ox;
            float bv = HAS_BIAS ? uintBitsToFloat(bias[co]) : 0.0;
            vec4 v = vec4(o[0][e], o[1][e], o[2][e], o[3][e]) + bv;
            if (RESIDUAL) {
                if (QUADS) {
                    v += uintBitsToFloat(res4[at / 4u]);
                } else {
                    [[unroll]] for (uint c = 0u; c < 4u; c++)
                        if (ox + c < pc.ow) v[c] += uintBitsToFloat(res[at + c]);
                }
            }
            [[unroll]] for (uint c = 0u; c < 4u; c++) v[c] = fused_act(ACT, v[c], pc.lo, pc.hi);
            if (QUADS) {
                y4[at / 4u] = floatBitsToUint(v);
            } else {
                [[unroll]] for (uint c = 0u; c < 4u; c++)
                    if (ox + c < pc.ow) y[at + c] = floatBitsToUint(v[c]);
            }
        }
    }
}
