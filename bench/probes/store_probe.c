/* How much a store costs in a compute shader on a CPU Vulkan driver (lavapipe), by the form it
 * takes: a storage-buffer uvec4 store (what every vkinfer kernel does today) against an
 * imageStore to a storage texel buffer of RGBA32UI texels (a uimageBuffer). llvmpipe issues the
 * first as one loop over the SIMD lanes per component, each iteration with its own branch;
 * whether the image store is cheaper is what this measures. Each invocation stores 64 texels,
 * 16 bytes each, `stride` texels apart (1: an invocation's texels adjacent; 64: adjacent
 * invocations' texels adjacent, as the kernels' lanes mostly store), into a 64 MiB buffer, 8
 * invocations a workgroup; medians of 9 timed submissions after 2.
 *   glslc --target-env=vulkan1.1 -O -DIMAGE=0 -fshader-stage=compute -o ssbo.spv bench/probes/store_probe.comp
 *   glslc --target-env=vulkan1.1 -O -DIMAGE=1 -fshader-stage=compute -o image.spv bench/probes/store_probe.comp
 *   cc -O2 bench/probes/store_probe.c -o store_probe -ldl && ./store_probe ssbo.spv image.spv */
#include "probe_vk.h"

enum { TEXELS = 4 << 20, PER_INVOCATION = 64, LOCAL = 8 };

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s SSBO.spv IMAGE.spv\n", argv[0]);
        return 2;
    }
    probe p;
    if (!probe_open(&p, "store_probe")) return 1;
    VkBuffer buf = probe_buffer(&p, (VkDeviceSize)TEXELS * 16,
                                VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT);
    if (!buf) return 1;
    VkBufferView view = probe_view(&p, buf, VK_FORMAT_R32G32B32A32_UINT);
    if (!view) return 1;
    printf("device: %s; %d texels of 16 bytes stored, %d an invocation, %d invocations a workgroup\n",
           p.props.deviceName, TEXELS, PER_INVOCATION, LOCAL);
    for (int k = 0; k < 2; k++) {
        VkDescriptorType dt = k ? VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        probe_pipe pp = probe_pipeline(&p, argv[1 + k], 1, &dt, &buf, &view, 0, 0, 4);
        if (!pp.pipe) return 1;
        for (uint32_t stride = 1; stride <= 64; stride *= 64) {
            double ms = probe_time(&p, &pp, &stride, 4, TEXELS / PER_INVOCATION / LOCAL);
            printf("%-6s stride %2u: %8.2f ms, %.2f ns a texel\n", k ? "image" : "ssbo", stride, ms, ms * 1e6 / TEXELS);
        }
    }
    return 0;
}
