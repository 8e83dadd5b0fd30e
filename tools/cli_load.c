/* The model of `run` and `bench` loaded into a session on the chosen device, with lavapipe's
 * thread count chosen for small models and 2-core machines where the user does not say. */
#include "cli.h"
#include "cli_run.h"
#include "vkinfer.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* On lavapipe each dispatch hands its workgroups to lavapipe's threads and waits for them to
 * finish: 50-70 us a dispatch on a 2-core VM (a sleep and two wake-ups), more than a small
 * network's kernels take; on its submit thread alone (LP_NUM_THREADS=0) a dispatch costs 3-7
 * us (docs/history/benchmarks-notebook.md, sessions 20-24: the MLP policy 0.30 -> 0.06 ms, the transformer policy
 * 1.0-1.3 -> 0.27, the 1-D U-Net 0.40-0.61 -> 0.11-0.15). So where neither --cpu-threads nor
 * LP_NUM_THREADS says, a model whose weights and declared inputs (symbolic dims as 1) come to
 * less than AUTO_INLINE_BYTES runs so; [563,512] x [512,512] (2.2 MB of inputs) and every image
 * model keep the pool (below). Only lavapipe reads LP_NUM_THREADS. */
enum { AUTO_INLINE_BYTES = 1 << 20 };

/* And a larger model on a machine of 2 cores runs on 4 pool threads, two per core: one per core
 * there took 1.3-1.6x as long in one run of two or three and no faster in the others (resnet18
 * 37 / 51 / 61 ms a median against 37-38 with four; VQ-BeT 60-88 against 59-60; Diffusion
 * Policy's U-Net step 50 / 74 against 50-51: docs/history/benchmarks-notebook.md, session 25). Other core counts
 * keep lavapipe's default, one per core, until measured. */
enum { CPU_CHOSEN_NO, CPU_CHOSEN_INLINE, CPU_CHOSEN_TWO_PER_CORE };

static bool auto_inline(const char *path)
{
    struct stat st;
    char data[4096];
    if (stat(path, &st) || st.st_size >= AUTO_INLINE_BYTES) return false;
    if (snprintf(data, sizeof data, "%s.data", path) < (int)sizeof data && !stat(data, &st) &&
        st.st_size >= AUTO_INLINE_BYTES)
        return false; /* the dynamo exporter's weights file, by its usual name */
    vki_model_report *r;
    if (vki_model_inspect(path, &r) != VKI_OK) return false; /* vki_model_load will say why */
    vki_model_summary sum;
    uint64_t bytes = vki_model_report_summary(r, &sum) == VKI_OK ? sum.weight_bytes : AUTO_INLINE_BYTES;
    for (uint32_t i = 0; bytes < AUTO_INLINE_BYTES && i < sum.input_count; i++) {
        vki_tensor_info info;
        if (vki_model_report_input(r, i, &info) != VKI_OK) break;
        uint64_t n = vki_dtype_size(info.dtype) ? vki_dtype_size(info.dtype) : 1;
        for (int32_t d = 0; d < info.rank && n < AUTO_INLINE_BYTES; d++) n *= info.dims[d] > 0 ? (uint64_t)info.dims[d] : 1;
        bytes += n;
    }
    vki_model_report_destroy(r);
    return bytes < AUTO_INLINE_BYTES;
}

void cli_unload(loaded *l)
{
    vki_session_destroy(l->session);
    vki_model_destroy(l->model);
    vki_context_destroy(l->ctx);
}

const char *cli_cpu_threads_note(const loaded *l, const vki_device_info *dev, char *buf, size_t size)
{
    if (!dev->type || strcmp(dev->type, "cpu")) return "";
    /* lavapipe takes its thread count only from the process's environment, so that is where
     * the count a user set is found (the library's options cannot carry it) */
    const char *env = l->lp_num_threads;
    if (l->cpu_auto == CPU_CHOSEN_INLINE)
        snprintf(buf, size, "0 (each dispatch on lavapipe's submit thread: chosen for a model of under 1 MiB of weights "
                            "and inputs; --cpu-threads N to change)");
    else if (l->cpu_auto == CPU_CHOSEN_TWO_PER_CORE)
        snprintf(buf, size, "%ld (two per core: chosen on a machine of 2 cores, where one per core is slower in some "
                            "runs; --cpu-threads N to change)", l->cpu_threads);
    else if (l->cpu_threads >= 0)
        snprintf(buf, size, "%ld (--cpu-threads)", l->cpu_threads);
    else if (env)
        snprintf(buf, size, "%s (LP_NUM_THREADS)", env);
    else
        snprintf(buf, size, "one per core (lavapipe's default)");
    return buf;
}

int cli_load(const run_options *o, loaded *l)
{
    memset(l, 0, sizeof *l);
    /* lavapipe reads LP_NUM_THREADS from the environment when the context's Vulkan instance
     * finds it, so the program reads and sets it there, not through the library's options; it
     * has one thread here, so setting the environment is safe (the library never does) */
    l->cpu_threads = o->cpu_threads;
    l->lp_num_threads = o->lp_num_threads;
    if (l->cpu_threads < 0 && !o->lp_num_threads) {
        if (auto_inline(o->model)) l->cpu_threads = 0, l->cpu_auto = CPU_CHOSEN_INLINE;
        else if (sysconf(_SC_NPROCESSORS_ONLN) == 2) l->cpu_threads = 4, l->cpu_auto = CPU_CHOSEN_TWO_PER_CORE;
    }
    if (l->cpu_threads >= 0) {
        char n[24];
        snprintf(n, sizeof n, "%ld", l->cpu_threads);
        if (setenv("LP_NUM_THREADS", n, 1)) return cli_lib_error("setting LP_NUM_THREADS");
    }
    vki_context_options opts = {.device = o->device, .validation = -1, .cache_dir = NULL};
    size_t n_options = (size_t)o->n_options;
    if (vki_context_create_with_options(&opts, o->option_names, o->option_values, n_options, &l->ctx) != VKI_OK)
        return cli_lib_error("opening the Vulkan device");
    double t0 = cli_now_ms();
    if (vki_model_load(l->ctx, o->model, &l->model) != VKI_OK) return cli_lib_error("loading the model");
    l->load_ms = cli_now_ms() - t0;
    t0 = cli_now_ms();
    vki_session_options sopts = {o->fp16 ? VKI_PRECISION_FP16 : VKI_PRECISION_DEFAULT};
    if (vki_session_create_with_options(l->model, &sopts, &l->session) != VKI_OK) return cli_lib_error("creating a session");
    l->session_ms = cli_now_ms() - t0;
    return 0;
}

