#version 450
// ConvTranspose's output on CPU devices (src/ops/conv_matmul.c), 32-bit float words, from the product
// col = W^T X that the CPU MatMul computes: col[n][(oc * KH + ky) * KW + kx][iy * IW + ix] is
// what input pixel (iy, ix) gives output channel oc through tap (ky, kx). Output pixel (oy, ox)
// gathers the taps whose input lands on it, iy * SH - PH + ky * DH == oy. An invocation writes
// one output row (OW elements); the kernel geometry is specialised, so that the divisions by
// the strides are multiplications (llvmpipe runs integer divisions by a variable one lane at a
// time) and the tap loops unroll.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "fused_act.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int KH = 1;
layout(constant_id = 2) const int KW = 1;
layout(constant_id = 3) const int SH = 1;
layout(constant_id = 4) const int SW = 1;
layout(constant_id = 5) const int DH = 1;
layout(constant_id = 6) const int DW = 1;
layout(constant_id = 7) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)

layout(std430, binding = 0) readonly buffer Col { uint col[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };

// keep in step with col2im_push in src/ops/conv_matmul.c; rows: batch * cout * OH
layout(push_constant) uniform Push {
    uint rows, cout, has_bias;
    int IH, IW, OH, OW, PH, PW;
    float lo, hi; // ACT's bounds (a clamp's)
} pc;

void main()
{
    uint row = linear_id();
    if (row >= pc.rows) return;
    int oy = int(row % uint(pc.OH));
    uint r = row / uint(pc.OH), oc = r % pc.cout, n = r / pc.cout;
    uint plane = uint(pc.IH * pc.IW);
    uint base = (n * pc.cout + oc) * uint(KH * KW) * plane;
    float bias = pc.has_bias != 0u ? uintBitsToFloat(b[oc]) : 0.0;
    // the kernel rows that reach this output row, and their input rows (-1: none)
    int iys[KH];
    [[unroll]] for (int ky = 0; ky < KH; ky++) {
        int q = oy + pc.PH - ky * DH;
        iys[ky] = q >= 0 && q % SH == 0 && q / SH < pc.IH ? q / SH : -1;
    }
    uint dst = row * uint(pc.OW);
    for (int ox = 0; ox < pc.OW; ox++) {
        float acc = bias;
        [[unroll]] for (int kx = 0; kx < KW; kx++) {
            int q = ox + pc.PW - kx * DW;
            if (q < 0 || q % SW != 0 || q / SW >= pc.IW) continue;
            int ix = q / SW;
            [[unroll]] for (int ky = 0; ky < KH; ky++) {
                if (iys[ky] < 0) continue;
                acc += uintBitsToFloat(col[base + uint((ky * KW + kx)) * plane + uint(iys[ky] * pc.IW + ix)]);
            }
        }
        y[dst + uint(ox)] = floatBitsToUint(fused_act(ACT, acc, pc.lo, pc.hi));
    }
}
