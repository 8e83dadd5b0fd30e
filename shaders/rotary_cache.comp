#version 450
// RotaryEmbedding's (cos, sin) pairs for each (batch, position) of the input: rows
// position_ids[b][s] of the caches ([max_position, half]; ids clamped into range), or, without
// position_ids, row b * seq + s of [B, S, half] caches. Caches and the table are fp32 words.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool POSITIONS = false;

layout(std430, binding = 0) readonly buffer Cos { float cos_cache[]; };
layout(std430, binding = 1) readonly buffer Sin { float sin_cache[]; };
layout(std430, binding = 2) readonly buffer Pos { int pos[]; }; // int64 held as int32 words
layout(std430, binding = 3) writeonly buffer Table { vec2 table[]; };
layout(push_constant) uniform Push { uint count; uint half_dim; uint rows; } pc; // rows: the caches' row count

void main()
{
    uint e = linear_id();
    if (e >= pc.count) return;
    uint k = e % pc.half_dim, bs = e / pc.half_dim;
    uint row = POSITIONS ? uint(clamp(pos[bs], 0, int(pc.rows) - 1)) : bs;
    table[e] = vec2(cos_cache[row * pc.half_dim + k], sin_cache[row * pc.half_dim + k]);
}
