#version 450
#extension GL_EXT_samplerless_texture_functions : require
// Winograd F(4x4, 3x3) input transform for CPU Vulkan drivers (src/ops/conv_winograd.c): V[xi]
// [ci][t] = (B^T d B)[xi] for the 6x6 patch d of channel ci under output tile t (4x4 outputs;
// tiles of every image in a row, t = n * tiles + th * tw_count + tw), B^T the transform at the
// points 0, 1, -1, 2, -2 and infinity. As winograd_in_cpu.comp (F(2x2, 3x3)): an invocation
// takes 4 consecutive tiles of one channel, so each of its 36 stores is one uvec4; X comes
// through a texel buffer of words. Rows of V past Cin and tiles past the last are zeros.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "winograd4.glsl"

layout(local_size_x_id = 0) in;

layout(binding = 0) uniform utextureBuffer X;
layout(std430, binding = 1) writeonly buffer V { uvec4 v[]; };
layout(push_constant) uniform Push {
    uint count;            // k_pad * t4 / 4 invocations
    uint cin, k_pad, t4;   // V is [36][k_pad][t4]
    uint tiles, tiles_w;   // tiles of one image, of one tile row
    uint images;
    int h, w, ph, pw;
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint q = i % (pc.t4 / 4u), ci = i / (pc.t4 / 4u);
    vec4 out_v[36]; // [xi] over the 4 tiles
    [[unroll]] for (uint s = 0u; s < 4u; s++) {
        uint t = q * 4u + s;
        uint n = t / pc.tiles, r = t % pc.tiles;
        bool live = ci < pc.cin && n < pc.images;
        int y0 = int(r / pc.tiles_w) * 4 - pc.ph, x0 = int(r % pc.tiles_w) * 4 - pc.pw;
        int base = int((min(n, pc.images - 1u) * pc.cin + min(ci, pc.cin - 1u)) * uint(pc.h * pc.w));
        float d[6][6];
        [[unroll]] for (int a = 0; a < 6; a++)
            [[unroll]] for (int b = 0; b < 6; b++) {
                int yy = y0 + a, xx = x0 + b;
                bool inside = live && yy >= 0 && yy < pc.h && xx >= 0 && xx < pc.w;
                float val = uintBitsToFloat(texelFetch(X, inside ? base + yy * pc.w + xx : 0).x);
                d[a][b] = inside ? val : 0.0;
            }
        float m[6][6]; // B^T d, a column at a time
        [[unroll]] for (int b = 0; b < 6; b++) {
            float col[6];
            bt6(d[0][b], d[1][b], d[2][b], d[3][b], d[4][b], d[5][b], col);
            [[unroll]] for (int a = 0; a < 6; a++) m[a][b] = col[a];
        }
        [[unroll]] for (int a = 0; a < 6; a++) { // (B^T d) B: the same on the rows
            float row[6];
            bt6(m[a][0], m[a][1], m[a][2], m[a][3], m[a][4], m[a][5], row);
            [[unroll]] for (int b = 0; b < 6; b++) out_v[a * 6 + b][s] = row[b];
        }
    }
    [[unroll]] for (uint e = 0u; e < 36u; e++) v[((e * pc.k_pad + ci) * pc.t4) / 4u + q] = floatBitsToUint(out_v[e]);
}
