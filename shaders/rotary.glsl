// RotaryEmbedding: rotates the first `rot` dims of each head vector by its position's
// (cos, sin) pairs (table from rotary_cache.comp, [B * S][rot / 2]): halves (x[k], x[k + rot/2])
// or, INTERLEAVED, neighbours (x[2k], x[2k + 1]); the other dims pass through. The input is
// [B, H, S, D] or (IN_3D) [B, S, H * D]. One invocation per element; products and sums are
// rounded to the dtype as the reference rounds them.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = DT_F32;
layout(constant_id = 2) const bool IN_3D = false;
layout(constant_id = 3) const bool INTERLEAVED = false;

layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) readonly buffer Table { vec2 table[]; };
layout(std430, binding = 2) writeonly buffer Y { ELEM y[]; };
layout(push_constant) uniform Push { uint count; uint heads; uint seq; uint head; uint rot; } pc;

float at(uint i) { return uintBitsToFloat(LOAD(x, i)); }

void main()
{
    uint e = linear_id();
    if (e >= pc.count) return;
    uint d = e % pc.head, base = e - d;
    if (d >= pc.rot) {
        STORE(y, e, LOAD(x, e));
        return;
    }
    uint s = IN_3D ? (e / (pc.head * pc.heads)) % pc.seq : (e / pc.head) % pc.seq;
    uint b = e / (pc.head * pc.heads * pc.seq);
    uint half_rot = pc.rot / 2u;
    uint k = INTERLEAVED ? d / 2u : d % half_rot;
    bool first = INTERLEAVED ? d % 2u == 0u : d < half_rot;
    float x1 = INTERLEAVED ? at(base + 2u * k) : at(base + k);
    float x2 = INTERLEAVED ? at(base + 2u * k + 1u) : at(base + k + half_rot);
    vec2 cs = table[(b * pc.seq + s) * half_rot + k];
    float v = first ? round_to_dtype(DT, cs.x * x1) - round_to_dtype(DT, cs.y * x2)
                    : round_to_dtype(DT, cs.y * x1) + round_to_dtype(DT, cs.x * x2);
    STORE(y, e, floatBitsToUint(round_to_dtype(DT, v)));
}
