// ReverseSequence: out[.., b, t, ..] = x[.., b, len[b] - 1 - t, ..] for t < len[b], else
// x[.., b, t, ..]. Lengths are clamped into [0, steps], so nothing is read out of bounds.
// Elements move unchanged; the lengths are int32 words.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Data { ELEM x[]; };
layout(std430, binding = 1) readonly buffer Lens { int lens[]; };
layout(std430, binding = 2) writeonly buffer Out { ELEM y[]; };
layout(push_constant) uniform Push { uint count; uint batch_stride; uint batch; uint time_stride; uint steps; } pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint b = i / pc.batch_stride % pc.batch;
    uint t = i / pc.time_stride % pc.steps;
    uint len = uint(clamp(lens[b], 0, int(pc.steps)));
    uint src = t < len ? i - t * pc.time_stride + (len - 1u - t) * pc.time_stride : i;
    STORE(y, i, LOAD(x, src));
}
