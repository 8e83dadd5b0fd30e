/* What `run` and `bench` share: their options (parsed in vkinfer.c), the model loaded into a
 * session (cli_load.c), the session's inputs (cli_inputs.c) and --output-dir (cli_run.c). */
#ifndef VKINFER_CLI_RUN_H
#define VKINFER_CLI_RUN_H

#include "vkinfer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MAX_INPUT_ARGS 256

typedef struct input_arg {
    const char *name, *path;
} input_arg;

typedef struct shape_arg {
    const char *name;
    int rank;
    int64_t dims[VKI_MAX_RANK];
} shape_arg;

typedef struct run_options {
    const char *model, *output_dir, *device, *plot;
    input_arg inputs[MAX_INPUT_ARGS];
    int n_inputs;
    shape_arg shapes[MAX_INPUT_ARGS];
    int n_shapes;
    bool random_inputs, json, profile, profile_all, fp16;
    uint64_t seed;
    long warmup, runs;
    double duration_s; /* > 0: time runs for this long instead of `runs` */
    long cpu_threads;  /* >= 0: LP_NUM_THREADS for lavapipe; -1: as the environment says */
    const char *option_names[MAX_INPUT_ARGS], *option_values[MAX_INPUT_ARGS]; /* --option NAME=VALUE */
    int n_options;
    /* the program's environment, read by cli_parse_run_options (the library reads its own
     * VKINFER_* options in src/util/options.c): LP_NUM_THREADS, lavapipe's thread count (NULL
     * unset), and VKINFER_PYTHON, the interpreter --plot runs (python3 unless set) */
    const char *lp_num_threads, *python;
} run_options;

/* Accepts "--opt value" and "--opt=value". Returns 0, or EXIT_USAGE after printing why. */
int cli_parse_run_options(const char *cmd, int argc, char **argv, bool bench, run_options *o);

typedef struct loaded {
    vki_context *ctx;
    vki_model *model;
    vki_session *session;
    double load_ms;
    double session_ms; /* includes the plan when every input shape is declared */
    long cpu_threads;  /* LP_NUM_THREADS as set here: --cpu-threads or the small-model choice; -1 not set */
    const char *lp_num_threads; /* LP_NUM_THREADS as the environment gave it (NULL: unset) */
    int cpu_auto;      /* how cpu_threads was chosen: CPU_CHOSEN_* (cli_load.c) */
} loaded;

/* Sets LP_NUM_THREADS (--cpu-threads, or the choice for small models and 2-core machines),
 * opens the device, loads the model and creates a session, timing the last two. Returns 0,
 * or 1 after saying why on stderr. */
int cli_load(const run_options *o, loaded *l);
void cli_unload(loaded *l);
/* How many lavapipe threads run the work, where the device is lavapipe: "" elsewhere. */
const char *cli_cpu_threads_note(const loaded *l, const vki_device_info *dev, char *buf, size_t size);

/* Reads the --input files, makes random inputs if asked, checks them against the model's
 * inputs and sets them on the session. *batch: the first dimension of the first input as
 * given (1 for a scalar), bench's "items". Returns 0, or 1 after saying why on stderr. */
int cli_set_inputs(vki_model *m, vki_session *s, const run_options *o, bool quiet, int64_t *batch);
/* Creates DIR (and missing parents) and checks it is writable, before the model is loaded, so
 * that a long plan or run does not end in "cannot write". Returns 0, or 1 after saying why. */
int cli_prepare_output_dir(const char *dir);
/* Writes each tensor output of the session's last run to DIR/<name>.npy (names sanitized;
 * sequences and optionals skipped) and a "wrote PATH" line each to `report`. Returns 0, or 1
 * after saying why on stderr. */
int cli_write_outputs(vki_model *m, vki_session *s, const char *dir, FILE *report);
/* dims as "[1,3,224,224]" */
void cli_format_dims(const int64_t *dims, int32_t rank, char *buf, size_t size);

#endif
