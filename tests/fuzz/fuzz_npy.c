/* libFuzzer target: bytes as a .npy file, through the CLI's reader (tools/npy.c). */
#include "npy.h"

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/vkinfer-fuzz-npy-%d.npy", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    npy_array a;
    char err[256];
    if (npy_read(path, &a, err, sizeof err) == 0) npy_free(&a);
    return 0;
}
