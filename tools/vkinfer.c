/* The vkinfer program's entry point: it sends each command to its file (tools/cli_<command>.c)
 * and parses the options that `run` and `bench` share. Other programs call it, so its options,
 * output files and --json fields are an interface. */
#include "cli.h"
#include "cli_run.h"
#include "vkinfer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int cli_lib_error(const char *what)
{
    fprintf(stderr, "vkinfer: %s: %s\n", what, vki_last_error());
    return 1;
}

double cli_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- options of run and bench ------------------------------------------------------------ */

/* "1x3x224x224" (a scalar: "" is not accepted, use a rank-0 .npy input instead) */
static bool parse_dims(const char *s, shape_arg *out)
{
    out->rank = 0;
    while (*s) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || v < 0 || out->rank == VKI_MAX_RANK || (*end && *end != 'x')) return false;
        out->dims[out->rank++] = v;
        s = *end ? end + 1 : end;
        if (*end && !*s) return false;
    }
    return out->rank > 0;
}

static bool parse_count(const char *s, long min, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min) return false;
    *out = v;
    return true;
}

int cli_parse_run_options(const char *cmd, int argc, char **argv, bool bench, run_options *o)
{
    memset(o, 0, sizeof *o);
    o->warmup = 10;
    o->runs = 50;
    o->cpu_threads = -1;
    /* lavapipe takes its thread count only from the process's environment, and --plot's
     * interpreter belongs to it as PATH does: the program's two variables, read here only */
    o->lp_num_threads = getenv("LP_NUM_THREADS");
    o->python = getenv("VKINFER_PYTHON");
    if (!o->python || !*o->python) o->python = "python3";
    for (int i = 0; i < argc; i++) {
        char *arg = argv[i], *value = NULL;
        char opt[64];
        if (!strncmp(arg, "--", 2)) {
            char *eq = strchr(arg, '=');
            size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
            if (len >= sizeof opt) return cli_usage_error(cmd, "unknown option '%s'", arg);
            memcpy(opt, arg, len);
            opt[len] = 0;
            if (eq) value = eq + 1;
        } else {
            if (o->model) return cli_usage_error(cmd, "unexpected argument '%s' (one model only)", arg);
            o->model = arg;
            continue;
        }
        bool takes_value = !strcmp(opt, "--input") || !strcmp(opt, "--output-dir") || !strcmp(opt, "--device") ||
                           !strcmp(opt, "--seed") || !strcmp(opt, "--shape") || !strcmp(opt, "--precision") ||
                           !strcmp(opt, "--cpu-threads") || !strcmp(opt, "--option") ||
                           (bench && (!strcmp(opt, "--warmup") || !strcmp(opt, "--runs") || !strcmp(opt, "--duration") ||
                                      !strcmp(opt, "--plot")));
        if (takes_value && !value) {
            if (i + 1 >= argc) return cli_usage_error(cmd, "%s needs a value", opt);
            value = argv[++i];
        } else if (!takes_value && value) {
            return cli_usage_error(cmd, "%s takes no value", opt);
        }
        if (!strcmp(opt, "--input")) {
            char *eq = strchr(value, '=');
            if (!eq || eq == value || !eq[1]) return cli_usage_error(cmd, "--input takes NAME=FILE.npy, got '%s'", value);
            if (o->n_inputs == MAX_INPUT_ARGS) return cli_usage_error(cmd, "more than %d --input options", MAX_INPUT_ARGS);
            *eq = 0;
            o->inputs[o->n_inputs++] = (input_arg){value, eq + 1};
        } else if (!strcmp(opt, "--option")) {
            char *eq = strchr(value, '=');
            if (!eq || eq == value)
                return cli_usage_error(cmd, "--option takes NAME=VALUE (see `vkinfer options`), got '%s'", value);
            if (o->n_options == MAX_INPUT_ARGS)
                return cli_usage_error(cmd, "more than %d --option options", MAX_INPUT_ARGS);
            *eq = 0;
            o->option_names[o->n_options] = value;
            o->option_values[o->n_options++] = eq + 1;
        } else if (!strcmp(opt, "--shape")) {
            char *eq = strchr(value, '=');
            if (!eq || eq == value) return cli_usage_error(cmd, "--shape takes NAME=DIMS (e.g. x=1x3x224x224), got '%s'", value);
            if (o->n_shapes == MAX_INPUT_ARGS) return cli_usage_error(cmd, "more than %d --shape options", MAX_INPUT_ARGS);
            *eq = 0;
            shape_arg *sh = &o->shapes[o->n_shapes++];
            sh->name = value;
            if (!parse_dims(eq + 1, sh))
                return cli_usage_error(cmd, "--shape %s=%s: dimensions are non-negative integers joined by 'x' (at most %d)",
                                       value, eq + 1, VKI_MAX_RANK);
        } else if (bench && !strcmp(opt, "--duration")) {
            char *end;
            errno = 0;
            o->duration_s = strtod(value, &end);
            if (errno || end == value || *end || !(o->duration_s > 0) || o->duration_s > 1e6)
                return cli_usage_error(cmd, "--duration takes a number of seconds > 0");
        } else if (bench && !strcmp(opt, "--plot")) {
            o->plot = value;
            o->profile = true;
        } else if (!strcmp(opt, "--output-dir")) {
            o->output_dir = value;
        } else if (!strcmp(opt, "--device")) {
            o->device = value;
        } else if (!strcmp(opt, "--precision")) {
            if (strcmp(value, "fp32") && strcmp(value, "fp16"))
                return cli_usage_error(cmd, "--precision takes fp32 or fp16, got '%s'", value);
            o->fp16 = !strcmp(value, "fp16");
        } else if (!strcmp(opt, "--cpu-threads")) {
            if (!parse_count(value, 0, &o->cpu_threads) || o->cpu_threads > 64)
                return cli_usage_error(cmd, "--cpu-threads takes an integer from 0 to 64");
        } else if (!strcmp(opt, "--seed")) {
            char *end;
            errno = 0;
            o->seed = strtoull(value, &end, 10);
            if (errno || end == value || *end) return cli_usage_error(cmd, "--seed takes a non-negative integer");
        } else if (!strcmp(opt, "--random-inputs")) {
            o->random_inputs = true;
        } else if (bench && !strcmp(opt, "--json")) {
            o->json = true;
        } else if (bench && !strcmp(opt, "--profile")) {
            o->profile = true;
        } else if (bench && !strcmp(opt, "--profile-all")) {
            o->profile = o->profile_all = true;
        } else if (bench && !strcmp(opt, "--warmup")) {
            if (!parse_count(value, 0, &o->warmup)) return cli_usage_error(cmd, "--warmup takes an integer >= 0");
        } else if (bench && !strcmp(opt, "--runs")) {
            if (!parse_count(value, 1, &o->runs)) return cli_usage_error(cmd, "--runs takes an integer >= 1");
        } else {
            return cli_usage_error(cmd, "unknown option '%s'", arg);
        }
    }
    if (!o->model) return cli_usage_error(cmd, "no model given");
    for (int a = 0; a < o->n_shapes; a++) {
        for (int b = 0; b < a; b++)
            if (!strcmp(o->shapes[a].name, o->shapes[b].name)) return cli_usage_error(cmd, "--shape %s is given twice", o->shapes[a].name);
        for (int b = 0; b < o->n_inputs; b++)
            if (!strcmp(o->shapes[a].name, o->inputs[b].name))
                return cli_usage_error(cmd, "input '%s' has both --input and --shape (the file's shape is used)", o->shapes[a].name);
    }
    if (o->n_shapes && !o->random_inputs) return cli_usage_error(cmd, "--shape sets the shape of random inputs: add --random-inputs");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(cli_overview, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("vkinfer %s\n", vki_version());
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        if (argc == 2) {
            fputs(cli_overview, stdout);
            return 0;
        }
        const char *page = cli_command_help(argv[2]);
        if (!page) return cli_usage_error(NULL, "help: no command '%s'", argv[2]);
        fputs(page, stdout);
        return 0;
    }
    const char *page = cli_command_help(cmd);
    if (page && cli_wants_help(argc - 2, argv + 2)) {
        fputs(page, stdout);
        return 0;
    }
    if (!strcmp(cmd, "devices")) return argc == 2 ? cmd_devices() : cli_usage_error("devices", "takes no arguments");
    if (!strcmp(cmd, "ops")) return cmd_ops(argc - 2, argv + 2);
    if (!strcmp(cmd, "options")) return cmd_options(argc - 2, argv + 2);
    if (!strcmp(cmd, "info") || !strcmp(cmd, "inspect")) return cmd_info(argc - 2, argv + 2);
    if (!strcmp(cmd, "run")) return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench")) return cmd_bench(argc - 2, argv + 2);
    return cli_usage_error(NULL, "unknown command '%s'", cmd);
}
