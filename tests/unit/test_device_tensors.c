/* Device tensors (vki_tensor): a 10-step denoising loop whose sample never leaves the GPU (one
 * step's output bound as the next step's input) must give exactly what the same loop gives
 * through the host; plus the errors binding can meet: wrong dtype, shape or context, one
 * tensor as input and output of a run, reading a bound output from the host. */
#include "vkinfer.h"
#include "check.h"
#include "pbwrite.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WIDTH 64
#define STEPS 10

/* One denoising step: y = x - 0.1 * tanh(x + w) */
static void write_denoiser(const char *path)
{
    pbw graph = {0}, model = {0};
    int64_t dims[2] = {1, WIDTH};
    float w[WIDTH], k[WIDTH];
    for (int i = 0; i < WIDTH; i++) {
        w[i] = (float)(i % 9) / 8.0f - 0.5f;
        k[i] = 0.1f;
    }
    pbw_node2(&graph, "Add", "x", "w", "a");
    pbw_node(&graph, "Tanh", "a", "b");
    pbw_node2(&graph, "Mul", "b", "k", "c");
    pbw_node2(&graph, "Sub", "x", "c", "y");
    pbw_initializer(&graph, "w", 1, WIDTH, w, sizeof w);
    pbw_initializer(&graph, "k", 1, WIDTH, k, sizeof k);
    pbw_value_info(&graph, 11, "x", 1, dims, 2);
    pbw_value_info(&graph, 12, "y", 1, dims, 2);
    pbw_model(&model, &graph);
    pbw_save(&model, path);
}

int main(void)
{
    char dir[] = "/tmp/vkinfer-tensors-XXXXXX", path[96];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/denoiser.onnx", dir);
    write_denoiser(path);
    vki_context *ctx = NULL, *other = NULL;
    vki_model *model = NULL;
    vki_session *s = NULL;
    if (vki_context_create(NULL, &ctx) != VKI_OK || vki_model_load(ctx, path, &model) != VKI_OK ||
        vki_session_create(model, &s) != VKI_OK) {
        printf("FAIL: setup: %s\n0 passed, 1 failed\n", vki_last_error());
        return 1;
    }
    float x0[WIDTH], host[WIDTH], device[WIDTH];
    for (int i = 0; i < WIDTH; i++) x0[i] = sinf((float)i);
    int64_t dims[2] = {1, WIDTH};

    /* the loop through the host */
    memcpy(host, x0, sizeof host);
    for (int step = 0; step < STEPS; step++) {
        const void *y;
        size_t bytes;
        vki_status st = vki_session_set_input(s, "x", VKI_DTYPE_FLOAT, dims, 2, host, sizeof host);
        if (st == VKI_OK) st = vki_session_run(s);
        if (st == VKI_OK) st = vki_session_get_output(s, 0, NULL, &y, &bytes);
        CHECK(st == VKI_OK && bytes == sizeof host, "host step %d: %s", step, vki_last_error());
        if (st == VKI_OK) memcpy(host, y, sizeof host);
    }
    float want[WIDTH], max_ref = 0; /* and on the CPU, to know the loop computes the step */
    memcpy(want, x0, sizeof want);
    for (int step = 0; step < STEPS; step++)
        for (int i = 0; i < WIDTH; i++) want[i] -= 0.1f * tanhf(want[i] + (float)(i % 9) / 8.0f - 0.5f);
    for (int i = 0; i < WIDTH; i++) max_ref = fmaxf(max_ref, fabsf(host[i] - want[i]));
    CHECK(max_ref < 1e-5f, "host loop differs from the CPU by %g", max_ref);

    /* the same loop with the sample on the GPU: two tensors swapped every step */
    vki_tensor *a = NULL, *b = NULL;
    CHECK(vki_tensor_create(ctx, VKI_DTYPE_FLOAT, dims, 2, &a) == VKI_OK, "tensor a: %s", vki_last_error());
    CHECK(vki_tensor_create(ctx, VKI_DTYPE_FLOAT, dims, 2, &b) == VKI_OK, "tensor b: %s", vki_last_error());
    CHECK(vki_tensor_write(a, x0, sizeof x0) == VKI_OK, "write: %s", vki_last_error());
    CHECK(vki_session_prepare(s) == VKI_OK, "prepare: %s", vki_last_error());
    vki_tensor_info info;
    CHECK(vki_session_output_info(s, 0, &info) == VKI_OK && info.rank == 2 && info.dims[1] == WIDTH &&
          info.dtype == VKI_DTYPE_FLOAT, "output info after prepare");
    for (int step = 0; step < STEPS; step++) {
        vki_status st = vki_session_bind_input(s, "x", a);
        if (st == VKI_OK) st = vki_session_bind_output(s, 0, b);
        if (st == VKI_OK) st = vki_session_run(s);
        CHECK(st == VKI_OK, "device step %d: %s", step, vki_last_error());
        vki_tensor *t = a;
        a = b;
        b = t;
    }
    const void *y;
    size_t bytes;
    CHECK(vki_session_get_output(s, 0, NULL, &y, &bytes) == VKI_ERROR_INVALID_ARGUMENT &&
          strstr(vki_last_error(), "bound to a device tensor"), "get_output of a bound output fails saying so");
    CHECK(vki_tensor_read(a, device, sizeof device) == VKI_OK, "read: %s", vki_last_error());
    CHECK(!memcmp(device, host, sizeof host), "the device loop gives the host loop's bits");

    /* what binding refuses */
    vki_tensor *half = NULL, *wide = NULL;
    int64_t wide_dims[2] = {2, WIDTH};
    CHECK(vki_tensor_create(ctx, VKI_DTYPE_FLOAT16, dims, 2, &half) == VKI_OK, "half tensor");
    CHECK(vki_session_bind_input(s, "x", half) == VKI_ERROR_SHAPE, "a float16 tensor for a float32 input is refused");
    CHECK(vki_session_bind_output(s, 0, half) == VKI_ERROR_SHAPE, "a float16 tensor for a float32 output is refused");
    CHECK(vki_session_bind_input(s, "nope", a) == VKI_ERROR_INVALID_ARGUMENT, "an unknown input name is refused");
    CHECK(vki_tensor_write(a, x0, 3) == VKI_ERROR_SHAPE, "a write of the wrong size is refused");
    CHECK(vki_tensor_create(ctx, VKI_DTYPE_FLOAT, wide_dims, 2, &wide) == VKI_OK, "wide tensor");
    CHECK(vki_session_bind_input(s, "x", a) == VKI_OK && vki_session_bind_output(s, 0, wide) == VKI_OK, "bind");
    CHECK(vki_session_run(s) == VKI_ERROR_SHAPE && strstr(vki_last_error(), "bound to it"),
          "an output tensor of the wrong shape fails the run: %s", vki_last_error());
    CHECK(vki_session_bind_output(s, 0, a) == VKI_OK && vki_session_run(s) == VKI_ERROR_INVALID_ARGUMENT &&
          strstr(vki_last_error(), "same run"), "one tensor as input and output of a run is refused");
    if (vki_context_create(NULL, &other) == VKI_OK) {
        vki_tensor *foreign = NULL;
        CHECK(vki_tensor_create(other, VKI_DTYPE_FLOAT, dims, 2, &foreign) == VKI_OK, "foreign tensor");
        CHECK(vki_session_bind_input(s, "x", foreign) == VKI_ERROR_INVALID_ARGUMENT, "a tensor of another context is refused");
        vki_tensor_destroy(foreign);
        vki_context_destroy(other);
    }
    /* unbound again: the host path works as before */
    CHECK(vki_session_bind_output(s, 0, NULL) == VKI_OK, "unbind");
    CHECK(vki_session_set_input(s, "x", VKI_DTYPE_FLOAT, dims, 2, x0, sizeof x0) == VKI_OK && vki_session_run(s) == VKI_OK &&
          vki_session_get_output(s, 0, NULL, &y, &bytes) == VKI_OK && bytes == sizeof x0, "host run after unbinding");

    vki_tensor_destroy(a);
    vki_tensor_destroy(b);
    vki_tensor_destroy(half);
    vki_tensor_destroy(wide);
    vki_session_destroy(s);
    vki_model_destroy(model);
    vki_context_destroy(ctx);
    unlink(path);
    rmdir(dir);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
