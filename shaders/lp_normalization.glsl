// LpNormalization: one invocation per vector along the axis (input viewed as [outer, len,
// inner]): y = x / ||x||_p, p = 1 or 2, accumulated in fp32; a zero vector stays zero.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint P = 2u;
layout(constant_id = 2) const uint DT = DT_F32; // the dtype results round to

layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Y { ELEM y[]; };
layout(push_constant) uniform Push { uint vectors; uint len; uint inner; } pc;

void main()
{
    uint v = linear_id();
    if (v >= pc.vectors) return;
    uint base = v / pc.inner * pc.len * pc.inner + v % pc.inner;
    float norm = 0.0;
    for (uint k = 0u; k < pc.len; k++) {
        float a = uintBitsToFloat(LOAD(x, base + k * pc.inner));
        norm += P == 1u ? abs(a) : a * a;
    }
    if (P == 2u) norm = sqrt(norm);
    float scale = norm != 0.0 ? 1.0 / norm : 0.0;
    for (uint k = 0u; k < pc.len; k++) {
        uint at = base + k * pc.inner;
        STORE(y, at, floatBitsToUint(round_to_dtype(DT, uintBitsToFloat(LOAD(x, at)) * scale)));
    }
}
