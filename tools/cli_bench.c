/* `vkinfer bench`: timed runs of a model (latency percentiles, throughput, --json), its GPU
 * profile, --plot and the first run's outputs (--output-dir). The plot is drawn by
 * tools/plot_bench.py, embedded in the program at build time and fed to `python3 -`: the C
 * program needs no plotting library, the script finds matplotlib where the user has it, and the
 * same script runs on saved JSON. */
#include "cli_bench.h"
#include "cli.h"
#include "cli_run.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot_bench_py.h" /* generated: plot_bench_py[], plot_bench_py_len */

static int compare_op_time(const void *a, const void *b)
{
    double x = ((const op_time *)a)->ms, y = ((const op_time *)b)->ms;
    return (x < y) - (x > y);
}

static int compare_dispatch_time(const void *a, const void *b)
{
    double x = ((const vki_dispatch_profile *)a)->gpu_ms, y = ((const vki_dispatch_profile *)b)->gpu_ms;
    return (x < y) - (x > y);
}

int cli_profile_collect(vki_session *s, profile_result *out)
{
    memset(out, 0, sizeof *out);
    uint32_t n = 0;
    if (vki_session_set_profiling(s, 1) != VKI_OK || vki_session_run(s) != VKI_OK || vki_session_run(s) != VKI_OK ||
        vki_session_profile(s, NULL, 0, &n) != VKI_OK)
        return 1;
    out->dispatches = calloc(n + 1, sizeof *out->dispatches);
    out->ops = calloc(n + 1, sizeof *out->ops);
    out->kernels = calloc(n + 1, sizeof *out->kernels);
    out->in_order = calloc(n + 1, sizeof *out->in_order);
    if (!out->dispatches || !out->ops || !out->kernels || !out->in_order || vki_session_profile(s, out->dispatches, n, &n) != VKI_OK) {
        cli_profile_free(out);
        return 1;
    }
    out->n_dispatches = n;
    for (uint32_t i = 0; i < n; i++) {
        const vki_dispatch_profile *d = &out->dispatches[i];
        out->total_ms += d->gpu_ms;
        int k = 0;
        while (k < out->n_ops && strcmp(out->ops[k].op, d->op)) k++;
        if (k == out->n_ops) out->ops[out->n_ops++] = (op_time){d->op, 0, 0, 0, 0};
        out->ops[k].ms += d->gpu_ms;
        out->ops[k].count++;
        out->ops[k].flops += d->flops;
        out->ops[k].bytes += d->bytes;
        k = 0;
        while (k < out->n_kernels && strcmp(out->kernels[k].op, d->shader)) k++;
        if (k == out->n_kernels) out->kernels[out->n_kernels++] = (op_time){d->shader, 0, 0, 0, 0};
        out->kernels[k].ms += d->gpu_ms;
        out->kernels[k].count++;
        out->kernels[k].flops += d->flops;
        out->kernels[k].bytes += d->bytes;
    }
    qsort(out->ops, (size_t)out->n_ops, sizeof *out->ops, compare_op_time);
    qsort(out->kernels, (size_t)out->n_kernels, sizeof *out->kernels, compare_op_time);
    memcpy(out->in_order, out->dispatches, n * sizeof *out->dispatches);
    qsort(out->dispatches, n, sizeof *out->dispatches, compare_dispatch_time);
    return 0;
}

/* "  12.3 GFLOP/s   45.6 GB/s" for ms of work: GFLOP/s where flops are counted (products and
 * convolutions), GB/s of the bound buffers (an upper bound on the traffic) */
static const char *rates(char *buf, size_t n, double flops, double bytes, double ms)
{
    char fl[24] = "-";
    if (flops > 0 && ms > 0) snprintf(fl, sizeof fl, "%.1f", flops / ms / 1e6);
    snprintf(buf, n, "%9s GFLOP/s %8.1f GB/s", fl, ms > 0 ? bytes / ms / 1e6 : 0.0);
    return buf;
}

void cli_profile_text(FILE *f, const profile_result *p, bool all, double median_ms)
{
    char r[64];
    fprintf(f, "GPU time:   %.3f ms in %u dispatches (timestamps after each dispatch)\n", p->total_ms, p->n_dispatches);
    /* what a run spends outside the recorded GPU work: submit, fence wait, upload, download
     * (the profiled run is a separate one, so a small negative difference is noise) */
    if (median_ms > 0)
        fprintf(f, "outside:    %.3f ms of the median run (%.1f%%): submit, wait, input upload, output download\n",
                median_ms - p->total_ms, 100 * (median_ms - p->total_ms) / median_ms);
    for (int k = 0; k < p->n_ops; k++)
        fprintf(f, "  %-24s %9.3f ms %5.1f%%  %4d dispatches %s\n", p->ops[k].op, p->ops[k].ms,
                p->total_ms > 0 ? 100 * p->ops[k].ms / p->total_ms : 0, p->ops[k].count,
                rates(r, sizeof r, p->ops[k].flops, p->ops[k].bytes, p->ops[k].ms));
    fprintf(f, "by kernel:\n");
    for (int k = 0; k < p->n_kernels && k < 12; k++)
        fprintf(f, "  %-24s %9.3f ms %5.1f%%  %4d dispatches %s\n", p->kernels[k].op, p->kernels[k].ms,
                p->total_ms > 0 ? 100 * p->kernels[k].ms / p->total_ms : 0, p->kernels[k].count,
                rates(r, sizeof r, p->kernels[k].flops, p->kernels[k].bytes, p->kernels[k].ms));
    fprintf(f, "slowest dispatches:\n");
    for (uint32_t i = 0; i < p->n_dispatches && i < 15; i++) {
        const vki_dispatch_profile *d = &p->dispatches[i];
        fprintf(f, "  %9.3f ms  %-22s %-18s %s  %s\n", d->gpu_ms, d->shader, d->op,
                rates(r, sizeof r, d->flops, d->bytes, d->gpu_ms), d->node);
    }
    if (!all) return;
    fprintf(f, "every dispatch, in recorded order:\n");
    for (uint32_t i = 0; i < p->n_dispatches; i++) {
        const vki_dispatch_profile *d = &p->in_order[i];
        fprintf(f, "  %5u %9.3f ms  %-22s %-18s %s  %s\n", i, d->gpu_ms, d->shader, d->op,
                rates(r, sizeof r, d->flops, d->bytes, d->gpu_ms), d->node);
    }
}

/* {"name": ms, ...}, slowest first */
static void json_ms_by_name(FILE *f, const op_time *t, int n)
{
    fprintf(f, "{");
    for (int k = 0; k < n; k++) {
        fprintf(f, "%s", k ? ", " : "");
        cli_fprint_json_string(f, t[k].op);
        fprintf(f, ": %.4f", t[k].ms);
    }
    fprintf(f, "}");
}

void cli_profile_json(FILE *f, const profile_result *p)
{
    fprintf(f, ", \"gpu_total_ms\": %.4f, \"gpu_ms_by_op\": ", p->total_ms);
    json_ms_by_name(f, p->ops, p->n_ops);
    fprintf(f, ", \"gpu_ms_by_kernel\": ");
    json_ms_by_name(f, p->kernels, p->n_kernels);
}

void cli_profile_free(profile_result *p)
{
    free(p->dispatches);
    free(p->ops);
    free(p->kernels);
    free(p->in_order);
    memset(p, 0, sizeof *p);
}

int cli_plot(const char *json_path, const char *png_path, const char *python)
{
    int fds[2];
    if (pipe(fds) != 0) {
        fprintf(stderr, "vkinfer: --plot: %s\n", strerror(errno));
        return 1;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "vkinfer: --plot: %s\n", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return 1;
    }
    if (pid == 0) {
        dup2(fds[0], STDIN_FILENO);
        close(fds[0]);
        close(fds[1]);
        execlp(python, python, "-", json_path, png_path, (char *)NULL);
        fprintf(stderr, "vkinfer: --plot needs %s (Debian: python3 and python3-matplotlib): %s\n", python, strerror(errno));
        _exit(127);
    }
    close(fds[0]);
    /* a python3 that is missing or dies early must not kill vkinfer with SIGPIPE */
    signal(SIGPIPE, SIG_IGN);
    /* the script is a few KiB, below the pipe's buffer, and python reads it all before running */
    size_t off = 0;
    while (off < plot_bench_py_len) {
        ssize_t w = write(fds[1], plot_bench_py + off, plot_bench_py_len - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    close(fds[1]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    /* the script or execlp said why on stderr */
    return 1;
}

/* ---- the bench command ---------------------------------------------------------------------- */

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy's default (linear) percentile of sorted values */
static double percentile(const double *sorted, long n, double q)
{
    double pos = q * (double)(n - 1);
    long lo = (long)pos;
    if (lo >= n - 1) return sorted[n - 1];
    return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * (pos - (double)lo);
}

/* Timed runs: `runs` of them, or as many as fit in duration_s. A progress line on stderr when it
 * is a terminal. Returns the times (ms, in run order) and their count, or NULL after an error. */
static double *timed_runs(vki_session *s, const run_options *o, long *count)
{
    long cap = o->duration_s > 0 ? 1024 : o->runs, n = 0;
    double *times = malloc((size_t)cap * sizeof *times);
    if (!times) {
        cli_lib_error("out of memory");
        return NULL;
    }
    bool progress = isatty(STDERR_FILENO);
    double start = cli_now_ms(), last_progress = 0;
    for (;;) {
        double elapsed = cli_now_ms() - start;
        if (o->duration_s > 0 ? n > 0 && elapsed >= o->duration_s * 1e3 : n >= o->runs) break;
        if (n == cap) {
            double *grown = realloc(times, (size_t)cap * 2 * sizeof *times);
            if (!grown) {
                free(times);
                cli_lib_error("out of memory");
                return NULL;
            }
            times = grown;
            cap *= 2;
        }
        double t0 = cli_now_ms();
        if (vki_session_run(s) != VKI_OK) {
            free(times);
            cli_lib_error("running the model");
            return NULL;
        }
        times[n++] = cli_now_ms() - t0;
        if (progress && cli_now_ms() - last_progress > 100) {
            last_progress = cli_now_ms();
            if (o->duration_s > 0)
                fprintf(stderr, "\rbench: %ld runs, %.1f / %.1f s, last %.3f ms   ", n, elapsed / 1e3, o->duration_s, times[n - 1]);
            else fprintf(stderr, "\rbench: run %ld / %ld, last %.3f ms   ", n, o->runs, times[n - 1]);
        }
    }
    if (progress) fprintf(stderr, "\r%60s\r", "");
    *count = n;
    return times;
}

typedef struct latency {
    double min, mean, median, p10, p90, p99, max, items_per_s;
    int64_t batch;
} latency;


static void write_bench_json(FILE *f, const run_options *o, const loaded *l, const vki_session_stats *st,
                             const vki_device_info *dev, double first_ms, const double *times, long n,
                             const latency *lat, const profile_result *pr)
{
    fprintf(f, "{\"model\": ");
    cli_fprint_json_string(f, o->model);
    fprintf(f, ", \"device\": ");
    cli_fprint_json_string(f, dev->name);
    if (l->cpu_threads >= 0) fprintf(f, ", \"cpu_threads\": %ld, \"cpu_threads_auto\": %s", l->cpu_threads, l->cpu_auto ? "true" : "false");
    fprintf(f, ", \"load_ms\": %.4f, \"session_ms\": %.4f, \"plan_ms\": %.4f, \"first_run_ms\": %.4f, "
               "\"min_ms\": %.4f, \"mean_ms\": %.4f, \"median_ms\": %.4f, \"p10_ms\": %.4f, \"p90_ms\": %.4f, "
               "\"p99_ms\": %.4f, \"max_ms\": %.4f, \"batch\": %lld, \"items_per_s\": %.4f, \"runs\": %ld, \"warmup\": %ld, "
               "\"duration_s\": %.4f, \"dispatches\": %u, \"weight_bytes\": %llu, \"intermediate_bytes\": %llu, \"times_ms\": [",
            l->load_ms, l->session_ms, st->plan_ms, first_ms, lat->min, lat->mean, lat->median, lat->p10, lat->p90, lat->p99,
            lat->max, (long long)lat->batch, lat->items_per_s, n, o->warmup, o->duration_s, st->dispatch_count,
            (unsigned long long)st->weight_bytes, (unsigned long long)st->intermediate_bytes);
    for (long i = 0; i < n; i++) fprintf(f, "%s%.4f", i ? ", " : "", times[i]);
    fprintf(f, "]");
    if (pr) {
        cli_profile_json(f, pr);
        fprintf(f, ", \"outside_ms\": %.4f", lat->median - pr->total_ms); /* median run minus the GPU's span */
    }
    fprintf(f, "}\n");
}

int cmd_bench(int argc, char **argv)
{
    run_options o;
    if (cli_parse_run_options("bench", argc, argv, true, &o)) return EXIT_USAGE;
    if (o.output_dir && cli_prepare_output_dir(o.output_dir)) return 1;
    loaded l;
    int rc = cli_load(&o, &l);
    int64_t batch = 1;
    if (!rc) rc = cli_set_inputs(l.model, l.session, &o, o.json, &batch);
    double first_ms = 0, *times = NULL;
    long n = 0;
    if (!rc) {
        double t0 = cli_now_ms();
        if (vki_session_run(l.session) != VKI_OK) rc = cli_lib_error("running the model");
        first_ms = cli_now_ms() - t0;
    }
    /* the first run's outputs, written before the runs that would overwrite them and outside the
     * timed ones; with --json the "wrote" lines go to stderr, leaving stdout one JSON object */
    if (!rc && o.output_dir) rc = cli_write_outputs(l.model, l.session, o.output_dir, o.json ? stderr : stdout);
    for (long i = 0; !rc && i < o.warmup; i++)
        if (vki_session_run(l.session) != VKI_OK) rc = cli_lib_error("running the model");
    if (!rc && !(times = timed_runs(l.session, &o, &n))) rc = 1;
    vki_session_stats stats = {0};
    vki_device_info dev = {0};
    if (!rc && vki_session_stats_get(l.session, &stats) != VKI_OK) rc = cli_lib_error("reading stats");
    if (!rc && vki_context_device_info(l.ctx, &dev) != VKI_OK) rc = cli_lib_error("reading the device");
    profile_result pr = {0};
    if (!rc && o.profile && cli_profile_collect(l.session, &pr)) rc = cli_lib_error("profiling");
    if (!rc) {
        double *sorted = malloc((size_t)n * sizeof *sorted);
        if (!sorted) {
            rc = cli_lib_error("out of memory");
            goto done;
        }
        memcpy(sorted, times, (size_t)n * sizeof *sorted);
        qsort(sorted, (size_t)n, sizeof *sorted, compare_doubles);
        latency lat = {.min = sorted[0], .max = sorted[n - 1], .median = percentile(sorted, n, 0.5),
                       .p10 = percentile(sorted, n, 0.1), .p90 = percentile(sorted, n, 0.9),
                       .p99 = percentile(sorted, n, 0.99), .batch = batch};
        double sum = 0;
        for (long i = 0; i < n; i++) sum += sorted[i];
        lat.mean = sum / (double)n;
        lat.items_per_s = lat.mean > 0 ? (double)lat.batch * 1e3 / lat.mean : 0;
        free(sorted);
        if (o.json) {
            write_bench_json(stdout, &o, &l, &stats, &dev, first_ms, times, n, &lat, o.profile ? &pr : NULL);
        } else {
            printf("model:      %s\ndevice:     %s\n", o.model, dev.name);
            char threads[200];
            if (*cli_cpu_threads_note(&l, &dev, threads, sizeof threads)) printf("cpu threads: %s\n", threads);
            printf("load:       %.2f ms\nsession:    %.2f ms (creation; includes the plan when every input shape is "
                   "declared)\nplan:       %.2f ms\nfirst run:  %.2f ms\n", l.load_ms, l.session_ms, stats.plan_ms, first_ms);
            printf("runs:       %ld timed after %ld warm-up (whole vki_session_run calls: upload + GPU + download)\n", n,
                   o.warmup);
            printf("latency:    min %.3f  mean %.3f  median %.3f  p90 %.3f  p99 %.3f  max %.3f ms\n", lat.min, lat.mean,
                   lat.median, lat.p90, lat.p99, lat.max);
            printf("throughput: %.1f items/s (batch %lld, from the mean)\n", lat.items_per_s, (long long)lat.batch);
            printf("plan:       %u dispatches; weights %.2f MiB, intermediates %.2f MiB\n", stats.dispatch_count,
                   (double)stats.weight_bytes / 1048576.0, (double)stats.intermediate_bytes / 1048576.0);
            if (o.profile) cli_profile_text(stdout, &pr, o.profile_all, lat.median);
        }
        if (o.plot) {
            char json_path[] = "/tmp/vkinfer-bench-XXXXXX";
            int fd = mkstemp(json_path);
            FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
            if (!f) {
                fprintf(stderr, "vkinfer: --plot: cannot create a temporary file: %s\n", strerror(errno));
                rc = 1;
            } else {
                write_bench_json(f, &o, &l, &stats, &dev, first_ms, times, n, &lat, &pr);
                rc = fclose(f) != 0 ? 1 : cli_plot(json_path, o.plot, o.python);
                unlink(json_path);
            }
        }
    }
done:
    cli_profile_free(&pr);
    free(times);
    cli_unload(&l);
    return rc;
}
