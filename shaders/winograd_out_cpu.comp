#version 450
#extension GL_EXT_samplerless_texture_functions : require
// Winograd F(2x2, 3x3) output transform for CPU Vulkan drivers (src/ops/conv_winograd.c): the
// 2x2 outputs of tile t and channel co are A^T m A of the 16 products M[xi][co][t], plus the
// bias, a residual of Y's shape (ResNet's shortcut Add) and the fused activation (common.glsl's
// fused_clamp), stored into Y [N, Cout, OH, OW].
// An invocation takes 4 consecutive tiles of one channel, reading each product's 4 values as
// one texel (M's rows are whole texels: t4), lanes on adjacent tile groups; where OW is even an
// output pair is one uvec2 store (llvmpipe stores a lane at a time).
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "fused_act.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool HAS_BIAS = false;
layout(constant_id = 2) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)
layout(constant_id = 3) const bool PAIRS = false; // OW even: (ox, ox + 1) as one uvec2
layout(constant_id = 4) const bool RESIDUAL = false; // R added before the activation

layout(binding = 0) uniform textureBuffer M; // [16][cout][t4] as texels of 4 tiles
layout(std430, binding = 1) readonly buffer Bias { uint bias[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
layout(std430, binding = 2) writeonly buffer Y2 { uvec2 y2[]; };
layout(std430, binding = 3) readonly buffer R { uint res[]; };
layout(std430, binding = 3) readonly buffer R2 { uvec2 res2[]; };
layout(push_constant) uniform Push {
    uint count;           // cout * t4 / 4
    uint cout, t4;
    uint tiles, tiles_w, images;
    uint oh, ow;
    float lo, hi;
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint groups = pc.t4 / 4u, q = i % groups, co = i / groups;
    vec4 m[4][4]; // [row][col] of the 4x4, each over the 4 tiles
    [[unroll]] for (int a = 0; a < 4; a++)
        [[unroll]] for (int b = 0; b < 4; b++) m[a][b] = texelFetch(M, int((uint(a * 4 + b) * pc.cout + co) * groups + q));
    vec4 s[2][4]; // A^T m: rows m0 + m1 + m2, m1 - m2 - m3
    [[unroll]] for (int b = 0; b < 4; b++) {
        s[0][b] = m[0][b] + m[1][b] + m[2][b];
        s[1][b] = m[1][b] - m[2][b] - m[3][b];
    }
    float bv = HAS_BIAS ? uintBitsToFloat(bias[co]) : 0.0;
    [[unroll]] for (uint e = 0u; e < 4u; e++) {
        uint t = q * 4u + e;
        uint n = t / pc.tiles, r = t % pc.tiles;
        if (n >= pc.images) break;
        uint oy = r / pc.tiles_w * 2u, ox = r % pc.tiles_w * 2u;
        uint plane = (n * pc.cout + co) * pc.oh * pc.ow;
        [[unroll]] for (uint a = 0u; a < 2u; a++) {
            float o0 = s[a][0][e] + s[a][1][e] + s[a][2][e] + bv;
            float o1 = s[a][1][e] - s[a][2][e] - s[a][3][e] + bv;
            if (oy + a >= pc.oh) continue;
            uint at = plane + (oy + a) * pc.ow + ox;
            if (RESIDUAL) {
                vec2 rv = PAIRS ? uintBitsToFloat(res2[at / 2u])
                                : vec2(uintBitsToFloat(res[at]), ox + 1u < pc.ow ? uintBitsToFloat(res[at + 1u]) : 0.0);
                o0 += rv.x;
                o1 += rv.y;
            }
            o0 = fused_act(ACT, o0, pc.lo, pc.hi);
            o1 = fused_act(ACT, o1, pc.lo, pc.hi);
            if (PAIRS) {
                y2[at / 2u] = uvec2(floatBitsToUint(o0), floatBitsToUint(o1));
            } else {
                y[at] = floatBitsToUint(o0);
                if (ox + 1u < pc.ow) y[at + 1u] = floatBitsToUint(o1);
            }
        }
    }
}
