// Second pass of a split-K matrix multiply (shaders/matmul_tiled.glsl with SPLIT_K): adds
// the slices' raw sums, laid out [slice][batch][M][N], and finishes Y = alpha * sum + beta * C.
// The sums are fp32 words in every storage; C and Y go through storage.glsl's LOAD/STORE.

#include "fused_act.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OUT_DT = 0u;
layout(constant_id = 2) const bool IS_INT = false;
layout(constant_id = 3) const bool HAS_C = false;
layout(constant_id = 4) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)
layout(constant_id = 5) const bool HAS_R = false; // a residual of Y's shape and layout added before ACT (a fused Add)
// SCALE: a per-column factor after C (ConvNeXt's layer scale, src/ops/matmul_fuse.c mm_splitk_layer_scale):
// C holds 2 N values, Y = sum * cb[N + n] + cb[n] (alpha, beta and the factor folded in at plan time)
layout(constant_id = 6) const bool SCALE = false;
// Y_LAYOUT: Y (and R) at (z % y_zb) * y_a + (z / y_zb) * y_a2 + m * y_b + (n / y_nb) * y_c + n % y_nb
// (src/ops/matmul.h mm_store_layout: a Transpose after the product claimed)
layout(constant_id = 7) const bool Y_LAYOUT = false;

layout(std430, binding = 0) readonly buffer Partial { uint partial[]; };
layout(std430, binding = 1) readonly buffer C { ELEM cb[]; };
layout(std430, binding = 2) writeonly buffer Y { ELEM y[]; };
layout(std430, binding = 3) readonly buffer R { ELEM rb[]; }; // HAS_R (else C again)

layout(push_constant) uniform Push {
    uint count; // batch * M * N
    uint slices, M, N, scm, scn;
    float alpha, beta;
    uint y_base;
    float lo, hi; // ACT's bounds (a clamp's)
    uint y_a, y_zb, y_a2, y_b, y_nb, y_c;
} pc;
#include "store_layout.glsl"

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    if (IS_INT) {
        int s = 0;
        for (uint l = 0u; l < pc.slices; l++) s += int(partial[l * pc.count + i]);
        STORE(y, pc.y_base + i, uint(wrap_to_dtype(OUT_DT, s)));
        return;
    }
    float s = 0.0;
    for (uint l = 0u; l < pc.slices; l++) s += uintBitsToFloat(partial[l * pc.count + i]);
    uint n = i % pc.N, m = (i / pc.N) % pc.M, z = i / (pc.N * pc.M);
    float v;
    if (SCALE) {
        v = s * uintBitsToFloat(LOAD(cb, pc.N + n)) + uintBitsToFloat(LOAD(cb, n));
    } else {
        v = pc.alpha * s;
        if (HAS_C) v += pc.beta * uintBitsToFloat(LOAD(cb, m * pc.scm + n * pc.scn));
    }
    uint at = Y_LAYOUT ? y_at(z, m, n) : pc.y_base + i;
    if (HAS_R) v += uintBitsToFloat(LOAD(rb, at));
    STORE(y, at, floatBitsToUint(round_to_dtype(OUT_DT, fused_act(ACT, v, pc.lo, pc.hi))));
}
