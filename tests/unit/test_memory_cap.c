/* VKINFER_MAX_MEMORY: under a cap of device memory, a model that fits is loaded, planned, run
 * and freed 1,000 times beside attempts that do not fit (its weights, a plan's intermediates,
 * a device tensor); each attempt fails with VKI_ERROR_OUT_OF_MEMORY and a message naming what
 * did not fit, the context stays usable, its counted bytes return to where they started and
 * the process's resident memory stays flat after warm-up (nothing leaks on the error paths). */
#include "vkinfer.h"
#include "runtime/runtime.h"
#include "check.h"
#include "pbwrite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAP (2u << 20)
#define ROUNDS 1000
#define WARMUP 50
#define WIDTH 256
#define BIG_WIDTH (1 << 20) /* 4 MiB of float weights: more than the cap */

/* x[-1, width] + w[width] -> Tanh -> y, all float32 */
static void write_model(const char *path, int64_t width)
{
    pbw graph = {0}, model = {0};
    int64_t dims[2] = {-1, width};
    float *w = malloc((size_t)width * sizeof *w);
    for (int64_t i = 0; i < width; i++) w[i] = (float)(i % 7) * 0.125f;
    pbw_node2(&graph, "Add", "x", "w", "s");
    pbw_node(&graph, "Tanh", "s", "y");
    pbw_initializer(&graph, "w", 1, (uint64_t)width, w, (size_t)width * sizeof *w);
    pbw_value_info(&graph, 11, "x", 1, dims, 2);
    pbw_value_info(&graph, 12, "y", 1, dims, 2);
    pbw_model(&model, &graph);
    pbw_save(&model, path);
    free(w);
}

static long rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

/* Loads `path`, runs it on [rows, width] once, frees everything. */
static vki_status load_and_run(vki_context *ctx, const char *path, int64_t rows, int64_t width, float *x)
{
    vki_model *m = NULL;
    vki_session *s = NULL;
    int64_t dims[2] = {rows, width};
    vki_status st = vki_model_load(ctx, path, &m);
    if (st == VKI_OK) st = vki_session_create(m, &s);
    if (st == VKI_OK) st = vki_session_set_input(s, "x", VKI_DTYPE_FLOAT, dims, 2, x, (size_t)(rows * width) * sizeof *x);
    if (st == VKI_OK) st = vki_session_run(s);
    const void *y;
    size_t bytes;
    if (st == VKI_OK) st = vki_session_get_output(s, 0, NULL, &y, &bytes);
    if (st == VKI_OK && (bytes != (size_t)(rows * width) * sizeof(float) || ((const float *)y)[1] != tanhf(x[1] + 0.125f)))
        st = vki_fail(VKI_ERROR_SHAPE, "wrong output");
    vki_session_destroy(s);
    vki_model_destroy(m);
    return st;
}

int main(void)
{
    char dir[] = "/tmp/vkinfer-memcap-XXXXXX", small[64], big[64], cap[32];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(small, sizeof small, "%s/small.onnx", dir);
    snprintf(big, sizeof big, "%s/big.onnx", dir);
    write_model(small, WIDTH);
    write_model(big, BIG_WIDTH);
    snprintf(cap, sizeof cap, "%u", CAP);
    setenv("VKINFER_MAX_MEMORY", cap, 1);
    vki_context *ctx = NULL;
    if (vki_context_create(NULL, &ctx) != VKI_OK) {
        printf("FAIL: no context: %s\n0 passed, 1 failed\n", vki_last_error());
        return 1;
    }
    vk_context *vk = &ctx->vk;
    CHECK(vk->max_memory == CAP, "the cap is %llu bytes, not %u", (unsigned long long)vk->max_memory, CAP);
    uint64_t device0 = atomic_load(&vk->allocated_bytes), staging0 = atomic_load(&vk->staging_bytes);
    int64_t many = CAP / (WIDTH * 4) * 2; /* rows whose intermediates exceed the cap */
    float *x = malloc((size_t)(many * WIDTH) * sizeof *x);
    for (int64_t i = 0; i < many * WIDTH; i++) x[i] = (float)(i % 13) * 0.25f - 1.5f;

    /* each kind of failure once, with its message */
    vki_status st = load_and_run(ctx, big, 1, BIG_WIDTH, x);
    printf("big weights: %s\n", vki_last_error());
    CHECK(st == VKI_ERROR_OUT_OF_MEMORY && strstr(vki_last_error(), "weights") && strstr(vki_last_error(), "big.onnx") &&
              strstr(vki_last_error(), "VKINFER_MAX_MEMORY"),
          "big weights: status %d, '%s'", st, vki_last_error());
    st = load_and_run(ctx, small, many, WIDTH, x);
    printf("big batch: %s\n", vki_last_error());
    CHECK(st == VKI_ERROR_OUT_OF_MEMORY && strstr(vki_last_error(), "intermediates"), "big batch: status %d, '%s'", st,
          vki_last_error());
    vki_tensor *t = NULL;
    int64_t tdims[1] = {CAP};
    st = vki_tensor_create(ctx, VKI_DTYPE_FLOAT, tdims, 1, &t);
    printf("big tensor: %s\n", vki_last_error());
    CHECK(st == VKI_ERROR_OUT_OF_MEMORY && !t && strstr(vki_last_error(), "device tensor"), "big tensor: status %d, '%s'", st,
          vki_last_error());
    CHECK(load_and_run(ctx, small, 4, WIDTH, x) == VKI_OK, "small model after the failures: %s", vki_last_error());

    long rss_warm = 0;
    int errors = 0, leaks = 0;
    for (int r = 0; r < ROUNDS; r++) {
        if (r == WARMUP) rss_warm = rss_bytes();
        if (load_and_run(ctx, small, 4, WIDTH, x) != VKI_OK && !errors++) printf("round %d: %s\n", r, vki_last_error());
        if (load_and_run(ctx, r % 2 ? big : small, r % 2 ? 1 : many, r % 2 ? BIG_WIDTH : WIDTH, x) != VKI_ERROR_OUT_OF_MEMORY &&
            !errors++)
            printf("round %d: the attempt that does not fit did not fail with VKI_ERROR_OUT_OF_MEMORY\n", r);
        if (vki_tensor_create(ctx, VKI_DTYPE_FLOAT, tdims, 1, &t) != VKI_ERROR_OUT_OF_MEMORY && !errors++)
            printf("round %d: the big tensor did not fail\n", r);
        leaks += atomic_load(&vk->allocated_bytes) != device0 || atomic_load(&vk->staging_bytes) != staging0;
    }
    long rss_end = rss_bytes();
    CHECK(errors == 0, "%d rounds went wrong", errors);
    CHECK(leaks == 0, "%d rounds left device or staging bytes counted (now %llu, %llu; started at %llu, %llu)", leaks,
          (unsigned long long)atomic_load(&vk->allocated_bytes), (unsigned long long)atomic_load(&vk->staging_bytes),
          (unsigned long long)device0, (unsigned long long)staging0);
    printf("RSS after %d rounds of warm-up %ld KiB, after %d rounds %ld KiB\n", WARMUP, rss_warm / 1024, ROUNDS, rss_end / 1024);
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer keeps freed memory in quarantine: RSS says nothing there (the counters do) */
    printf("built with AddressSanitizer: RSS not checked\n");
#else
    CHECK(rss_end - rss_warm <= 2l << 20, "RSS grew by %ld KiB", (rss_end - rss_warm) / 1024);
#endif
    CHECK(vk_check_validation(vk) == VKI_OK, "%s", vki_last_error());
    vki_context_destroy(ctx);
    free(x);
    unlink(small);
    unlink(big);
    rmdir(dir);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
