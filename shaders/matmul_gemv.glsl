// Matrix multiply for few rows (M <= 16: batch-1 Linear layers, decoding steps, a policy's
// few tokens; and products of one column, run transposed), where a
// tile would sit mostly idle: Y = alpha * A B + beta * C. A workgroup owns COLS columns of
// Y; its 128 invocations split K among KSPLIT lanes per column, each lane keeping one sum
// per row, and the lanes' sums are added through shared memory. Neighbouring invocations
// read neighbouring elements of B, along k or along n as B is laid out. Tensors are read
// and written through storage.glsl's LOAD/STORE.

#include "fused_act.glsl"

layout(local_size_x_id = 0) in; // 128
layout(constant_id = 1) const uint OUT_DT = 0u;
layout(constant_id = 2) const bool IS_INT = false;
layout(constant_id = 3) const uint ROWS = 1u;          // M, 1..32 (src/ops/matmul.c's MM_GEMV_MAX_ROWS)
layout(constant_id = 4) const uint COLS = 4u;          // columns per workgroup, divides 128
layout(constant_id = 5) const bool B_K_CONTIG = true;  // B(k+1,n) follows B(k,n)
layout(constant_id = 6) const bool HAS_C = false;
layout(constant_id = 7) const uint ACT = 0u; // a fused activation: fused_act.glsl's code (op_act_code)

layout(std430, binding = 0) readonly buffer A { ELEM a[]; };
layout(std430, binding = 1) readonly buffer B { ELEM b[]; };
layout(std430, binding = 2) readonly buffer C { ELEM cb[]; };
layout(std430, binding = 3) writeonly buffer Y { ELEM y[]; };

// keep in step with mm_push in src/ops/matmul.c
layout(push_constant) uniform Push {
    uint M, N, K, sam, sak, sbk, sbn, scm, scn;
    float alpha, beta;
    uint bd1, bd2, sa0, sa1, sa2, sb0, sb1, sb2;
    uint a_base, b_base, y_base, batch_base;
    uint k_slice, z_count; // unused here
    float lo, hi;          // ACT's bounds (a clamp's)
} pc;

#define LOCAL 128u
const uint KSPLIT = LOCAL / COLS;

shared uint partial[ROWS * LOCAL]; // partial[row * LOCAL + invocation]

uint lane_slot(uint col, uint lane) { return B_K_CONTIG ? col * KSPLIT + lane : lane * COLS + col; }

void main()
{
    uint t = gl_LocalInvocationID.x;
    uint col = B_K_CONTIG ? t / KSPLIT : t % COLS, lane = B_K_CONTIG ? t % KSPLIT : t / COLS;
    uint n = gl_WorkGroupID.x * COLS + col;
    uint z = gl_WorkGroupID.z + pc.batch_base;
    uint i2 = z % pc.bd2, i1 = (z / pc.bd2) % pc.bd1, i0 = z / (pc.bd2 * pc.bd1);
    uint a_off = pc.a_base + i0 * pc.sa0 + i1 * pc.sa1 + i2 * pc.sa2;
    uint b_off = pc.b_base + i0 * pc.sb0 + i1 * pc.sb1 + i2 * pc.sb2;

    float accf[ROWS];
    int acci[ROWS];
    for (uint r = 0u; r < ROWS; r++) {
        accf[r] = 0.0;
        acci[r] = 0;
    }
    if (n < pc.N) {
        for (uint k = lane; k < pc.K; k += KSPLIT) {
            uint bv = LOAD(b, b_off + k * pc.sbk + n * pc.sbn);
            for (uint r = 0u; r < ROWS; r++) {
                uint av = LOAD(a, a_off + r * pc.sam + k * pc.sak);
                if (IS_INT) acci[r] += int(av) * int(bv);
                else accf[r] = fma(uintBitsToFloat(av), uintBitsToFloat(bv), accf[r]);
            }
        }
    }
    for (uint r = 0u; r < ROWS; r++) partial[r * LOCAL + t] = IS_INT ? uint(acci[r]) : floatBitsToUint(accf[r]);
    barrier();

    uint y_off = pc.y_base + z * pc.M * pc.N;
    for (uint o = t; o < ROWS * COLS; o += LOCAL) {
        uint r = o / COLS, c = o % COLS;
        uint gn = gl_WorkGroupID.x * COLS + c;
        if (gn >= pc.N || r >= pc.M) continue;
        if (IS_INT) {
            int s = 0;
            for (uint l = 0u; l < KSPLIT; l++) s += int(partial[r * LOCAL + lane_slot(c, l)]);
            STORE(y, y_off + r * pc.N + gn, uint(wrap_to_dtype(OUT_DT, s)));
        } else {
            float s = 0.0;
            for (uint l = 0u; l < KSPLIT; l++) s += uintBitsToFloat(partial[r * LOCAL + lane_slot(c, l)]);
            float v = pc.alpha * s;
            if (HAS_C) v += pc.beta * uintBitsToFloat(LOAD(cb, r * pc.scm + gn * pc.scn));
            STORE(y, y_off + r * pc.N + gn, floatBitsToUint(round_to_dtype(OUT_DT, fused_act(ACT, v, pc.lo, pc.hi))));
        }
    }
}
