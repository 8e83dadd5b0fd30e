/* bench's GPU profile and --plot. The plot is drawn by tools/plot_bench.py, embedded in the
 * program at build time and fed to `python3 -`: the C program needs no plotting library, the
 * script finds matplotlib where the user has it, and the same script runs on saved JSON. */
#include "cli_bench.h"
#include "cli.h"

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

void cli_profile_json(FILE *f, const profile_result *p)
{
    fprintf(f, ", \"gpu_total_ms\": %.4f, \"gpu_ms_by_op\": {", p->total_ms);
    for (int k = 0; k < p->n_ops; k++) {
        fprintf(f, "%s", k ? ", " : "");
        cli_fprint_json_string(f, p->ops[k].op);
        fprintf(f, ": %.4f", p->ops[k].ms);
    }
    fprintf(f, "}");
}

void cli_profile_free(profile_result *p)
{
    free(p->dispatches);
    free(p->ops);
    free(p->kernels);
    free(p->in_order);
    memset(p, 0, sizeof *p);
}

int cli_plot(const char *json_path, const char *png_path)
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
        /* the interpreter this program starts, not a setting of the library: like PATH, which
         * execlp searches, it belongs to the program's environment */
        const char *python = getenv("VKINFER_PYTHON");
        if (!python || !*python) python = "python3";
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
