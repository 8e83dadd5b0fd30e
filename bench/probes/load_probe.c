/* How much a load costs in a compute shader on a CPU Vulkan driver (lavapipe), by the form it
 * takes (bench/probes/load_probe.comp): a storage buffer (vec4), a uniform texel buffer of RGBA32F
 * texels (texelFetch: what vkinfer's CPU kernels read), shared memory and, where their SPIR-V
 * files are given, a storage texel buffer (imageLoad) and a uniform buffer; each with every lane
 * of a workgroup at the same texel (an address uniform across it: the operand the lanes of a
 * matrix product share), adjacent lanes at adjacent texels, or lanes 64 texels apart. Mesa
 * 22.3's llvmpipe and Mesa 25's make different code of each (docs/history/benchmarks-notebook.md,
 * session 23):
 * this measures which form is cheap on the driver at hand, before a kernel is written for it.
 * 16 Ki invocations of 256 loads, 8 a workgroup, from a 1 MiB source (cache-resident); medians
 * of 9 timed submissions after 2, in ns a load of one lane.
 *   for f in 0 1 2 3 4; do glslc --target-env=vulkan1.1 -O -DFORM=$f -fshader-stage=compute \
 *       -o lp$f.spv bench/probes/load_probe.comp; done
 *   cc -O2 bench/probes/load_probe.c -o load_probe -ldl && ./load_probe lp0.spv lp1.spv lp2.spv lp3.spv lp4.spv
 * (VK_DRIVER_FILES picks the driver, e.g. another Mesa's lvp_icd.json.) */
#include "probe_vk.h"

enum { SOURCE = 64 << 10, INVOCATIONS = 16 << 10, LOADS = 256, LOCAL = 8 };

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s SSBO.spv TEXEL.spv SHARED.spv [IMAGE.spv [UBO.spv]]\n", argv[0]);
        return 2;
    }
    probe p;
    if (!probe_open(&p, "load_probe")) return 1;
    VkBuffer src = probe_buffer(&p, (VkDeviceSize)SOURCE * 16,
                                VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
                                    VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT);
    VkBuffer ubo = probe_buffer(&p, 64 << 10, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT); /* FORM 4: 4 Ki texels */
    VkBuffer out = probe_buffer(&p, (VkDeviceSize)INVOCATIONS * 16, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    if (!src || !ubo || !out) return 1;
    VkBufferView view = probe_view(&p, src, VK_FORMAT_R32G32B32A32_SFLOAT);
    if (!view) return 1;
    printf("device: %s (driver version %u.%u.%u); %d invocations of %d loads of 16 bytes, %d a workgroup\n",
           p.props.deviceName, VK_VERSION_MAJOR(p.props.driverVersion), VK_VERSION_MINOR(p.props.driverVersion),
           VK_VERSION_PATCH(p.props.driverVersion), INVOCATIONS, LOADS, LOCAL);
    static const char *forms[] = {"storage buffer", "texel buffer", "shared memory", "storage image", "uniform buffer"};
    static const char *modes[] = {"same texel in every lane", "adjacent lanes, adjacent texels", "lanes 64 texels apart"};
    for (int f = 0; f < argc - 1 && f < 5; f++) {
        VkDescriptorType types[2] = {f == 1   ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                     : f == 3 ? VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER
                                     : f == 4 ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                              : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                     VK_DESCRIPTOR_TYPE_STORAGE_BUFFER};
        VkBuffer bufs[2] = {f == 4 ? ubo : src, out};
        VkBufferView views[2] = {view, NULL};
        for (uint32_t mode = 0; mode < 3; mode++) {
            probe_pipe pp = probe_pipeline(&p, argv[1 + f], 2, types, bufs, views, 1, mode, 0);
            if (!pp.pipe) return 1;
            double ms = probe_time(&p, &pp, NULL, 0, INVOCATIONS / LOCAL);
            printf("%-14s  %-32s %8.2f ms, %6.2f ns a load\n", forms[f], modes[mode], ms,
                   ms * 1e6 / ((double)INVOCATIONS * LOADS));
        }
    }
    return 0;
}
