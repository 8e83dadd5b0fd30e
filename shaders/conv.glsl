// The reference Conv / ConvTranspose for every shape: one invocation per output element of
// an N-d convolution, with 1-D and 2-D convs seen as 3-D with size-1 leading spatial dims.
// TRANSPOSED gathers the ConvTranspose output (W is [Cin, Cout/g, k...] then).

#include "fused_act.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const bool TRANSPOSED = false;
layout(constant_id = 3) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)

layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) readonly buffer W { ELEM w[]; };
layout(std430, binding = 2) readonly buffer B { ELEM b[]; };
layout(std430, binding = 3) writeonly buffer Y { ELEM y[]; };
layout(push_constant) uniform Push {
    uint count;  // output elements
    uint cin, cin_g, cout, cout_g;
    uint has_bias;
    float lo, hi; // ACT's bounds (a clamp's)
    ivec4 in4, out4, kernel4, stride4, dilation4, pad4; // (d, h, w, unused): 16-byte aligned
} pc;

void main()
{
    ivec3 in_size = pc.in4.xyz, kernel = pc.kernel4.xyz, stride = pc.stride4.xyz;
    ivec3 dilation = pc.dilation4.xyz, pad_begin = pc.pad4.xyz;
    uint i = linear_id();
    if (i >= pc.count) return;
    uvec3 osz = uvec3(pc.out4.xyz);
    uint t = i;
    int ow = int(t % osz.z); t /= osz.z;
    int oh = int(t % osz.y); t /= osz.y;
    int od = int(t % osz.x); t /= osz.x;
    uint oc = t % pc.cout;
    uint n = t / pc.cout;
    uint g = oc / pc.cout_g;
    ivec3 o = ivec3(od, oh, ow);
    uint in_plane = uint(in_size.x * in_size.y * in_size.z);
    uint k_plane = uint(kernel.x * kernel.y * kernel.z);

    float acc = pc.has_bias != 0u ? uintBitsToFloat(LOAD(b, oc)) : 0.0;
    for (uint ic = 0u; ic < pc.cin_g; ic++) {
        uint c_in = g * pc.cin_g + ic;
        uint x_base = (n * pc.cin + c_in) * in_plane;
        uint w_base = TRANSPOSED ? (c_in * pc.cout_g + oc % pc.cout_g) * k_plane : (oc * pc.cin_g + ic) * k_plane;
        for (int kd = 0; kd < kernel.x; kd++)
        for (int kh = 0; kh < kernel.y; kh++)
        for (int kw = 0; kw < kernel.z; kw++) {
            ivec3 k = ivec3(kd, kh, kw);
            ivec3 p;
            if (TRANSPOSED) {
                // output o receives input p where p * stride - pad + k * dilation == o
                ivec3 q = o + pad_begin - k * dilation;
                if (any(lessThan(q, ivec3(0))) || any(notEqual(q % stride, ivec3(0)))) continue;
                p = q / stride;
            } else {
                p = o * stride - pad_begin + k * dilation;
                if (any(lessThan(p, ivec3(0)))) continue;
            }
            if (any(greaterThanEqual(p, in_size))) continue;
            uint xi = x_base + uint((p.x * in_size.y + p.y) * in_size.z + p.z);
            uint wi = w_base + uint((kd * kernel.y + kh) * kernel.z + kw);
            acc += uintBitsToFloat(LOAD(x, xi)) * uintBitsToFloat(LOAD(w, wi));
        }
    }
    STORE(y, i, floatBitsToUint(round_to_dtype(DT, fused_act(ACT, acc, pc.lo, pc.hi))));
}
