#version 450
#extension GL_EXT_samplerless_texture_functions : require
// Winograd F(2x2, 3x3) input transform for CPU Vulkan drivers (src/ops/conv_winograd.c): V[xi]
// [ci][t] = (B^T d B)[xi] for the 4x4 patch d of channel ci under output tile t (2x2 outputs;
// tiles of every image in a row, t = n * tiles + th * tw_count + tw). An invocation takes 4
// consecutive tiles of one channel, so each of its 16 stores is one uvec4 (llvmpipe stores a
// lane at a time); X comes through a texel buffer of words (one gather for all lanes). Rows of
// V past Cin (K padded to a multiple of 4) and tiles past the last are zeros.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(binding = 0) uniform utextureBuffer X;
layout(std430, binding = 1) writeonly buffer V { uvec4 v[]; };
layout(push_constant) uniform Push {
    uint count;            // k_pad * t4 / 4 invocations
    uint cin, k_pad, t4;   // V is [16][k_pad][t4]
    uint tiles, tiles_w;   // tiles of one image, of one tile row
    uint images;
    int h, w, ph, pw;
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint q = i % (pc.t4 / 4u), ci = i / (pc.t4 / 4u);
    vec4 out_v[16]; // [xi] over the 4 tiles
    [[unroll]] for (uint e = 0u; e < 16u; e++) out_v[e] = vec4(0.0);
    [[unroll]] for (uint s = 0u; s < 4u; s++) {
        uint t = q * 4u + s;
        uint n = t / pc.tiles, r = t % pc.tiles;
        bool live = ci < pc.cin && n < pc.images;
        int y0 = int(r / pc.tiles_w) * 2 - pc.ph, x0 = int(r % pc.tiles_w) * 2 - pc.pw;
        int base = int((min(n, pc.images - 1u) * pc.cin + min(ci, pc.cin - 1u)) * uint(pc.h * pc.w));
        float d[4][4];
        [[unroll]] for (int a = 0; a < 4; a++)
            [[unroll]] for (int b = 0; b < 4; b++) {
                int yy = y0 + a, xx = x0 + b;
                bool inside = live && yy >= 0 && yy < pc.h && xx >= 0 && xx < pc.w;
                float val = uintBitsToFloat(texelFetch(X, inside ? base + yy * pc.w + xx : 0).x);
                d[a][b] = inside ? val : 0.0;
            }
        float m[4][4]; // B^T d: rows d0 - d2, d1 + d2, d2 - d1, d1 - d3
        [[unroll]] for (int b = 0; b < 4; b++) {
            m[0][b] = d[0][b] - d[2][b];
            m[1][b] = d[1][b] + d[2][b];
            m[2][b] = d[2][b] - d[1][b];
            m[3][b] = d[1][b] - d[3][b];
        }
        [[unroll]] for (int a = 0; a < 4; a++) { // (B^T d) B: the same on the columns
            out_v[a * 4 + 0][s] = m[a][0] - m[a][2];
            out_v[a * 4 + 1][s] = m[a][1] + m[a][2];
            out_v[a * 4 + 2][s] = m[a][2] - m[a][1];
            out_v[a * 4 + 3][s] = m[a][1] - m[a][3];
        }
    }
    [[unroll]] for (uint e = 0u; e < 16u; e++) v[((e * pc.k_pad + ci) * pc.t4) / 4u + q] = floatBitsToUint(out_v[e]);
}
