/* A graph of STEPS dependent element-wise steps (default 100,000): y0 = x, then alternately
 * y = y + x and y = y - c. Every value is an integer below 2^24, so float32 computes it exactly and
 * the result must equal the CPU's bit for bit; a step skipped, repeated or reordered changes it.
 * It must plan, run and match with profiling off and on (the timestamp query pool is sized to
 * the plan: one query per dispatch plus one, no fixed cap), and report one dispatch per step
 * (the test runs with VKINFER_NO_FUSION=1, so that a future fusion of element-wise chains
 * cannot shrink it). Planning times of STEPS/10 and STEPS steps are printed to show planning
 * stays linear; they are not asserted (timings on a shared machine vary).
 *
 *   test_long_graph [STEPS] */
#include "vkinfer.h"
#include "check.h"
#include "pbwrite.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WIDTH 64

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void write_chain(const char *path, int steps)
{
    pbw graph = {0}, model = {0};
    int64_t dims[1] = {-1}; /* symbolic: the session plans at the first run, profiling set */
    float c = 1.0f;
    char in[32], out[32];
    snprintf(in, sizeof in, "x");
    for (int i = 0; i < steps; i++) {
        if (i + 1 == steps) snprintf(out, sizeof out, "y");
        else snprintf(out, sizeof out, "v%d", i);
        if (i % 2 == 0) pbw_node2(&graph, "Add", in, "x", out);
        else pbw_node2(&graph, "Sub", in, "c", out);
        memcpy(in, out, sizeof in);
    }
    pbw_initializer(&graph, "c", 1, 1, &c, sizeof c);
    pbw_value_info(&graph, 11, "x", 1, dims, 1);
    pbw_value_info(&graph, 12, "y", 1, dims, 1);
    pbw_model(&model, &graph);
    pbw_save(&model, path);
}

/* Loads, plans and runs the chain of `steps` steps; checks the output against the CPU's and the
 * dispatch count; with profiling, that every dispatch has a time. Returns the plan's ms. */
static double run_chain(vki_context *ctx, const char *path, int steps, int profiling)
{
    float x[WIDTH], want[WIDTH];
    for (int j = 0; j < WIDTH; j++) x[j] = (float)(j % 9);
    for (int j = 0; j < WIDTH; j++) {
        float y = x[j];
        for (int i = 0; i < steps; i++) y = i % 2 == 0 ? y + x[j] : y - 1.0f;
        want[j] = y;
    }
    vki_model *m = NULL;
    vki_session *s = NULL;
    double t0 = now_ms();
    vki_status st = vki_model_load(ctx, path, &m);
    double load_ms = now_ms() - t0;
    if (st == VKI_OK) st = vki_session_create(m, &s);
    if (st == VKI_OK) st = vki_session_set_profiling(s, profiling);
    int64_t dims[1] = {WIDTH};
    if (st == VKI_OK) st = vki_session_set_input(s, "x", VKI_DTYPE_FLOAT, dims, 1, x, sizeof x);
    t0 = now_ms();
    if (st == VKI_OK) st = vki_session_run(s);
    double first_ms = now_ms() - t0;
    t0 = now_ms();
    if (st == VKI_OK) st = vki_session_run(s); /* replay */
    double replay_ms = now_ms() - t0;
    CHECK(st == VKI_OK, "%d steps, profiling %d: %s", steps, profiling, vki_last_error());
    const void *y = NULL;
    size_t bytes = 0;
    vki_session_stats stats = {0};
    if (st == VKI_OK) st = vki_session_get_output(s, 0, NULL, &y, &bytes);
    if (st == VKI_OK) st = vki_session_stats_get(s, &stats);
    if (st == VKI_OK) {
        CHECK(bytes == sizeof want && !memcmp(y, want, sizeof want),
              "%d steps, profiling %d: output equals the CPU's (y[1] = %g, want %g)", steps, profiling,
              bytes == sizeof want ? (double)((const float *)y)[1] : -1.0, (double)want[1]);
        CHECK(stats.dispatch_count >= (uint32_t)steps, "%d steps: %u dispatches (one per step wanted)", steps,
              stats.dispatch_count);
        printf("%d steps, profiling %s: %u dispatches, load %.0f ms, plan %.0f ms, first run %.0f ms, replay %.0f ms\n", steps,
               profiling ? "on" : "off", stats.dispatch_count, load_ms, stats.plan_ms, first_ms, replay_ms);
    }
    if (st == VKI_OK && profiling) {
        uint32_t count = 0;
        vki_dispatch_profile *prof = calloc(stats.dispatch_count + 1, sizeof *prof);
        st = vki_session_profile(s, prof, stats.dispatch_count, &count);
        CHECK(st == VKI_OK && count == stats.dispatch_count, "profile of %u dispatches: %u (%s)", stats.dispatch_count,
              count, st == VKI_OK ? "" : vki_last_error());
        double total = 0;
        int bad = 0;
        for (uint32_t d = 0; st == VKI_OK && d < count; d++) {
            bad += !(prof[d].gpu_ms >= 0) || !prof[d].node || !prof[d].shader;
            total += prof[d].gpu_ms;
        }
        CHECK(!bad, "%d dispatch profiles without a time, node or shader", bad);
        if (count) printf("  profile: %u dispatches, %.1f ms of GPU time, last node %s (%s)\n", count, total,
                          prof[count - 1].node, prof[count - 1].op);
        free(prof);
    }
    vki_session_destroy(s);
    vki_model_destroy(m);
    return stats.plan_ms;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 100000;
    if (steps < 20) steps = 20;
    setenv("VKINFER_NO_FUSION", "1", 1);
    char dir[] = "/tmp/vkinfer-chain-XXXXXX", small[64], big[64];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(small, sizeof small, "%s/small.onnx", dir);
    snprintf(big, sizeof big, "%s/big.onnx", dir);
    write_chain(small, steps / 10);
    write_chain(big, steps);
    vki_context *ctx = NULL;
    if (vki_context_create(NULL, &ctx) != VKI_OK) {
        printf("FAIL: no context: %s\n", vki_last_error());
        return 1;
    }
    double small_ms = run_chain(ctx, small, steps / 10, 0);
    double big_ms = run_chain(ctx, big, steps, 0);
    run_chain(ctx, big, steps, 1);
    printf("planning: %d steps %.0f ms, %d steps %.0f ms: %.2fx the time for 10x the steps (linear: about 10x)\n",
           steps / 10, small_ms, steps, big_ms, small_ms > 0 ? big_ms / small_ms : 0.0);
    vki_context_destroy(ctx);
    remove(small);
    remove(big);
    rmdir(dir);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
