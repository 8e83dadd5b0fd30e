/* `vkinfer devices`: the Vulkan devices with their driver, memory, limits and features. */
#include "cli.h"
#include "vkinfer.h"

#include <stdio.h>
#include <stdlib.h>

static void print_bytes(uint64_t b)
{
    if (b >= (1ull << 30)) printf("%.1f GiB", (double)b / (double)(1ull << 30));
    else printf("%.0f MiB", (double)b / (double)(1ull << 20));
}

int cmd_devices(void)
{
    uint32_t n = 0;
    if (vki_device_list(NULL, 0, &n) != VKI_OK) return cli_lib_error("listing devices");
    vki_device_info *infos = calloc(n ? n : 1, sizeof *infos);
    if (!infos) return cli_lib_error("out of memory");
    if (vki_device_list(infos, n, &n) != VKI_OK) {
        free(infos);
        return cli_lib_error("listing devices");
    }
    for (uint32_t i = 0; i < n; i++) {
        const vki_device_info *d = &infos[i];
        printf("%c %u: %s (%s)\n", d->is_default ? '*' : ' ', d->index, d->name, d->type);
        printf("    driver: %s %s, Vulkan %u.%u.%u, vendor 0x%04x device 0x%04x\n", d->driver_name, d->driver_info,
               d->api_version >> 22, (d->api_version >> 12) & 0x3ff, d->api_version & 0xfff, d->vendor_id, d->device_id);
        printf("    device-local memory: ");
        print_bytes(d->device_local_bytes);
        printf(", maxStorageBufferRange: ");
        print_bytes(d->max_storage_buffer_range);
        printf(" (%llu bytes)\n", (unsigned long long)d->max_storage_buffer_range);
        printf("    workgroup: %u invocations, %u bytes shared; subgroup size: ", d->max_workgroup_invocations,
               d->max_shared_memory_bytes);
        if (d->subgroup_size) printf("%u\n", d->subgroup_size);
        else printf("unknown\n");
        printf("    fp16 arithmetic: %s, 16-bit storage: %s, 8-bit storage: %s, cooperative matrix: %s, float64: %s\n",
               d->fp16_arithmetic ? "yes" : "no", d->storage_16bit ? "yes" : "no", d->storage_8bit ? "yes" : "no",
               d->cooperative_matrix ? "yes" : "no", d->shader_float64 ? "yes" : "no");
    }
    if (!n) printf("no Vulkan devices\n");
    free(infos);
    return 0;
}
