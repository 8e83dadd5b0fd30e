/* Device loss (VKINFER_FAULT_DEVICE_LOST=N: the context's Nth queue submission reports
 * VK_ERROR_DEVICE_LOST): the call that meets it returns VKI_ERROR_DEVICE_LOST, and so does every
 * later run, prepare, session or tensor on that context, at once and without submitting
 * anything more, whichever session (or thread) asks; sessions, tensors, models and the context
 * can still be destroyed, and a new context runs the model with the same outputs as before. */
#include "vkinfer.h"
#include "runtime/runtime.h"
#include "check.h"
#include "pbwrite.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WIDTH 256
#define ROWS 4

static char model_path[64];

/* x[-1, WIDTH] + w[WIDTH] -> Tanh -> y, float32 */
static void write_model(const char *path)
{
    pbw graph = {0}, model = {0};
    int64_t dims[2] = {-1, WIDTH};
    float w[WIDTH];
    for (int i = 0; i < WIDTH; i++) w[i] = (float)(i % 5) * 0.25f;
    pbw_node2(&graph, "Add", "x", "w", "s");
    pbw_node(&graph, "Tanh", "s", "y");
    pbw_initializer(&graph, "w", 1, WIDTH, w, sizeof w);
    pbw_value_info(&graph, 11, "x", 1, dims, 2);
    pbw_value_info(&graph, 12, "y", 1, dims, 2);
    pbw_model(&model, &graph);
    pbw_save(&model, path);
}

/* Sets x (scaled by `seed`), runs, copies y into out. */
static vki_status run_once(vki_session *s, int seed, float *out)
{
    float x[ROWS * WIDTH];
    for (int i = 0; i < ROWS * WIDTH; i++) x[i] = (float)((i * 13 + seed) % 41 - 20) / 10.0f;
    int64_t dims[2] = {ROWS, WIDTH};
    vki_status st = vki_session_set_input(s, "x", VKI_DTYPE_FLOAT, dims, 2, x, sizeof x);
    if (st == VKI_OK) st = vki_session_run(s);
    const void *y;
    size_t bytes = 0;
    if (st == VKI_OK) st = vki_session_get_output(s, 0, NULL, &y, &bytes);
    if (st == VKI_OK && bytes != sizeof(float) * ROWS * WIDTH) st = vki_fail(VKI_ERROR_SHAPE, "output of %zu bytes", bytes);
    if (st == VKI_OK && out) memcpy(out, y, bytes);
    return st;
}

static vki_context *open_context(const char *fault)
{
    if (fault) setenv("VKINFER_FAULT_DEVICE_LOST", fault, 1);
    else unsetenv("VKINFER_FAULT_DEVICE_LOST");
    vki_context *ctx = NULL;
    vki_status st = vki_context_create(NULL, &ctx);
    CHECK(st == VKI_OK, "context (fault %s): %s", fault ? fault : "none", vki_last_error());
    return ctx;
}

static float ref_a[ROWS * WIDTH], ref_b[ROWS * WIDTH];

/* The sequence the faults are placed in: sessions A and B, runs A, B, A (seeds 1, 2, 1). */
static uint64_t sequence(vki_context *ctx, vki_model **m, vki_session **a, vki_session **b, int *failed_at, vki_status *failure)
{
    *failed_at = -1;
    *failure = VKI_OK;
    vki_status st = vki_model_load(ctx, model_path, m);
    if (st == VKI_OK) st = vki_session_create(*m, a);
    if (st == VKI_OK) st = vki_session_create(*m, b);
    CHECK(st == VKI_OK, "load, sessions: %s", vki_last_error());
    if (st != VKI_OK) return 0;
    float out[ROWS * WIDTH];
    for (int r = 0; r < 3; r++) {
        st = run_once(r == 1 ? *b : *a, r == 1 ? 2 : 1, out);
        if (st != VKI_OK) {
            *failed_at = r;
            *failure = st;
            break;
        }
        CHECK(!memcmp(out, r == 1 ? ref_b : ref_a, sizeof out), "run %d: output differs from the reference", r);
    }
    return ctx->vk.submit_count;
}

/* A fresh context without faults runs the model and matches the references. */
static void check_recovery(const char *when)
{
    vki_context *ctx = open_context(NULL);
    vki_model *m = NULL;
    vki_session *s = NULL;
    float out[ROWS * WIDTH];
    vki_status st = ctx ? vki_model_load(ctx, model_path, &m) : VKI_ERROR_NO_VULKAN;
    if (st == VKI_OK) st = vki_session_create(m, &s);
    if (st == VKI_OK) st = run_once(s, 1, out);
    CHECK(st == VKI_OK && !memcmp(out, ref_a, sizeof out), "%s: a new context runs the model as before (%s)", when,
          st == VKI_OK ? "output differs" : vki_last_error());
    if (st == VKI_OK) st = run_once(s, 2, out);
    CHECK(st == VKI_OK && !memcmp(out, ref_b, sizeof out), "%s: and again", when);
    vki_session_destroy(s);
    vki_model_destroy(m);
    vki_context_destroy(ctx);
}

static void check_lost(vki_status st, const char *what)
{
    CHECK(st == VKI_ERROR_DEVICE_LOST, "%s: status %d (want VKI_ERROR_DEVICE_LOST = %d): %s", what, (int)st,
          (int)VKI_ERROR_DEVICE_LOST, vki_last_error());
    CHECK(strstr(vki_last_error(), "VK_ERROR_DEVICE_LOST") && strstr(vki_last_error(), "new context"),
          "%s: the message names the loss and what to do: %s", what, vki_last_error());
}

/* Everything that would use the device fails at once, without a submission. */
static void check_dead(vki_context *ctx, vki_model *m, vki_session *a, vki_session *b)
{
    uint64_t before = ctx->vk.submit_count;
    check_lost(run_once(b, 2, NULL), "the other session's run");
    check_lost(run_once(a, 1, NULL), "the same session's next run");
    check_lost(run_once(a, 7, NULL), "a run with new values");
    check_lost(vki_session_prepare(b), "prepare");
    vki_session *c = NULL;
    check_lost(vki_session_create(m, &c), "a new session");
    CHECK(c == NULL, "no session is made on a lost device");
    vki_tensor *t = NULL;
    int64_t dims[2] = {ROWS, WIDTH};
    check_lost(vki_tensor_create(ctx, VKI_DTYPE_FLOAT, dims, 2, &t), "a new device tensor");
    CHECK(t == NULL, "no tensor is made on a lost device");
    CHECK(ctx->vk.submit_count == before, "nothing was submitted after the loss (%llu submissions, %llu before)",
          (unsigned long long)ctx->vk.submit_count, (unsigned long long)before);
}

typedef struct runner {
    vki_session *s;
    int seed, runs;
    vki_status last;
    int wrong;
} runner;

/* Runs until a call fails (the device is lost in some thread's submission). */
static void *run_until_failure(void *arg)
{
    runner *r = arg;
    float out[ROWS * WIDTH];
    for (r->runs = 0; r->runs < 100000; r->runs++) {
        r->last = run_once(r->s, r->seed, out);
        if (r->last != VKI_OK) {
            if (r->last != VKI_ERROR_DEVICE_LOST) fprintf(stdout, "thread %d: %s\n", r->seed, vki_last_error());
            break;
        }
        r->wrong += memcmp(out, r->seed == 1 ? ref_a : ref_b, sizeof out) != 0;
    }
    return NULL;
}

int main(void)
{
    char dir[] = "/tmp/vkinfer-lost-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(model_path, sizeof model_path, "%s/model.onnx", dir);
    write_model(model_path);

    /* references and the number of submissions of the sequence, with no fault */
    vki_context *ctx = open_context(NULL);
    if (!ctx) return 1;
    vki_model *m = NULL;
    vki_session *a = NULL, *b = NULL;
    CHECK(vki_model_load(ctx, model_path, &m) == VKI_OK, "load: %s", vki_last_error());
    CHECK(vki_session_create(m, &a) == VKI_OK && vki_session_create(m, &b) == VKI_OK, "sessions: %s", vki_last_error());
    CHECK(run_once(a, 1, ref_a) == VKI_OK && run_once(b, 2, ref_b) == VKI_OK, "reference runs: %s", vki_last_error());
    vki_session_destroy(a);
    vki_session_destroy(b);
    vki_model_destroy(m);
    vki_context_destroy(ctx);
    int failed_at;
    vki_status failure;
    ctx = open_context(NULL);
    uint64_t total = sequence(ctx, &m, &a, &b, &failed_at, &failure);
    CHECK(failed_at < 0 && total >= 3, "the sequence without faults: %d submissions, failed at run %d", (int)total, failed_at);
    vki_session_destroy(a);
    vki_session_destroy(b);
    vki_model_destroy(m);
    vki_context_destroy(ctx);
    printf("the sequence makes %llu queue submissions\n", (unsigned long long)total);

    /* 1. the loss in the last run's submission: that run and everything after fail */
    char n[32];
    snprintf(n, sizeof n, "%llu", (unsigned long long)total);
    ctx = open_context(n);
    if (ctx) {
        sequence(ctx, &m, &a, &b, &failed_at, &failure);
        CHECK(failed_at == 2, "the loss hits the last run (failed at run %d)", failed_at);
        check_lost(failure, "the run whose submission was lost");
        CHECK(ctx->vk.submit_count == total, "%llu submissions counted", (unsigned long long)ctx->vk.submit_count);
        check_dead(ctx, m, a, b);
        vki_session_destroy(a);
        vki_session_destroy(b);
        vki_model_destroy(m);
        vki_context_destroy(ctx);
    }
    check_recovery("after a loss in a run");

    /* 2. every earlier submission too (weight uploads while planning, each run): the call that
     *    meets it fails with the loss, the context is dead after it, and recovery works */
    for (uint64_t k = 1; k < total; k++) {
        snprintf(n, sizeof n, "%llu", (unsigned long long)k);
        ctx = open_context(n);
        if (!ctx) break;
        sequence(ctx, &m, &a, &b, &failed_at, &failure);
        CHECK(failed_at >= 0, "fault at submission %llu: a run failed", (unsigned long long)k);
        check_lost(failure, "the run whose submission was lost");
        check_dead(ctx, m, a, b);
        vki_session_destroy(a);
        vki_session_destroy(b);
        vki_model_destroy(m);
        vki_context_destroy(ctx);
    }
    check_recovery("after losses while planning");

    /* 3. two threads running two sessions of one context; the loss comes in the middle of
     *    their runs, in the 40th submission (weight uploads and runs), whichever thread makes it: both stop with
     *    VKI_ERROR_DEVICE_LOST (the other one mid-run or at its next run), nothing hangs, and
     *    no submission follows the lost one */
    snprintf(n, sizeof n, "40");
    ctx = open_context(n);
    if (ctx) {
        CHECK(vki_model_load(ctx, model_path, &m) == VKI_OK, "load: %s", vki_last_error());
        CHECK(vki_session_create(m, &a) == VKI_OK && vki_session_create(m, &b) == VKI_OK, "sessions: %s", vki_last_error());
        runner ra = {a, 1, 0, VKI_OK, 0}, rb = {b, 2, 0, VKI_OK, 0};
        pthread_t ta, tb;
        pthread_create(&ta, NULL, run_until_failure, &ra);
        pthread_create(&tb, NULL, run_until_failure, &rb);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        printf("threads: %d and %d runs before the loss\n", ra.runs, rb.runs);
        CHECK(ra.last == VKI_ERROR_DEVICE_LOST && rb.last == VKI_ERROR_DEVICE_LOST,
              "both threads stop with VKI_ERROR_DEVICE_LOST (statuses %d, %d)", (int)ra.last, (int)rb.last);
        CHECK(ra.runs + rb.runs >= 30 && ra.runs + rb.runs < 40, "the loss came after 30-39 runs (%d)", ra.runs + rb.runs);
        CHECK(!ra.wrong && !rb.wrong, "outputs before the loss were right (%d, %d wrong)", ra.wrong, rb.wrong);
        CHECK(ctx->vk.submit_count == 40, "no submission after the lost one (%llu, lost at 40)",
              (unsigned long long)ctx->vk.submit_count);
        check_dead(ctx, m, a, b);
        vki_session_destroy(a);
        vki_session_destroy(b);
        vki_model_destroy(m);
        vki_context_destroy(ctx);
    }
    check_recovery("after a loss between threads");

    /* 4. a device tensor's copy meets the loss too */
    ctx = open_context(NULL);
    if (ctx) {
        vki_tensor *t = NULL;
        int64_t dims[2] = {ROWS, WIDTH};
        float x[ROWS * WIDTH] = {0};
        CHECK(vki_tensor_create(ctx, VKI_DTYPE_FLOAT, dims, 2, &t) == VKI_OK, "tensor: %s", vki_last_error());
        ctx->vk.fault_lost_at = ctx->vk.submit_count + 1; /* as VKINFER_FAULT_DEVICE_LOST would */
        check_lost(vki_tensor_write(t, x, sizeof x), "a tensor write");
        check_lost(vki_tensor_read(t, x, sizeof x), "a tensor read after it");
        vki_tensor_destroy(t);
        vki_context_destroy(ctx);
    }

    /* a malformed switch is refused at context creation */
    setenv("VKINFER_FAULT_DEVICE_LOST", "two", 1);
    vki_context *bad = NULL;
    CHECK(vki_context_create(NULL, &bad) == VKI_ERROR_INVALID_ARGUMENT && !bad &&
          strstr(vki_last_error(), "VKINFER_FAULT_DEVICE_LOST"), "VKINFER_FAULT_DEVICE_LOST=two is refused: %s", vki_last_error());
    vki_context_destroy(bad);
    unsetenv("VKINFER_FAULT_DEVICE_LOST");

    remove(model_path);
    rmdir(dir);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
