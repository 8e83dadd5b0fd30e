/* bench's GPU profile (time per op type, slowest dispatches) and its --plot. */
#ifndef VKINFER_CLI_BENCH_H
#define VKINFER_CLI_BENCH_H

#include "vkinfer.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct op_time {
    const char *op;
    double ms;
    int count;
    double flops, bytes; /* summed over its dispatches (vki_dispatch_profile's) */
} op_time;

typedef struct profile_result {
    vki_dispatch_profile *dispatches; /* slowest first */
    vki_dispatch_profile *in_order;   /* the same in recorded order */
    uint32_t n_dispatches;
    op_time *ops; /* slowest first */
    int n_ops;
    op_time *kernels; /* the same by shader (op_time.op names the shader), slowest first */
    int n_kernels;
    double total_ms;
} profile_result;

/* Turns profiling on and runs twice more (after the timed runs, which it does not touch); the
 * second run's timestamps are kept. Returns nonzero after a library error (vki_last_error). */
int cli_profile_collect(vki_session *s, profile_result *out);
/* `all`: every dispatch in recorded order after the summary (bench --profile-all) */
void cli_profile_text(FILE *f, const profile_result *p, bool all, double median_ms);
/* `, "gpu_total_ms": ..., "gpu_ms_by_op": {...}, "gpu_ms_by_kernel": {...}` inside the bench
 * JSON object (ms per op type and per shader, slowest first) */
void cli_profile_json(FILE *f, const profile_result *p);
void cli_profile_free(profile_result *p);

/* Draws FILE.png from the bench JSON with the embedded tools/plot_bench.py through `python`
 * (VKINFER_PYTHON, else python3). Returns 0, or 1 after saying why on stderr (no python3, no
 * matplotlib...). */
int cli_plot(const char *json_path, const char *png_path, const char *python);

#endif
