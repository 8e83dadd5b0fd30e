#version 450
// bench/probes/store_probe.c's two kernels: 64 texels of 16 bytes an invocation, `stride` texels apart
// (texel j of invocation i at (i / stride) * stride * 64 + j * stride + i % stride), through a
// storage-buffer uvec4 store (IMAGE 0) or an imageStore to an RGBA32UI storage texel buffer.
layout(local_size_x = 8) in;
#if IMAGE
layout(binding = 0, rgba32ui) uniform writeonly uimageBuffer Y;
#else
layout(std430, binding = 0) writeonly buffer Y { uvec4 y[]; };
#endif
layout(push_constant) uniform Push { uint stride; } pc;

void main()
{
    uint i = gl_GlobalInvocationID.x;
    uint base = (i / pc.stride) * pc.stride * 64u + i % pc.stride;
    for (uint j = 0u; j < 64u; j++) {
        uvec4 v = uvec4(i, j, i + j, i ^ j);
#if IMAGE
        imageStore(Y, int(base + j * pc.stride), v);
#else
        y[base + j * pc.stride] = v;
#endif
    }
}
