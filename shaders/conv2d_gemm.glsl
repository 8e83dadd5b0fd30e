// 2-D Conv as an implicit GEMM: Y[oc, pixel] = sum_k W[oc, k] * im2col(X)[k, pixel], with
// k = (ic, kh, kw) and pixel = (n, oh, ow). A workgroup of 16 x 8 invocations computes a
// BM x BN tile (output channels x pixels) through BK-deep slices staged in shared memory;
// each invocation holds TM x TN accumulators, so every loaded value is reused TM or TN times.
// gl_WorkGroupID.z runs over groups x K splits: with SPLIT_K > 1 each workgroup sums one slice
// of K and stores raw fp32 partial sums in a scratch [SPLIT_K][output] buffer (bound at Y), which
// conv_splitk_reduce.glsl adds up (small late layers at batch 1 have too few tiles to fill a
// big GPU otherwise). The kernel geometry is specialized, so the im2col index arithmetic
// divides by constants.

#include "fused_act.glsl"

layout(local_size_x = 128) in;
layout(constant_id = 1) const uint DT = 0u;
#include "conv_window.glsl" // KH, KW, SH, SW, DH, DW: constants 2-7
layout(constant_id = 8) const uint TM = 8u; // output channels per invocation
layout(constant_id = 9) const uint TN = 4u; // pixels per invocation
layout(constant_id = 10) const uint SPLIT_K = 1u;
layout(constant_id = 11) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)

const uint BK = 16u;
const uint BM = 8u * TM;
const uint BN = 16u * TN;

layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) readonly buffer W { ELEM w[]; };
layout(std430, binding = 2) readonly buffer B { ELEM b[]; };
layout(std430, binding = 3) writeonly buffer Y { ELEM y[]; };
// With SPLIT_K > 1 binding 3 is the fp32 scratch instead, in every variant.
layout(std430, binding = 3) writeonly buffer Partial { uint partial[]; };
layout(push_constant) uniform Push {
    uint pixels;  // batch * OH * OW
    uint cin, cin_g, cout, cout_g;
    uint has_bias;
    int IH, IW, OH, OW, PH, PW;
    uint k_chunk; // K per split, a multiple of BK
    float lo, hi; // ACT's bounds (a clamp's)
} pc;

shared float a_tile[BK][BM + 1u]; // weights, k-major; +1 keeps the stores off one bank
shared float b_tile[BK][BN]; // im2col columns

void main()
{
    uint tid = gl_LocalInvocationID.x;
    uint tx = tid % 16u, ty = tid / 16u;
    uint g = gl_WorkGroupID.z / SPLIT_K, split = gl_WorkGroupID.z % SPLIT_K;
    uint m0 = gl_WorkGroupID.y * BM;
    uint n0 = gl_WorkGroupID.x * BN;
    uint K = pc.cin_g * uint(KH * KW);
    uint k_begin = split * pc.k_chunk, k_end = min(K, k_begin + pc.k_chunk);
    uint out_plane = uint(pc.OH * pc.OW);
    uint in_plane = uint(pc.IH * pc.IW);

    float acc[TM][TN];
    for (uint i = 0u; i < TM; i++)
        for (uint j = 0u; j < TN; j++) acc[i][j] = 0.0;

    for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
        for (uint e = tid; e < BK * BM; e += 128u) {
            uint kk = e % BK, m = e / BK;
            uint oc = m0 + m, k = k0 + kk;
            float v = 0.0;
            if (oc < pc.cout_g && k < k_end) v = uintBitsToFloat(LOAD(w, (g * pc.cout_g + oc) * K + k));
            a_tile[kk][m] = v;
        }
        for (uint e = tid; e < BK * BN; e += 128u) {
            uint nn = e % BN, kk = e / BN;
            uint p = n0 + nn, k = k0 + kk;
            float v = 0.0;
            if (p < pc.pixels && k < k_end) {
                uint batch = p / out_plane, q = p % out_plane;
                int oh = int(q) / pc.OW, ow = int(q) % pc.OW;
                uint ic = k / uint(KH * KW), r = k % uint(KH * KW);
                int ih = oh * SH - pc.PH + int(r / uint(KW)) * DH;
                int iw = ow * SW - pc.PW + int(r % uint(KW)) * DW;
                if (ih >= 0 && ih < pc.IH && iw >= 0 && iw < pc.IW)
                    v = uintBitsToFloat(LOAD(x, (batch * pc.cin + g * pc.cin_g + ic) * in_plane + uint(ih * pc.IW + iw)));
            }
            b_tile[kk][nn] = v;
        }
        barrier();
        for (uint kk = 0u; kk < BK; kk++) {
            float a[TM], bv[TN];
            for (uint i = 0u; i < TM; i++) a[i] = a_tile[kk][ty + 8u * i];
            for (uint j = 0u; j < TN; j++) bv[j] = b_tile[kk][tx + 16u * j];
            for (uint i = 0u; i < TM; i++)
                for (uint j = 0u; j < TN; j++) acc[i][j] += a[i] * bv[j];
        }
        barrier();
    }

    for (uint j = 0u; j < TN; j++) {
        uint p = n0 + tx + 16u * j;
        if (p >= pc.pixels) continue;
        uint batch = p / out_plane, q = p % out_plane;
        for (uint i = 0u; i < TM; i++) {
            uint oc = m0 + ty + 8u * i;
            if (oc >= pc.cout_g) continue;
            uint c = g * pc.cout_g + oc;
            uint yi = (batch * pc.cout + c) * out_plane + q;
            if (SPLIT_K > 1u) {
                partial[split * pc.pixels * pc.cout + yi] = floatBitsToUint(acc[i][j]);
            } else {
                float v = acc[i][j] + (pc.has_bias != 0u ? uintBitsToFloat(LOAD(b, c)) : 0.0);
                STORE(y, yi, floatBitsToUint(round_to_dtype(DT, fused_act(ACT, v, pc.lo, pc.hi))));
            }
        }
    }
}
