// Copies the per-row (mean, 1/stddev) pairs of norm_rows into LayerNormalization's
// optional Mean and InvStdDev outputs.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;

layout(std430, binding = 0) readonly buffer Stats { vec2 stats[]; };
layout(std430, binding = 1) writeonly buffer Mean { ELEM mean[]; };
layout(std430, binding = 2) writeonly buffer InvStd { ELEM inv_std[]; };
layout(push_constant) uniform Push { uint rows; } pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.rows) return;
    STORE(mean, i, floatBitsToUint(round_to_dtype(DT, stats[i].x)));
    STORE(inv_std, i, floatBitsToUint(round_to_dtype(DT, stats[i].y)));
}
