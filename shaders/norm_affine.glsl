// Per-channel affine map y = x * scale[c] + shift[c] (inference BatchNormalization, with the
// statistics already folded into scale and shift by the host or by norm_fold).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;

layout(std430, binding = 0) readonly buffer In { ELEM x[]; };
layout(std430, binding = 1) readonly buffer ScaleShift { vec2 scale_shift[]; };
layout(std430, binding = 2) writeonly buffer Out { ELEM y[]; };
// channel of element i: (i / inner) % channels
layout(push_constant) uniform Push { uint count; uint inner; uint channels; } pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    vec2 ss = scale_shift[(i / pc.inner) % pc.channels];
    STORE(y, i, floatBitsToUint(round_to_dtype(DT, uintBitsToFloat(LOAD(x, i)) * ss.x + ss.y)));
}
