/* Threads: one context and two models shared by several threads, each with its own sessions,
 * planning and running at the same time; every output must equal the single-threaded one bit
 * for bit, and the validation layer (on in tests) must see no unsynchronised queue or command
 * pool use. Then two threads on one session: each call either works or is refused with a
 * message, never corrupts the session. */
#include "vkinfer.h"
#include "check.h"
#include "pbwrite.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS 6
#define RUNS 250
#define N 4
#define WIDTH 256

static vki_model *models[2];
static void *reference[2];
static size_t reference_bytes[2];

/* model 0: float32 x -> Relu -> Sigmoid -> Neg -> y;  model 1: float16 x + W -> Tanh -> y */
static void write_models(const char *path0, const char *path1)
{
    pbw graph = {0}, model = {0};
    int64_t dims[2] = {-1, WIDTH};
    pbw_node(&graph, "Relu", "x", "a");
    pbw_node(&graph, "Sigmoid", "a", "b");
    pbw_node(&graph, "Neg", "b", "y");
    pbw_value_info(&graph, 11, "x", 1, dims, 2);
    pbw_value_info(&graph, 12, "y", 1, dims, 2);
    pbw_model(&model, &graph);
    pbw_save(&model, path0);

    uint16_t w[WIDTH];
    for (int i = 0; i < WIDTH; i++) w[i] = (uint16_t)(0x3c00 + (i % 7) * 0x40); /* 1.0 .. 1.375 */
    pbw_node2(&graph, "Add", "x", "w", "s");
    pbw_node(&graph, "Tanh", "s", "y");
    pbw_initializer(&graph, "w", 10, WIDTH, w, sizeof w);
    pbw_value_info(&graph, 11, "x", 10, dims, 2);
    pbw_value_info(&graph, 12, "y", 10, dims, 2);
    pbw_model(&model, &graph);
    pbw_save(&model, path1);
}

static void input_of(int m, void *x)
{
    for (int i = 0; i < N * WIDTH; i++) {
        float v = (float)((i * 37) % 101 - 50) / 25.0f;
        if (m == 0) ((float *)x)[i] = v;
        else ((uint16_t *)x)[i] = (uint16_t)(v < 0 ? 0xb800 : 0x3800); /* -0.5, 0.5 */
    }
}

/* Runs session s of model m once; copies its output into out (bytes). */
static vki_status run_once(vki_session *s, int m, void *out, size_t *bytes)
{
    static const vki_dtype dtypes[2] = {VKI_DTYPE_FLOAT, VKI_DTYPE_FLOAT16};
    float x[N * WIDTH];
    input_of(m, x);
    int64_t dims[2] = {N, WIDTH};
    vki_status st = vki_session_set_input(s, "x", dtypes[m], dims, 2, x, (size_t)N * WIDTH * vki_dtype_size(dtypes[m]));
    if (st == VKI_OK) st = vki_session_run(s);
    const void *y;
    if (st == VKI_OK) st = vki_session_get_output(s, 0, NULL, &y, bytes);
    if (st == VKI_OK) memcpy(out, y, *bytes);
    return st;
}

typedef struct worker {
    int id, mismatches, errors;
    char first_error[512];
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    vki_session *s[2] = {NULL, NULL};
    for (int m = 0; m < 2; m++)
        if (vki_session_create(models[m], &s[m]) != VKI_OK) {
            w->errors++;
            snprintf(w->first_error, sizeof w->first_error, "%s", vki_last_error());
        }
    float out[N * WIDTH];
    for (int r = 0; r < RUNS && !w->errors; r++) {
        int m = (r + w->id) % 2;
        size_t bytes = 0;
        if (run_once(s[m], m, out, &bytes) != VKI_OK) {
            if (!w->errors++) snprintf(w->first_error, sizeof w->first_error, "%s", vki_last_error());
        } else if (bytes != reference_bytes[m] || memcmp(out, reference[m], bytes)) {
            w->mismatches++;
        }
    }
    for (int m = 0; m < 2; m++) vki_session_destroy(s[m]);
    return NULL;
}

typedef struct sharer {
    vki_session *s;
    int ok, refused, other;
    char other_error[512];
} sharer;

/* Several threads on one session: each call either runs or is refused. Outputs are not read
 * here: the pointer vki_session_get_output gives is the session's, rewritten by the next run in
 * any thread (the header says so), and reading it while another thread runs is the caller's race. */
static void *share(void *arg)
{
    sharer *h = arg;
    float x[N * WIDTH];
    input_of(0, x);
    int64_t dims[2] = {N, WIDTH};
    for (int r = 0; r < RUNS; r++) {
        vki_status st = vki_session_set_input(h->s, "x", VKI_DTYPE_FLOAT, dims, 2, x, sizeof x);
        if (st == VKI_OK) st = vki_session_run(h->s);
        if (st == VKI_OK) st = vki_session_get_output(h->s, 0, NULL, NULL, NULL);
        if (st == VKI_OK) h->ok++;
        else if (strstr(vki_last_error(), "in use by another thread")) h->refused++;
        else if (!h->other++) snprintf(h->other_error, sizeof h->other_error, "%s", vki_last_error());
    }
    return NULL;
}

int main(void)
{
    char dir[] = "/tmp/vkinfer-threads-XXXXXX", p0[64], p1[64];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(p0, sizeof p0, "%s/chain.onnx", dir);
    snprintf(p1, sizeof p1, "%s/half.onnx", dir);
    write_models(p0, p1);
    vki_context *ctx = NULL;
    if (vki_context_create(NULL, &ctx) != VKI_OK) {
        printf("FAIL: no context: %s\n0 passed, 1 failed\n", vki_last_error());
        return 1;
    }
    for (int m = 0; m < 2; m++) {
        CHECK(vki_model_load(ctx, m ? p1 : p0, &models[m]) == VKI_OK, "load %d: %s", m, vki_last_error());
        vki_session *s = NULL;
        CHECK(vki_session_create(models[m], &s) == VKI_OK, "session %d: %s", m, vki_last_error());
        reference[m] = malloc(N * WIDTH * 4);
        CHECK(s && run_once(s, m, reference[m], &reference_bytes[m]) == VKI_OK, "reference run %d: %s", m, vki_last_error());
        vki_session_destroy(s);
    }

    /* several threads, each with its own sessions of both models */
    pthread_t threads[THREADS];
    worker workers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (worker){t, 0, 0, ""};
        pthread_create(&threads[t], NULL, work, &workers[t]);
    }
    int mismatches = 0, errors = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        mismatches += workers[t].mismatches;
        errors += workers[t].errors;
        if (workers[t].errors) printf("thread %d: %s\n", t, workers[t].first_error);
    }
    printf("%d threads x %d runs: %d errors, %d outputs differing from the single-threaded run\n", THREADS, RUNS, errors,
           mismatches);
    CHECK(errors == 0, "errors in threads");
    CHECK(mismatches == 0, "outputs differ from the single-threaded run");

    /* two threads on one session: runs work or are refused, nothing else */
    vki_session *shared = NULL;
    CHECK(vki_session_create(models[0], &shared) == VKI_OK, "shared session: %s", vki_last_error());
    sharer h[2] = {{shared, 0, 0, 0, ""}, {shared, 0, 0, 0, ""}};
    for (int t = 0; t < 2; t++) pthread_create(&threads[t], NULL, share, &h[t]);
    for (int t = 0; t < 2; t++) pthread_join(threads[t], NULL);
    printf("one session, two threads: %d runs worked, %d refused, %d other errors%s%s\n", h[0].ok + h[1].ok,
           h[0].refused + h[1].refused, h[0].other + h[1].other, h[0].other ? ": " : "", h[0].other_error);
    CHECK(h[0].other + h[1].other == 0, "a shared session failed other than by refusal");
    CHECK(h[0].ok + h[1].ok > 0, "no run of the shared session worked");
    float out[N * WIDTH];
    size_t bytes;
    CHECK(run_once(shared, 0, out, &bytes) == VKI_OK && !memcmp(out, reference[0], bytes),
          "the shared session still runs correctly afterwards");
    vki_session_destroy(shared);

    for (int m = 0; m < 2; m++) {
        vki_model_destroy(models[m]);
        free(reference[m]);
    }
    vki_context_destroy(ctx);
    unlink(p0);
    unlink(p1);
    rmdir(dir);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
