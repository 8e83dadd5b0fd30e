/* What bench's standalone Vulkan probes (pipeline_stats.c, store_probe.c, load_probe.c)
 * share: reading a SPIR-V file. Included by each probe (store_probe.c and load_probe.c through
 * probe_vk.h), which is still built with one `cc` command. */
#ifndef VKI_BENCH_PROBE_FILE_H
#define VKI_BENCH_PROBE_FILE_H
#include <stdio.h>
#include <stdlib.h>

/* The file's bytes (malloc'd; NULL if it cannot be read or is not whole 32-bit words) and
 * their count in *size. */
static void *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = n > 0 && n % 4 == 0 ? malloc((size_t)n) : NULL;
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) free(data), data = NULL;
    fclose(f);
    *size = (size_t)n;
    return data;
}
#endif
