#version 450
// NonMaxSuppression, one workgroup per (batch b, class c): greedy selection as ONNX's
// reference. Each round takes the live candidate of highest score (the lowest box index on
// ties), keeps it, and retires every live candidate whose IoU with it exceeds the threshold;
// rounds stop at max_output_boxes_per_class boxes or when none is live. A candidate is live
// from the start when its score passes score_threshold (strictly, when given). The work
// buffer holds count[bc] (BC words), then the kept boxes sel[bc][SLOTS], then live[bc][N].
#include "common.glsl"

#define GROUP 128 // the Android Baseline 2022 limit
layout(local_size_x = GROUP) in;
layout(constant_id = 0) const bool CENTER = false; // boxes as (x_center, y_center, w, h)

layout(std430, binding = 0) readonly buffer Boxes { uint boxes[]; };
layout(std430, binding = 1) readonly buffer Scores { uint scores[]; };
layout(std430, binding = 2) readonly buffer Params { uint params[]; }; // max_output, iou, score (those given)
layout(std430, binding = 3) coherent buffer Work { int work[]; };
layout(push_constant) uniform Push {
    uint C, N, slots, max_output; // max_output: the plan-time value (at most slots) unless has_max
    uint has_max, has_iou, has_score, unused; // given as inputs computed on the GPU (read from params)
    float iou_threshold, score_threshold;     // otherwise: plan-time values (no score threshold: -inf)
} pc;

shared float best_score[GROUP];
shared int best_index[GROUP];

vec4 box(uint b, int i)
{
    uint at = (b * pc.N + uint(i)) * 4u;
    return vec4(uintBitsToFloat(boxes[at]), uintBitsToFloat(boxes[at + 1u]), uintBitsToFloat(boxes[at + 2u]),
                uintBitsToFloat(boxes[at + 3u]));
}

// (x_min, x_max, y_min, y_max) of a box, as the reference orders corners
vec4 extent(vec4 v)
{
    if (CENTER) return vec4(v.x - v.z / 2.0, v.x + v.z / 2.0, v.y - v.w / 2.0, v.y + v.w / 2.0);
    return vec4(min(v.y, v.w), max(v.y, v.w), min(v.x, v.z), max(v.x, v.z));
}

bool suppresses(vec4 a, vec4 b, float threshold)
{
    float ix0 = max(a.x, b.x), ix1 = min(a.y, b.y);
    if (ix1 <= ix0) return false;
    float iy0 = max(a.z, b.z), iy1 = min(a.w, b.w);
    if (iy1 <= iy0) return false;
    float inter = (ix1 - ix0) * (iy1 - iy0);
    if (inter <= 0.0) return false;
    float area_a = (a.y - a.x) * (a.w - a.z), area_b = (b.y - b.x) * (b.w - b.z);
    float uni = area_a + area_b - inter;
    if (area_a <= 0.0 || area_b <= 0.0 || uni <= 0.0) return false;
    return inter / uni > threshold;
}

void main()
{
    uint bc = gl_WorkGroupID.x, b = bc / pc.C, t = gl_LocalInvocationID.x;
    uint p = 0u;
    int max_output = int(pc.max_output);
    if (pc.has_max != 0u) max_output = int(params[p++]);
    float iou = pc.has_iou != 0u ? uintBitsToFloat(params[p++]) : pc.iou_threshold;
    float score_min = pc.has_score != 0u ? uintBitsToFloat(params[p]) : pc.score_threshold;
    bool use_score = pc.has_score != 0u || !isinf(pc.score_threshold);
    uint n_bc = gl_NumWorkGroups.x, live0 = n_bc + n_bc * pc.slots + bc * pc.N;
    uint sel0 = n_bc + bc * pc.slots, score0 = bc * pc.N;
    for (uint i = t; i < pc.N; i += GROUP)
        work[live0 + i] = !use_score || uintBitsToFloat(scores[score0 + i]) > score_min ? 1 : 0;
    memoryBarrierBuffer();
    barrier();
    int kept = 0, limit = min(max(max_output, 0), int(pc.slots));
    while (kept < limit) {
        float s = 0.0;
        int at = -1;
        for (uint i = t; i < pc.N; i += GROUP) {
            float v = uintBitsToFloat(scores[score0 + i]);
            if (work[live0 + i] != 0 && (at < 0 || v > s)) { // strided ascending: ties keep the lower index
                s = v;
                at = int(i);
            }
        }
        best_score[t] = s;
        best_index[t] = at;
        barrier();
        for (uint step = GROUP / 2u; step > 0u; step /= 2u) {
            if (t < step) {
                int o = best_index[t + step];
                if (o >= 0 && (best_index[t] < 0 || best_score[t + step] > best_score[t] ||
                               (best_score[t + step] == best_score[t] && o < best_index[t]))) {
                    best_score[t] = best_score[t + step];
                    best_index[t] = o;
                }
            }
            barrier();
        }
        int chosen = best_index[0];
        barrier(); // everyone has read it before the next round overwrites it
        if (chosen < 0) break;
        vec4 kept_box = extent(box(b, chosen));
        for (uint i = t; i < pc.N; i += GROUP)
            if (work[live0 + i] != 0 && (int(i) == chosen || suppresses(kept_box, extent(box(b, int(i))), iou)))
                work[live0 + i] = 0;
        if (t == 0u) work[sel0 + uint(kept)] = chosen;
        kept++;
        memoryBarrierBuffer();
        barrier();
    }
    if (t == 0u) work[bc] = kept;
}
