#version 450
// Pad in constant, reflect, edge and wrap modes: each output element finds its input
// coordinate (out - pad_begin) and maps it back inside the input by the mode, or takes the
// constant. Negative pads crop. 32-bit words, so one shader serves every dtype. The constant
// comes from the push constants, or from binding 1 when it is only known at run time.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int RANK = 1;
layout(constant_id = 2) const uint MODE = 0u; // keep in step with src/ops/pad.c

#define MODE_CONSTANT 0u
#define MODE_REFLECT 1u
#define MODE_EDGE 2u
#define MODE_WRAP 3u

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) readonly buffer Value { uint value_buffer[]; };
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count;
    uint value; // the constant, in the output dtype's 32-bit form
    uint value_from_buffer;
    uint unused;
    int out_dims[8];
    int in_dims[8];
    int pads_begin[8];
} pc;

int map_inside(int c, int n)
{
    if (MODE == MODE_EDGE) return clamp(c, 0, n - 1);
    if (MODE == MODE_WRAP) return mod_floor(c, n);
    if (n == 1) return 0; // reflect
    int period = 2 * (n - 1);
    c = mod_floor(c, period);
    return c < n ? c : period - c;
}

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint rest = i;
    int src = 0, stride = 1;
    bool outside = false;
    for (int k = RANK - 1; k >= 0; k--) {
        int o = int(rest % uint(pc.out_dims[k]));
        rest /= uint(pc.out_dims[k]);
        int c = o - pc.pads_begin[k];
        int n = pc.in_dims[k];
        if (c < 0 || c >= n) {
            if (MODE == MODE_CONSTANT || n == 0) outside = true;
            else c = map_inside(c, n);
        }
        src += c * stride;
        stride *= n;
    }
    if (outside) y[i] = pc.value_from_buffer != 0u ? value_buffer[0] : pc.value;
    else y[i] = x[src];
}
