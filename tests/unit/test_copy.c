/* A run's large input and output copies, split over threads (src/util/copy.c): y = x + x over
 * tensors above the split size (4 MiB), in float32, int64 (narrowed to int32 on the way, with
 * the range check naming the right element whichever part finds it) and float16; every
 * element compared. */
#include "vkinfer.h"
#include "check.h"
#include "pbwrite.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N = 3000001 }; /* odd: the parts differ in size */

static void write_double_model(const char *path, int dtype)
{
    pbw graph = {0}, model = {0};
    int64_t dims[1] = {N};
    pbw_node2(&graph, "Add", "x", "x", "y");
    pbw_value_info(&graph, 11, "x", dtype, dims, 1);
    pbw_value_info(&graph, 12, "y", dtype, dims, 1);
    pbw_model(&model, &graph);
    pbw_save(&model, path);
}

static vki_status run(vki_context *ctx, const char *path, vki_dtype dtype, const void *x, size_t bytes, void *y)
{
    vki_model *m = NULL;
    vki_session *s = NULL;
    int64_t dims[1] = {N};
    vki_status st = vki_model_load(ctx, path, &m);
    if (st == VKI_OK) st = vki_session_create(m, &s);
    if (st == VKI_OK) st = vki_session_set_input(s, "x", dtype, dims, 1, x, bytes);
    if (st == VKI_OK) st = vki_session_run(s);
    const void *out = NULL;
    size_t out_bytes = 0;
    if (st == VKI_OK) st = vki_session_get_output(s, 0, NULL, &out, &out_bytes);
    if (st == VKI_OK && out_bytes == bytes) memcpy(y, out, bytes);
    vki_session_destroy(s);
    vki_model_destroy(m);
    return st;
}

int main(void)
{
    vki_context *ctx = NULL;
    if (vki_context_create(NULL, &ctx) != VKI_OK) {
        printf("no Vulkan device: %s\n", vki_last_error());
        return 1;
    }
    char path[] = "/tmp/vkinfer-copy-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);

    float *xf = malloc(N * sizeof *xf), *yf = calloc(N, sizeof *yf);
    int64_t *xi = malloc(N * sizeof *xi), *yi = calloc(N, sizeof *yi);
    uint16_t *xh = malloc(N * sizeof *xh), *yh = calloc(N, sizeof *yh);
    for (int64_t i = 0; i < N; i++) {
        xf[i] = (float)(i % 1000) * 0.25f - 100.0f;
        xi[i] = i - N / 2;
        xh[i] = (uint16_t)(0x3C00 + (i % 512)); /* 1.0 .. 1.5: doubling only moves the exponent */
    }

    write_double_model(path, 1); /* FLOAT */
    CHECK(run(ctx, path, VKI_DTYPE_FLOAT, xf, N * sizeof *xf, yf) == VKI_OK, "float32: %s", vki_last_error());
    int64_t bad = -1;
    for (int64_t i = 0; i < N && bad < 0; i++)
        if (yf[i] != 2 * xf[i]) bad = i;
    CHECK(bad < 0, "float32: element %" PRId64 " is %g, expected %g", bad, bad < 0 ? 0.0 : yf[bad], bad < 0 ? 0.0 : 2 * xf[bad]);

    write_double_model(path, 7); /* INT64 */
    CHECK(run(ctx, path, VKI_DTYPE_INT64, xi, N * sizeof *xi, yi) == VKI_OK, "int64: %s", vki_last_error());
    bad = -1;
    for (int64_t i = 0; i < N && bad < 0; i++)
        if (yi[i] != 2 * xi[i]) bad = i;
    CHECK(bad < 0, "int64: element %" PRId64 " wrong", bad);
    /* out of int32's range in the last part: the error names that element */
    xi[N - 7] = (int64_t)1 << 40;
    vki_status st = run(ctx, path, VKI_DTYPE_INT64, xi, N * sizeof *xi, yi);
    char want[64];
    snprintf(want, sizeof want, "index %d", N - 7);
    CHECK(st == VKI_ERROR_UNSUPPORTED && strstr(vki_last_error(), want), "int64 out of range: %d %s", st, vki_last_error());

    write_double_model(path, 10); /* FLOAT16 */
    CHECK(run(ctx, path, VKI_DTYPE_FLOAT16, xh, N * sizeof *xh, yh) == VKI_OK, "float16: %s", vki_last_error());
    bad = -1;
    for (int64_t i = 0; i < N && bad < 0; i++)
        if (yh[i] != xh[i] + 0x0400) bad = i;
    CHECK(bad < 0, "float16: element %" PRId64 " is 0x%04x", bad, bad < 0 ? 0 : yh[bad]);

    unlink(path);
    free(xf), free(yf), free(xi), free(yi), free(xh), free(yh);
    vki_context_destroy(ctx);
    printf("%d passed, %d failed\n", passes, failures);
    return failures != 0;
}
