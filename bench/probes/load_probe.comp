#version 450
// bench/probes/load_probe.c's kernels: 256 loads of 16 bytes an invocation, 8 invocations a
// workgroup, from a 1 MiB source (so the loads hit the caches: what is measured is the code a
// CPU Vulkan driver makes of each load, not memory), summed and stored once. FORM 0 reads a
// storage buffer (vec4), 1 a uniform texel buffer of RGBA32F texels (texelFetch), 2 shared
// memory filled from the storage buffer first, 3 a storage texel buffer (imageLoad from a
// readonly rgba32f imageBuffer), 4 a uniform buffer (a std140 vec4 array, 64 KiB). MODE picks where the lanes read:
// 0: every lane the same texel (an address uniform across the workgroup: the operand all lanes
// of a matrix-product kernel share), 1: adjacent lanes adjacent texels, 2: lanes 64 texels apart
// (a specialization constant, so that the uniform form stays uniform after specialization).
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 8) in;
#if FORM == 1
layout(binding = 0) uniform samplerBuffer S;
#elif FORM == 3
layout(binding = 0, rgba32f) uniform readonly imageBuffer S;
#elif FORM == 4
layout(std140, binding = 0) uniform S { vec4 u[4096]; };
#else
layout(std430, binding = 0) readonly buffer S { vec4 s[]; };
#endif
layout(std430, binding = 1) writeonly buffer Y { vec4 y[]; };
layout(constant_id = 0) const uint MODE = 0u; // a specialization constant: where the lanes read

const uint LOADS = 256u, MASK = 65535u; // 64 Ki texels of source
#if FORM == 2
const uint SHARED = 512u;
shared vec4 sh[SHARED];
#endif

vec4 load(uint at)
{
#if FORM == 0
    return s[at & MASK];
#elif FORM == 1
    return texelFetch(S, int(at & MASK));
#elif FORM == 3
    return imageLoad(S, int(at & MASK));
#elif FORM == 4
    return u[at & 4095u];
#else
    return sh[at & (SHARED - 1u)];
#endif
}

void main()
{
    uint lane = gl_LocalInvocationID.x, wg = gl_WorkGroupID.x;
#if FORM == 2
    for (uint t = lane; t < SHARED; t += 8u) sh[t] = s[(wg * SHARED + t) & MASK];
    barrier();
#endif
    vec4 sum = vec4(0.0);
    for (uint j = 0u; j < LOADS; j++) {
        uint at = MODE == 0u ? wg * LOADS + j
                : MODE == 1u ? (wg * LOADS + j) * 8u + lane
                             : wg * LOADS * 8u + lane * 64u + j;
        sum += load(at);
    }
    y[gl_GlobalInvocationID.x] = sum;
}
