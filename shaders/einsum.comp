#version 450
// Einsum of one or two operands: each output element sums, over every combination of the
// contracted labels, the product of the operands' elements. A label's stride in an operand is
// the sum of the strides of the dimensions it names there (so "ii->i" reads the diagonal), 0
// where the operand lacks it or broadcasts it. The label table comes from src/ops/einsum.c.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;
layout(constant_id = 2) const uint N_OPS = 2u;

layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; }; // operand A again when N_OPS == 1
// (size, stride in A, stride in B) per label: the output labels, then the contracted ones
layout(std430, binding = 2) readonly buffer Labels { int labels[]; };
layout(std430, binding = 3) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count;
    int n_out;
    int n_sum;
    uint sum_count; // product of the contracted labels' sizes
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    int base_a = 0, base_b = 0;
    uint rest = i;
    for (int l = pc.n_out - 1; l >= 0; l--) {
        uint size = uint(labels[3 * l]);
        int coord = int(rest % size);
        rest /= size;
        base_a += coord * labels[3 * l + 1];
        base_b += coord * labels[3 * l + 2];
    }
    float acc = 0.0;
    int iacc = 0;
    for (uint s = 0u; s < pc.sum_count; s++) {
        int ia = base_a, ib = base_b;
        uint r = s;
        for (int l = pc.n_out + pc.n_sum - 1; l >= pc.n_out; l--) {
            uint size = uint(labels[3 * l]);
            int coord = int(r % size);
            r /= size;
            ia += coord * labels[3 * l + 1];
            ib += coord * labels[3 * l + 2];
        }
        if (dt_is_float(DT)) acc += uintBitsToFloat(a[ia]) * (N_OPS == 2u ? uintBitsToFloat(b[ib]) : 1.0);
        else iacc += int(a[ia]) * (N_OPS == 2u ? int(b[ib]) : 1);
    }
    y[i] = dt_is_float(DT) ? floatBitsToUint(round_to_dtype(DT, acc)) : uint(wrap_to_dtype(DT, iacc));
}
