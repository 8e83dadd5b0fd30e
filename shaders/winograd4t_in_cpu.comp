#version 450
#extension GL_EXT_samplerless_texture_functions : require
// Winograd F(4x4, 3x3) input transform, transposed (src/ops/conv_winograd.c: maps with few
// tiles, where the product runs with the tiles as rows and the output channels as columns):
// V^T[xi][t][ci] = (B^T d B)[xi] for the 6x6 patch d of channel ci under output tile t, B^T
// winograd4.glsl's bt6. An invocation takes one tile and 4 consecutive channels, so each of
// its 36 stores is one uvec4 (llvmpipe stores a lane at a time); X comes through a texel buffer
// of words. Channels past Cin (K padded to a multiple of 4) are zeros.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "winograd4.glsl"

layout(local_size_x_id = 0) in;

layout(binding = 0) uniform utextureBuffer X;
layout(std430, binding = 1) writeonly buffer V { uvec4 v[]; };
layout(push_constant) uniform Push {
    uint count;            // rows * k_pad / 4 invocations
    uint cin, k_pad, rows; // V^T is [36][rows][k_pad], rows = every image's tiles
    uint tiles, tiles_w;   // tiles of one image, of one tile row
    uint images;
    int h, w, ph, pw;
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint quads = pc.k_pad / 4u, cq = i % quads, t = i / quads;
    uint n = t / pc.tiles, r = t % pc.tiles;
    int y0 = int(r / pc.tiles_w) * 4 - pc.ph, x0 = int(r % pc.tiles_w) * 4 - pc.pw;
    vec4 out_v[36]; // [xi] over the 4 channels
    [[unroll]] for (uint s = 0u; s < 4u; s++) {
        uint ci = cq * 4u + s;
        bool live = ci < pc.cin;
        int base = int((n * pc.cin + min(ci, pc.cin - 1u)) * uint(pc.h * pc.w));
        float d[6][6];
        [[unroll]] for (int a = 0; a < 6; a++)
            [[unroll]] for (int b = 0; b < 6; b++) {
                int yy = y0 + a, xx = x0 + b;
                bool inside = live && yy >= 0 && yy < pc.h && xx >= 0 && xx < pc.w;
                float val = uintBitsToFloat(texelFetch(X, inside ? base + yy * pc.w + xx : 0).x);
                d[a][b] = inside ? val : 0.0;
            }
        float m[6][6];
        [[unroll]] for (int b = 0; b < 6; b++) {
            float col[6];
            bt6(d[0][b], d[1][b], d[2][b], d[3][b], d[4][b], d[5][b], col);
            [[unroll]] for (int a = 0; a < 6; a++) m[a][b] = col[a];
        }
        [[unroll]] for (int a = 0; a < 6; a++) {
            float row[6];
            bt6(m[a][0], m[a][1], m[a][2], m[a][3], m[a][4], m[a][5], row);
            [[unroll]] for (int b = 0; b < 6; b++) out_v[a * 6 + b][s] = row[b];
        }
    }
    [[unroll]] for (uint e = 0u; e < 36u; e++) v[(e * pc.rows + t) * quads + cq] = floatBitsToUint(out_v[e]);
}
