/* Host memory of a plan whose constants repeat: STEPS products y = y x W^T, each with its own
 * Transpose of one weight W (as an exporter unrolls a VLA's denoising loop), planned with the
 * CPU-device MatMul kernels, which pack a constant B on the host per product. Equal host
 * constants must be kept once while planning (plan_share_host_constants): the plan's host
 * arena may hold a few copies of W, not one per step (evo1's action head took 15 GB so). The
 * output must still be exact: W is a permutation matrix, so y is x permuted STEPS times. */
#include "vkinfer.h"
#include "runtime/runtime.h"
#include "check.h"
#include "pbwrite.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROWS 64
#define K 512
#define STEPS 32

static int perm_of(int i) { return (i * 5 + 1) % K; } /* W[i][perm_of(i)] = 1 */

static void write_model(const char *path)
{
    pbw graph = {0}, model = {0};
    float *w = calloc((size_t)K * K, sizeof *w);
    for (int i = 0; i < K; i++) w[(size_t)i * K + perm_of(i)] = 1.0f;
    int64_t shape[2] = {K, K}, dims[2] = {ROWS, K};
    char in[32] = "x", wt[32], out[32];
    pbw_node2(&graph, "Reshape", "w_flat", "shape", "w");
    for (int s = 0; s < STEPS; s++) {
        snprintf(wt, sizeof wt, "wt%d", s);
        if (s + 1 == STEPS) snprintf(out, sizeof out, "y");
        else snprintf(out, sizeof out, "y%d", s);
        pbw_node(&graph, "Transpose", "w", wt);
        pbw_node2(&graph, "MatMul", in, wt, out);
        memcpy(in, out, sizeof in);
    }
    pbw_initializer(&graph, "w_flat", 1, (uint64_t)K * K, w, (size_t)K * K * sizeof *w);
    pbw_initializer(&graph, "shape", 7, 2, shape, sizeof shape);
    pbw_value_info(&graph, 11, "x", 1, dims, 2);
    pbw_value_info(&graph, 12, "y", 1, dims, 2);
    pbw_model(&model, &graph);
    pbw_save(&model, path);
    free(w);
}

int main(void)
{
    setenv("VKINFER_MATMUL_KERNELS", "cpu", 1); /* the host-packing kernels on any device */
    char path[64];
    snprintf(path, sizeof path, "/tmp/vki_host_constants_%d.onnx", (int)getpid());
    write_model(path);
    vki_context *ctx = NULL;
    vki_model *m = NULL;
    vki_session *s = NULL;
    if (vki_context_create(NULL, &ctx) != VKI_OK || vki_model_load(ctx, path, &m) != VKI_OK ||
        vki_session_create(m, &s) != VKI_OK) {
        printf("FAIL: %s\n", vki_last_error());
        unlink(path);
        return 1;
    }
    unlink(path);
    static float x[ROWS * K], y[ROWS * K], want[ROWS * K];
    for (int i = 0; i < ROWS * K; i++) x[i] = (float)(i % 1001);
    int64_t dims[2] = {ROWS, K};
    CHECK(vki_session_set_input(s, "x", VKI_DTYPE_FLOAT, dims, 2, x, sizeof x) == VKI_OK, "set_input: %s", vki_last_error());
    CHECK(vki_session_run(s) == VKI_OK, "run: %s", vki_last_error());
    vki_tensor_info info;
    const void *data = NULL;
    size_t bytes = 0;
    CHECK(vki_session_get_output(s, 0, &info, &data, &bytes) == VKI_OK && bytes == sizeof y, "get_output: %s",
          vki_last_error());
    if (data && bytes == sizeof y) memcpy(y, data, sizeof y);
    /* y = x W^T per step: y[r][i] = sum_j x[r][j] W[i][j] = x[r][perm_of(i)] */
    memcpy(want, x, sizeof want);
    for (int st = 0; st < STEPS; st++) {
        float next[K];
        for (int r = 0; r < ROWS; r++) {
            for (int i = 0; i < K; i++) next[i] = want[r * K + perm_of(i)];
            memcpy(&want[r * K], next, sizeof next);
        }
    }
    int bad = 0;
    for (int i = 0; i < ROWS * K; i++) bad += y[i] != want[i];
    CHECK(bad == 0, "%d of %d outputs differ from the CPU's", bad, ROWS * K);
    size_t held = s->n_plans == 1 ? arena_held(&s->plans[0]->arena) : 0, w_bytes = (size_t)K * K * sizeof(float);
    printf("plan's host arena: %zu KiB for %d steps over one %zu KiB weight\n", held >> 10, STEPS, w_bytes >> 10);
    CHECK(s->n_plans == 1 && held > 0 && held < 6 * w_bytes, "the plan's host arena holds %zu bytes: %.1f copies of the "
          "weight (at most 6; one per step without sharing)", held, (double)held / (double)w_bytes);
    vki_session_destroy(s);
    vki_model_destroy(m);
    vki_context_destroy(ctx);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
