// Windowed pooling (MaxPool, AveragePool, LpPool) over up to 3 spatial dims, one invocation
// per output element. 1-D and 2-D inputs are padded in front with size-1 dims by the host.
// The 16-bit variants take float tensors only (integer MaxPool reads words).

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0u;            // keep in step with src/ops/pool.c
layout(constant_id = 2) const uint DT = 0u;
layout(constant_id = 3) const uint COUNT_INCLUDE_PAD = 0u;
layout(constant_id = 4) const uint LP_P = 2u;
layout(constant_id = 5) const uint WITH_INDICES = 0u;
layout(constant_id = 6) const uint COLUMN_MAJOR = 0u;  // storage_order of the indices

#define OP_MAX 0u
#define OP_AVG 1u
#define OP_LP 2u

layout(std430, binding = 0) readonly buffer In { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Out { ELEM y[]; };
layout(std430, binding = 2) writeonly buffer Indices { uint indices[]; };
layout(push_constant) uniform Push {
    uint count;       // output elements
    uint in_spatial;  // elements of one (n, c) input plane
    uint out_spatial;
    uint index_base;  // flat index of this dispatch's first input element (windowed runs)
    uint in_size[3];
    uint out_size[3];
    uint kernel[3];
    uint stride[3];
    uint dilation[3];
    int pad_begin[3];
    int pad_limit[3];  // input size + end padding: windows count positions below it
} pc;

void main()
{
    uint i = linear_id();
    if (i >= pc.count) return;
    uint row = i / pc.out_spatial;
    uint r = i - row * pc.out_spatial;
    uint o2 = r % pc.out_size[2];
    r /= pc.out_size[2];
    uint o1 = r % pc.out_size[1];
    uint o0 = r / pc.out_size[1];
    ivec3 start = ivec3(int(o0 * pc.stride[0]), int(o1 * pc.stride[1]), int(o2 * pc.stride[2])) -
                  ivec3(pc.pad_begin[0], pc.pad_begin[1], pc.pad_begin[2]);
    ivec3 size = ivec3(pc.in_size[0], pc.in_size[1], pc.in_size[2]);
    ivec3 dil = ivec3(pc.dilation[0], pc.dilation[1], pc.dilation[2]);
    uint base = row * pc.in_spatial;

    bool is_float = dt_is_float(DT);
    float best = uintBitsToFloat(0xff800000u); // -inf
    int best_int = -2147483647 - 1;
    uint best_at = 0u;
    bool found = false;
    float sum = 0.0;
    uint valid = 0u;
    for (uint k0 = 0u; k0 < pc.kernel[0]; k0++) {
        int p0 = start.x + int(k0) * dil.x;
        if (p0 < 0 || p0 >= size.x) continue;
        for (uint k1 = 0u; k1 < pc.kernel[1]; k1++) {
            int p1 = start.y + int(k1) * dil.y;
            if (p1 < 0 || p1 >= size.y) continue;
            for (uint k2 = 0u; k2 < pc.kernel[2]; k2++) {
                int p2 = start.z + int(k2) * dil.z;
                if (p2 < 0 || p2 >= size.z) continue;
                uint at = (uint(p0) * uint(size.y) + uint(p1)) * uint(size.z) + uint(p2);
                uint bits = LOAD(x, base + at);
                if (OP == OP_MAX) {
                    bool better;
                    if (is_float) {
                        float v = uintBitsToFloat(bits);
                        better = !found || v > best || (isnan(v) && !isnan(best));
                        if (better) best = v;
                    } else {
                        better = !found || int(bits) > best_int;
                        if (better) best_int = int(bits);
                    }
                    if (better) {
                        found = true;
                        best_at = COLUMN_MAJOR != 0u
                            ? uint(p0) + uint(p1) * uint(size.x) + uint(p2) * uint(size.x * size.y)
                            : at;
                    }
                } else {
                    float v = as_float(DT, bits);
                    if (OP == OP_AVG) sum += v;
                    else if (LP_P == 1u) sum += abs(v);
                    else if (LP_P == 2u) sum += v * v;
                    else sum += pow(abs(v), float(LP_P));
                    valid++;
                }
            }
        }
    }
    if (OP == OP_MAX) {
        STORE(y, i, is_float ? floatBitsToUint(best) : uint(best_int));
        if (WITH_INDICES != 0u) indices[i] = pc.index_base + base + best_at;
        return;
    }
    float result;
    if (OP == OP_AVG) {
        float divisor = float(valid);
        if (COUNT_INCLUDE_PAD != 0u) {
            // window positions inside the padded input (ceil_mode windows may reach past it)
            ivec3 lim = ivec3(pc.pad_limit[0], pc.pad_limit[1], pc.pad_limit[2]);
            ivec3 k = ivec3(pc.kernel[0], pc.kernel[1], pc.kernel[2]);
            ivec3 n = clamp((lim - start + dil - 1) / dil, ivec3(0), k);
            divisor = float(n.x * n.y * n.z);
        }
        result = sum / divisor;
    } else {
        result = LP_P == 1u ? sum : LP_P == 2u ? sqrt(sum) : pow(sum, 1.0 / float(LP_P));
    }
    STORE(y, i, from_float(DT, result));
}
