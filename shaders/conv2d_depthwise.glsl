// Depthwise 2-D Conv (one input channel per group, any channel multiplier): one invocation per
// output element, the kernel geometry specialized so the window loop unrolls (3x3 mostly).
// Y_LAYOUT: Y stored through a layout of (image, channel, pixel) instead of [N, C, OH, OW] (a
// Transpose after it claimed, src/ops/conv_gpu.c: ConvNeXt's [N, C, H, W] -> [N, H, W, C] before its
// LayerNormalization, so that no copy of its own runs).

#include "fused_act.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
#include "conv_window.glsl" // KH, KW, SH, SW, DH, DW: constants 2-7
layout(constant_id = 8) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)
layout(constant_id = 9) const bool Y_LAYOUT = false;

layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) readonly buffer W { ELEM w[]; };
layout(std430, binding = 2) readonly buffer B { ELEM b[]; };
layout(std430, binding = 3) writeonly buffer Y { ELEM y[]; };
layout(push_constant) uniform Push {
    uint count;  // output elements
    uint cin, cout, multiplier; // cout = cin * multiplier
    uint has_bias;
    int IH, IW, OH, OW, PH, PW;
    float lo, hi; // ACT's bounds (a clamp's)
    // Y_LAYOUT: Y(n, c, p) at (n % y_zb) * y_a + (n / y_zb) * y_a2 + c * y_b + (p / y_nb) * y_c + p % y_nb
    // (src/ops/matmul.h mm_store_layout)
    uint y_a, y_zb, y_a2, y_b, y_nb, y_c;
} pc;
#include "store_layout.glsl"

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    int ow = int(i % uint(pc.OW));
    uint t = i / uint(pc.OW);
    int oh = int(t % uint(pc.OH));
    t /= uint(pc.OH);
    uint oc = t % pc.cout, n = t / pc.cout;
    uint x_base = (n * pc.cin + oc / pc.multiplier) * uint(pc.IH * pc.IW);
    uint w_base = oc * uint(KH * KW);
    int ih0 = oh * SH - pc.PH, iw0 = ow * SW - pc.PW;

    float acc = pc.has_bias != 0u ? uintBitsToFloat(LOAD(b, oc)) : 0.0;
    for (int kh = 0; kh < KH; kh++) {
        int ih = ih0 + kh * DH;
        if (ih < 0 || ih >= pc.IH) continue;
        for (int kw = 0; kw < KW; kw++) {
            int iw = iw0 + kw * DW;
            if (iw < 0 || iw >= pc.IW) continue;
            acc += uintBitsToFloat(LOAD(x, x_base + uint(ih * pc.IW + iw))) * uintBitsToFloat(LOAD(w, w_base + uint(kh * KW + kw)));
        }
    }
    uint at = Y_LAYOUT ? y_at(n, oc, uint(oh * pc.OW + ow)) : i;
    STORE(y, at, floatBitsToUint(round_to_dtype(DT, fused_act(ACT, acc, pc.lo, pc.hi))));
}
