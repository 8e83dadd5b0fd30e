#version 450
// The split-K reduce pass (matmul_splitk_reduce.glsl) and the LayerNormalization that reads its
// Y, in one dispatch (src/ops/matmul_fuse.c, mm_splitk_layer_norm): a pre-norm transformer's
// residual stream h = x + Linear(...) is read by the next block's LayerNormalization and by the next
// residual Add, so h is stored as the reduce pass stores it and the LayerNormalization of each
// row follows from the values in registers, without a dispatch and a barrier of its own (ViT's
// two per block). One workgroup per row of N sums, up to 256 invocations, VPT elements each;
// float32 words only; rows along Y's last axis. Y is the reduce pass's (the slices added in
// slice order, then alpha, beta C and R); the row's sums go through subgroupAdd and the
// subgroups' partial sums in order (deterministic). A row's slices are read 4 at a time, so
// that few rows (BERT at batch 1: 128 rows of 10 slices) are not latency-bound.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x_id = 0) in; // a power of two, at most 256
layout(constant_id = 1) const bool HAS_C = false;
layout(constant_id = 2) const bool HAS_R = false;
layout(constant_id = 3) const uint VPT = 8u; // elements a row per invocation: N <= VPT * group
// false where the LayerNormalization alone reads Y (BERT's post-norm residual sums): not stored
layout(constant_id = 4) const bool STORE_Y = true;

layout(std430, binding = 0) readonly buffer Partial { float partial[]; }; // [slice][rows][N]
layout(std430, binding = 1) readonly buffer C { float cb[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(std430, binding = 3) readonly buffer R { float rb[]; };            // HAS_R (else C again)
layout(std430, binding = 4) readonly buffer ScaleShift { vec2 scale_shift[]; }; // the LayerNormalization's (Scale, B) per element
layout(std430, binding = 5) writeonly buffer Out { float o[]; };

// keep in step with mm_splitk_ln_push in src/ops/matmul_fuse.c
layout(push_constant) uniform Push {
    uint rows, N, slices, M, scm, scn;
    float alpha, beta, eps;
} pc;

shared float partial_sum[64]; // one per subgroup

// the sum of v over the workgroup, the same in every invocation
float group_sum(float v)
{
    float s = subgroupAdd(v);
    if (subgroupElect()) partial_sum[gl_SubgroupID] = s;
    memoryBarrierShared();
    barrier();
    float total = 0.0;
    for (uint g = 0u; g < gl_NumSubgroups; g++) total += partial_sum[g];
    barrier(); // everyone has read partial_sum before it is reused
    return total;
}

void main()
{
    uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (row >= pc.rows) return; // whole workgroups leave together
    uint t = gl_LocalInvocationID.x, group = gl_WorkGroupSize.x;
    uint count = pc.rows * pc.N, m = row % pc.M;
    float v[VPT];
    float acc = 0.0;
    [[unroll]] for (uint e = 0u; e < VPT; e++) {
        uint j = t + e * group;
        v[e] = 0.0;
        if (j >= pc.N) continue;
        uint i = row * pc.N + j;
        float s = 0.0;
        uint l = 0u;
        for (; l + 4u <= pc.slices; l += 4u) { // four loads in flight, added in slice order
            float p0 = partial[l * count + i], p1 = partial[(l + 1u) * count + i];
            float p2 = partial[(l + 2u) * count + i], p3 = partial[(l + 3u) * count + i];
            s = (((s + p0) + p1) + p2) + p3;
        }
        for (; l < pc.slices; l++) s += partial[l * count + i];
        float r = pc.alpha * s;
        if (HAS_C) r += pc.beta * cb[m * pc.scm + j * pc.scn];
        if (HAS_R) r += rb[i];
        if (STORE_Y) y[i] = r;
        v[e] = r;
        acc += r;
    }
    float mean = group_sum(acc) / float(pc.N);
    acc = 0.0;
    [[unroll]] for (uint e = 0u; e < VPT; e++) {
        float d = v[e] - mean;
        if (t + e * group < pc.N) acc += d * d;
    }
    float inv_std = 1.0 / sqrt(group_sum(acc) / float(pc.N) + pc.eps);
    [[unroll]] for (uint e = 0u; e < VPT; e++) {
        uint j = t + e * group;
        if (j >= pc.N) continue;
        vec2 ss = scale_shift[j];
        o[row * pc.N + j] = (v[e] - mean) * inv_std * ss.x + ss.y;
    }
}
