/* Soak: one session of a model run RUNS times, as a robot's control loop runs its policy, with
 * its inputs cycling through SEEDS sets of values. Every output must equal, bit for bit, the
 * first output of the same inputs; after warm-up the process's resident memory may grow by at
 * most RSS_TOLERANCE bytes (allocator noise) and the context's device and staging bytes must
 * not change at all.
 *
 *   test_soak MODEL RUNS [OUT]
 *
 * Every input of MODEL must be float32 with a fixed shape. Input k (0-based) of seed s holds
 * x[i] = ((i * 37 + 11 * k + 5 * s) % 101 - 50) / 25. OUT: seed 0's first output 0 is written
 * there as raw float32, for tests/models/soak.py to compare with PyTorch. */
#include "vkinfer.h"
#include "runtime/runtime.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SEEDS 4
#define MAX_IO 8
#define RSS_TOLERANCE (512 * 1024)

static long rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: test_soak MODEL RUNS [OUT]\n");
        return 2;
    }
    long runs = atol(argv[2]);
    long warmup = runs / 10 < 200 ? (runs < 400 ? runs / 2 : 200) : runs / 10;
    vki_context *ctx = NULL;
    vki_model *m = NULL;
    vki_session *s = NULL;
    if (vki_context_create(NULL, &ctx) != VKI_OK || vki_model_load(ctx, argv[1], &m) != VKI_OK ||
        vki_session_create(m, &s) != VKI_OK) {
        printf("FAIL: %s\n", vki_last_error());
        return 1;
    }
    uint32_t n_in = vki_model_input_count(m), n_out = vki_model_output_count(m);
    if (n_in > MAX_IO || n_out > MAX_IO || !n_out) {
        printf("FAIL: %u inputs, %u outputs (at most %d)\n", n_in, n_out, MAX_IO);
        return 1;
    }
    vki_tensor_info in_info[MAX_IO];
    float *inputs[SEEDS][MAX_IO];
    size_t in_bytes[MAX_IO];
    for (uint32_t k = 0; k < n_in; k++) {
        vki_model_input_info(m, k, &in_info[k]);
        int64_t numel = 1;
        for (int d = 0; d < in_info[k].rank; d++) numel *= in_info[k].dims[d];
        if (in_info[k].dtype != VKI_DTYPE_FLOAT || in_info[k].rank < 0 || numel <= 0) {
            printf("FAIL: input '%s' is not float32 with a fixed shape\n", in_info[k].name);
            return 1;
        }
        in_bytes[k] = (size_t)numel * sizeof(float);
        for (int seed = 0; seed < SEEDS; seed++) {
            inputs[seed][k] = malloc(in_bytes[k]);
            for (int64_t i = 0; i < numel; i++)
                inputs[seed][k][i] = (float)((i * 37 + 11 * (int64_t)k + 5 * seed) % 101 - 50) / 25.0f;
        }
    }
    void *reference[SEEDS][MAX_IO] = {{0}};
    size_t ref_bytes[MAX_IO] = {0};
    long rss_warm = 0, rss_max = 0, rss_start = rss_bytes();
    uint64_t device_warm = 0, staging_warm = 0, device_max = 0, staging_max = 0;
    long mismatches = 0, errors = 0;
    double t0 = now_s(), t_warm = t0;
    for (long r = 0; r < runs && errors < 5; r++) {
        int seed = (int)(r % SEEDS);
        vki_status st = VKI_OK;
        for (uint32_t k = 0; k < n_in && st == VKI_OK; k++)
            st = vki_session_set_input(s, in_info[k].name, VKI_DTYPE_FLOAT, in_info[k].dims, in_info[k].rank, inputs[seed][k],
                                       in_bytes[k]);
        if (st == VKI_OK) st = vki_session_run(s);
        for (uint32_t o = 0; o < n_out && st == VKI_OK; o++) {
            const void *y;
            size_t bytes;
            st = vki_session_get_output(s, o, NULL, &y, &bytes);
            if (st != VKI_OK) break;
            if (!reference[seed][o]) { /* the first run of this seed */
                reference[seed][o] = malloc(bytes ? bytes : 1);
                memcpy(reference[seed][o], y, bytes);
                ref_bytes[o] = bytes;
            } else if (bytes != ref_bytes[o] || memcmp(y, reference[seed][o], bytes)) {
                if (!mismatches++) printf("FAIL run %ld: output %u differs from the first run of the same inputs\n", r, o);
            }
        }
        if (st != VKI_OK) {
            errors++;
            printf("FAIL run %ld: %s\n", r, vki_last_error());
        }
        uint64_t device = atomic_load(&ctx->vk.allocated_bytes), staging = atomic_load(&ctx->vk.staging_bytes);
        if (r + 1 == warmup) {
            rss_warm = rss_max = rss_bytes();
            device_warm = device_max = device;
            staging_warm = staging_max = staging;
            t_warm = now_s();
        } else if (r + 1 > warmup) {
            if (device > device_max) device_max = device;
            if (staging > staging_max) staging_max = staging;
            if ((r + 1) % 256 == 0 || r + 1 == runs) {
                long rss = rss_bytes();
                if (rss > rss_max) rss_max = rss;
            }
        }
    }
    double t_end = now_s();
    long rss_end = rss_bytes();
    vki_session_stats stats = {0};
    vki_session_stats_get(s, &stats);
    printf("%ld runs of %s in %.1f s (%.3f ms a run after warm-up), %u dispatches a run\n", runs, argv[1], t_end - t0,
           runs > warmup ? (t_end - t_warm) * 1e3 / (double)(runs - warmup) : 0.0, stats.dispatch_count);
    printf("RSS: %.1f MiB at start, %.1f MiB after %ld warm-up runs, %.1f MiB at most after, %.1f MiB at the end "
           "(growth after warm-up %+ld bytes, tolerance %d)\n",
           rss_start / 1048576.0, rss_warm / 1048576.0, warmup, rss_max / 1048576.0, rss_end / 1048576.0, rss_max - rss_warm,
           RSS_TOLERANCE);
    printf("device bytes: %llu after warm-up, %llu at most after; staging bytes %llu, %llu at most; session weights %llu, "
           "intermediates %llu\n",
           (unsigned long long)device_warm, (unsigned long long)device_max, (unsigned long long)staging_warm,
           (unsigned long long)staging_max, (unsigned long long)stats.weight_bytes,
           (unsigned long long)stats.intermediate_bytes);
    CHECK(!errors, "%ld runs failed", errors);
    CHECK(!mismatches, "%ld runs' outputs differ from the first run of the same inputs", mismatches);
    CHECK(rss_max - rss_warm <= RSS_TOLERANCE, "RSS grew by %ld bytes after warm-up (tolerance %d)", rss_max - rss_warm,
          RSS_TOLERANCE);
    CHECK(device_max == device_warm && staging_max == staging_warm && device_warm > 0,
          "device memory is flat after warm-up (%llu -> %llu at most, staging %llu -> %llu)", (unsigned long long)device_warm,
          (unsigned long long)device_max, (unsigned long long)staging_warm, (unsigned long long)staging_max);
    CHECK(stats.plans_cached == 1, "one plan, replayed (%u cached)", stats.plans_cached);
    if (argc > 3 && reference[0][0]) {
        FILE *f = fopen(argv[3], "wb");
        CHECK(f && fwrite(reference[0][0], 1, ref_bytes[0], f) == ref_bytes[0], "writing %s", argv[3]);
        if (f) fclose(f);
    }
    for (int seed = 0; seed < SEEDS; seed++) {
        for (uint32_t k = 0; k < n_in; k++) free(inputs[seed][k]);
        for (uint32_t o = 0; o < n_out; o++) free(reference[seed][o]);
    }
    vki_session_destroy(s);
    vki_model_destroy(m);
    vki_context_destroy(ctx);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
