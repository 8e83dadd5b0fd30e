// Builds the per-channel (scale, shift) pairs that norm_affine and norm_rows read,
// from parameters that are only known at run time. Two small inputs per pass keep it at
// three bindings; BatchNormalization runs SCALE then SHIFT.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0u; // keep in step with src/ops/normalization.c

#define MODE_SCALE 0u  // pair.x = a / sqrt(b + eps)       (a = scale, b = var)
#define MODE_SHIFT 1u  // pair.y = a - b * pair.x          (a = bias, b = mean)
#define MODE_PACK 2u   // pair = (a[i % na], b[i % nb])    (scale, bias)
#define MODE_PACK_SCALE 3u // pair = (a[i % na], 0)        (no bias)

layout(std430, binding = 0) readonly buffer A { ELEM a[]; };
layout(std430, binding = 1) readonly buffer B { ELEM b[]; };
layout(std430, binding = 2) buffer Pairs { vec2 pairs[]; };
layout(push_constant) uniform Push { uint count; uint na; uint nb; float eps; } pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    float av = uintBitsToFloat(LOAD(a, i % pc.na));
    if (MODE == MODE_SCALE) {
        pairs[i].x = av / sqrt(uintBitsToFloat(LOAD(b, i % pc.nb)) + pc.eps);
    } else if (MODE == MODE_SHIFT) {
        pairs[i].y = av - uintBitsToFloat(LOAD(b, i % pc.nb)) * pairs[i].x;
    } else if (MODE == MODE_PACK) {
        pairs[i] = vec2(av, uintBitsToFloat(LOAD(b, i % pc.nb)));
    } else {
        pairs[i] = vec2(av, 0.0);
    }
}
