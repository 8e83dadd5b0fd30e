#version 450
// CumSum and CumProd (pc.prod) along one axis: the invocation of each line's first element walks the line. The axis
// comes from push constants when known at plan time, else from the axis input (binding 1),
// which ONNX allows to be a runtime tensor; the output shape does not depend on it.
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DT = 0u;

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) readonly buffer Axis { uint axis_in[]; };
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };
layout(push_constant) uniform Push {
    uint count, rank, exclusive, reverse;
    int axis; // -1000: read axis_in[0]
    uint prod;
    uint dims[8];
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    int a = pc.axis != -1000 ? pc.axis : int(axis_in[0]);
    if (a < 0) a += int(pc.rank);
    if (a < 0 || a >= max(int(pc.rank), 1)) return; // a bad runtime axis leaves the output unwritten
    uint inner = 1u, len = pc.rank == 0u ? 1u : pc.dims[a];
    for (uint d = uint(a) + 1u; d < pc.rank; d++) inner *= pc.dims[d];
    if ((i / inner) % len != 0u) return;
    // floats accumulate in fp32, integers in int32 (wrapping like the dtype)
    bool prod = pc.prod != 0u;
    float fsum = prod ? 1.0 : 0.0;
    int isum = prod ? 1 : 0;
    for (uint k = 0u; k < len; k++) {
        uint off = i + (pc.reverse != 0u ? len - 1u - k : k) * inner;
        uint v = x[off];
        uint before = dt_is_float(DT) ? floatBitsToUint(round_to_dtype(DT, fsum)) : uint(wrap_to_dtype(DT, isum));
        if (dt_is_float(DT)) fsum = prod ? fsum * uintBitsToFloat(v) : fsum + uintBitsToFloat(v);
        else isum = prod ? isum * int(v) : isum + int(v);
        uint after = dt_is_float(DT) ? floatBitsToUint(round_to_dtype(DT, fsum)) : uint(wrap_to_dtype(DT, isum));
        y[off] = pc.exclusive != 0u ? before : after;
    }
}
