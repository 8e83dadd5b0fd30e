/* Device layer, planner and session through the public API: device choice and its errors,
 * a machine without Vulkan, memory reuse by liveness, plans cached per input shape,
 * input errors that list what the model expects, and the pipeline cache on disk. */
#include "vkinfer.h"
#include "check.h"
#include "pbwrite.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>


/* x[N,256] -> Relu -> Sigmoid -> Neg -> Abs -> Sqrt -> y: five values of equal size, of
 * which at most two are live at once. */
static void write_chain_model(const char *path)
{
    pbw graph = {0}, model = {0};
    int64_t dims[2] = {-1, 256};
    pbw_node(&graph, "Relu", "x", "a");
    pbw_node(&graph, "Sigmoid", "a", "b");
    pbw_node(&graph, "Neg", "b", "c");
    pbw_node(&graph, "Abs", "c", "d");
    pbw_node(&graph, "Sqrt", "d", "y");
    pbw_value_info(&graph, 11, "x", 1, dims, 2);
    pbw_value_info(&graph, 12, "y", 1, dims, 2);
    pbw_model(&model, &graph);
    pbw_save(&model, path);
}

static float expected(float x) { return sqrtf(1.0f / (1.0f + expf(-(x > 0 ? x : 0)))); }

static void run_chain(vki_session *s, int n, float *max_err)
{
    float *x = malloc(sizeof(float) * 256 * (size_t)n);
    for (int i = 0; i < 256 * n; i++) x[i] = (float)((i * 37) % 101 - 50) / 10.0f;
    int64_t dims[2] = {n, 256};
    vki_status st = vki_session_set_input(s, "x", VKI_DTYPE_FLOAT, dims, 2, x, sizeof(float) * 256 * (size_t)n);
    if (st == VKI_OK) st = vki_session_run(s);
    *max_err = INFINITY;
    if (st == VKI_OK) {
        vki_tensor_info info;
        const float *y;
        size_t bytes;
        vki_session_get_output(s, 0, &info, (const void **)&y, &bytes);
        if (info.rank == 2 && info.dims[0] == n && bytes == sizeof(float) * 256 * (size_t)n) {
            *max_err = 0;
            for (int i = 0; i < 256 * n; i++) *max_err = fmaxf(*max_err, fabsf(y[i] - expected(x[i])));
        }
    } else {
        printf("run failed: %s\n", vki_last_error());
    }
    free(x);
}

int main(void)
{
    CHECK(vki_vulkan_available() == 1, "Vulkan should be available");
    uint32_t count = 0;
    CHECK(vki_device_list(NULL, 0, &count) == VKI_OK && count >= 1, "device count %u", count);
    vki_device_info infos[16];
    uint32_t n = count < 16 ? count : 16;
    vki_device_list(infos, n, &count);
    int defaults = 0;
    for (uint32_t i = 0; i < n; i++) defaults += infos[i].is_default;
    CHECK(defaults == 1, "exactly one default device (%d)", defaults);
    CHECK(infos[0].max_storage_buffer_range > 0 && infos[0].name[0], "device info filled");

    vki_context *ctx = NULL;
    vki_context_options opts = {"no-such-device-name", -1, NULL};
    CHECK(vki_context_create(&opts, &ctx) == VKI_ERROR_INVALID_ARGUMENT && strstr(vki_last_error(), "no-such-device-name"),
          "unknown device name: %s", vki_last_error());
    opts.device = "99";
    CHECK(vki_context_create(&opts, &ctx) == VKI_ERROR_INVALID_ARGUMENT, "device index 99: %s", vki_last_error());

    /* a machine without a Vulkan loader */
    setenv("VKINFER_VULKAN_LIBRARY", "/nonexistent/libvulkan.so.1", 1);
    CHECK(vki_vulkan_available() == 0, "no loader: not available");
    CHECK(vki_context_create(NULL, &ctx) == VKI_ERROR_NO_VULKAN && strstr(vki_last_error(), "no Vulkan"),
          "no loader: %s", vki_last_error());
    unsetenv("VKINFER_VULKAN_LIBRARY");

    char dir[] = "/tmp/vkinfer-runtime-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char path[512], cache[512];
    snprintf(path, sizeof path, "%s/chain.onnx", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    write_chain_model(path);
    vki_context_options copts = {NULL, -1, cache};
    vki_status st = vki_context_create(&copts, &ctx);
    CHECK(st == VKI_OK, "context: %s", vki_last_error());
    if (st != VKI_OK) return 1;
    vki_model *model;
    st = vki_model_load(ctx, path, &model);
    CHECK(st == VKI_OK, "load: %s", vki_last_error());
    if (st != VKI_OK) return 1;
    vki_session *s;
    vki_session_create(model, &s);

    float err;
    CHECK(vki_session_run(s) == VKI_ERROR_INVALID_ARGUMENT && strstr(vki_last_error(), "'x'"), "unset input: %s", vki_last_error());
    run_chain(s, 3, &err);
    CHECK(err < 1e-6f, "chain N=3 max error %g", err);
    vki_session_stats stats;
    vki_session_stats_get(s, &stats);
    /* with VKINFER_MAX_BINDING_BYTES=1024 each [3,256] tensor (3 KiB) runs as 3 windows */
    uint32_t want_dispatches = getenv("VKINFER_MAX_BINDING_BYTES") ? 15 : 5;
    CHECK(stats.dispatch_count == want_dispatches && stats.gpu_node_count == 5, "dispatches %u, expected %u",
          stats.dispatch_count, want_dispatches);
    CHECK(stats.intermediate_bytes < stats.intermediate_unshared_bytes,
          "memory reuse: arena %llu bytes, unshared %llu", (unsigned long long)stats.intermediate_bytes,
          (unsigned long long)stats.intermediate_unshared_bytes);
    printf("peak intermediate memory %llu bytes (unshared %llu)\n", (unsigned long long)stats.intermediate_bytes,
           (unsigned long long)stats.intermediate_unshared_bytes);
    run_chain(s, 5, &err);
    CHECK(err < 1e-6f, "chain N=5 max error %g", err);
    run_chain(s, 3, &err);
    CHECK(err < 1e-6f, "chain N=3 again max error %g", err);
    vki_session_stats_get(s, &stats);
    CHECK(stats.plans_cached == 2, "plans cached %u", stats.plans_cached);
    if (!getenv("VKINFER_MAX_BINDING_BYTES")) {
        /* 40000 x 256 elements need more than 65535 workgroups of 128: a 2-D grid */
        run_chain(s, 40000, &err);
        CHECK(err < 1e-6f, "chain N=40000 (2-D grid) max error %g", err);
    }

    /* per-dispatch GPU timestamps: one entry per dispatch, sized to the plan */
    CHECK(vki_session_profile(s, NULL, 0, &count) == VKI_ERROR_INVALID_ARGUMENT, "no profile before profiling is on");
    vki_session_set_profiling(s, 1);
    run_chain(s, 3, &err);
    CHECK(err < 1e-6f, "chain with profiling: max error %g", err);
    vki_dispatch_profile prof[64];
    vki_session_stats_get(s, &stats);
    st = vki_session_profile(s, prof, 64, &count);
    CHECK(st == VKI_OK && count == stats.dispatch_count, "profile entries %u for %u dispatches: %s", count,
          stats.dispatch_count, vki_last_error());
    bool sane = st == VKI_OK;
    for (uint32_t i = 0; sane && i < count && i < 64; i++)
        sane = prof[i].gpu_ms >= 0 && prof[i].gpu_ms < 10000 && !strcmp(prof[i].shader, "unary") && prof[i].node[0] &&
               prof[i].flops == 0 && prof[i].bytes > 0 && prof[i].bytes <= 2 * 3 * 256 * 4;
    CHECK(sane, "profile entries name the node and the unary shader with a time, no flops, at most the bytes of x and y (3 x 256 floats each; windows of them with 1 KiB bindings)");
    vki_session_set_profiling(s, 0);

    float x[256] = {0};
    int64_t dims[2] = {1, 256}, bad_dims[2] = {1, 255};
    CHECK(vki_session_set_input(s, "nope", VKI_DTYPE_FLOAT, dims, 2, x, sizeof x) == VKI_ERROR_INVALID_ARGUMENT &&
          strstr(vki_last_error(), "'x' float32[-1,256]"), "unknown input: %s", vki_last_error());
    CHECK(vki_session_set_input(s, "x", VKI_DTYPE_INT32, dims, 2, x, sizeof x) == VKI_ERROR_SHAPE, "dtype: %s", vki_last_error());
    CHECK(vki_session_set_input(s, "x", VKI_DTYPE_FLOAT, bad_dims, 2, x, sizeof x) == VKI_ERROR_SHAPE, "shape: %s", vki_last_error());
    CHECK(vki_session_set_input(s, "x", VKI_DTYPE_FLOAT, dims, 2, x, 12) == VKI_ERROR_SHAPE, "bytes: %s", vki_last_error());
    vki_session_destroy(s);
    vki_model_destroy(model);
    vki_context_destroy(ctx);

    /* initializers are uploaded once per session and shared by the plans of every shape */
    {
        pbw graph = {0}, model_bytes = {0};
        int64_t xdims[2] = {-1, 256};
        static float wv[256];
        for (int k = 0; k < 256; k++) wv[k] = (float)k;
        pbw node = {0};
        pbw_str(&node, 1, "x");
        pbw_str(&node, 1, "w");
        pbw_str(&node, 2, "y");
        pbw_str(&node, 4, "Add");
        pbw_msg(&graph, 1, &node);
        pbw_initializer(&graph, "w", 1, 256, wv, sizeof wv);
        pbw_value_info(&graph, 11, "x", 1, xdims, 2);
        pbw_value_info(&graph, 12, "y", 1, xdims, 2);
        pbw_model(&model_bytes, &graph);
        char add_path[600];
        snprintf(add_path, sizeof add_path, "%s/add.onnx", dir);
        pbw_save(&model_bytes, add_path);
        vki_context *c2 = NULL;
        vki_model *am;
        vki_session *as;
        if (vki_context_create(&copts, &c2) == VKI_OK && vki_model_load(c2, add_path, &am) == VKI_OK &&
            vki_session_create(am, &as) == VKI_OK) {
            float xs[3 * 256];
            for (int k = 0; k < 3 * 256; k++) xs[k] = 1.0f;
            int64_t d2[2] = {2, 256}, d3[2] = {3, 256};
            vki_session_stats s2 = {0}, s3 = {0};
            bool ok = vki_session_set_input(as, "x", VKI_DTYPE_FLOAT, d2, 2, xs, 2 * 256 * 4) == VKI_OK &&
                      vki_session_run(as) == VKI_OK && vki_session_stats_get(as, &s2) == VKI_OK &&
                      vki_session_set_input(as, "x", VKI_DTYPE_FLOAT, d3, 2, xs, 3 * 256 * 4) == VKI_OK &&
                      vki_session_run(as) == VKI_OK && vki_session_stats_get(as, &s3) == VKI_OK;
            const float *y = NULL;
            vki_tensor_info info;
            size_t bytes;
            if (ok) vki_session_get_output(as, 0, &info, (const void **)&y, &bytes);
            CHECK(ok && y && y[2 * 256 + 7] == 8.0f, "Add with an initializer at two shapes: %s", vki_last_error());
            CHECK(s3.plans_cached == 2 && s2.weight_bytes == 1024 && s3.weight_bytes == 1024,
                  "two plans share one upload of the initializer: %llu bytes after one plan, %llu after two",
                  (unsigned long long)s2.weight_bytes, (unsigned long long)s3.weight_bytes);
            vki_session_destroy(as);
            vki_model_destroy(am);
        }
        vki_context_destroy(c2);
    }

    /* a model whose inputs are fully declared plans at session creation: an op that cannot
     * run fails there, naming the node and op, before any data is set */
    {
        pbw graph = {0}, model_bytes = {0};
        int64_t xdims[2] = {2, 4}, three = 3;
        pbw node = {0};
        pbw_str(&node, 1, "x");
        pbw_str(&node, 1, "s");
        pbw_str(&node, 2, "y");
        pbw_str(&node, 3, "bad_reshape");
        pbw_str(&node, 4, "Reshape");
        pbw_msg(&graph, 1, &node);
        pbw_initializer(&graph, "s", 7, 1, &three, 8);
        pbw_value_info(&graph, 11, "x", 1, xdims, 2);
        pbw_value_info(&graph, 12, "y", 1, xdims, 0);
        pbw_model(&model_bytes, &graph);
        char bad_path[600];
        snprintf(bad_path, sizeof bad_path, "%s/bad.onnx", dir);
        pbw_save(&model_bytes, bad_path);
        vki_context *c2;
        vki_model *bad;
        vki_session *bs = NULL;
        if (vki_context_create(&copts, &c2) == VKI_OK) {
            CHECK(vki_model_load(c2, bad_path, &bad) == VKI_OK, "load of a model that cannot run: %s", vki_last_error());
            st = vki_session_create(bad, &bs);
            CHECK(st != VKI_OK && strstr(vki_last_error(), "bad_reshape") && strstr(vki_last_error(), "Reshape") && !bs,
                  "session creation names the node that cannot run: %s", vki_last_error());
            vki_model_destroy(bad);
            vki_context_destroy(c2);
        }
    }

    /* the pipeline cache was written; a corrupt one is ignored */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "ls %s/pipelines-*.bin >/dev/null 2>&1", cache);
    CHECK(system(cmd) == 0, "pipeline cache file written in %s", cache);
    snprintf(cmd, sizeof cmd, "for f in %s/pipelines-*.bin; do head -c 100 /dev/urandom > $f; done", cache);
    if (system(cmd) != 0) printf("note: could not corrupt the cache\n");
    st = vki_context_create(&copts, &ctx);
    CHECK(st == VKI_OK, "context with a corrupt cache: %s", vki_last_error());
    if (st == VKI_OK) {
        st = vki_model_load(ctx, path, &model);
        if (st == VKI_OK) {
            vki_session_create(model, &s);
            run_chain(s, 2, &err);
            CHECK(err < 1e-6f, "run with a corrupt cache: max error %g", err);
            vki_session_destroy(s);
            vki_model_destroy(model);
        }
        vki_context_destroy(ctx);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) printf("note: could not remove %s\n", dir);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
