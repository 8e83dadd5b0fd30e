/* `vkinfer run`: runs a model once on .npy or random inputs, prints a summary of each output
 * and writes the tensors into --output-dir as .npy files (bench's --output-dir too). */
#include "cli.h"
#include "cli_run.h"
#include "npy.h"
#include "util/util.h" /* half_to_float, bf16_to_float */
#include "vkinfer.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static double element_as_double(vki_dtype dt, const void *data, size_t i)
{
    const uint8_t *p = data;
    switch (dt) {
    case VKI_DTYPE_FLOAT: { float f; memcpy(&f, p + 4 * i, 4); return f; }
    case VKI_DTYPE_FLOAT16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return half_to_float(h); }
    case VKI_DTYPE_BFLOAT16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return bf16_to_float(h); }
    case VKI_DTYPE_INT8: return (int8_t)p[i];
    case VKI_DTYPE_UINT8: case VKI_DTYPE_BOOL: return p[i];
    case VKI_DTYPE_INT16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case VKI_DTYPE_UINT16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case VKI_DTYPE_INT32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case VKI_DTYPE_INT64: { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    case VKI_DTYPE_DOUBLE: { double v; memcpy(&v, p + 8 * i, 8); return v; }
    case VKI_DTYPE_UINT32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case VKI_DTYPE_UINT64: { uint64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    case VKI_DTYPE_INT4: case VKI_DTYPE_INT2: return (int8_t)p[i];
    case VKI_DTYPE_UINT4: case VKI_DTYPE_UINT2: return p[i];
    default: return NAN;
    }
}

static void print_summary(const vki_tensor_info *info, const void *data, size_t bytes)
{
    size_t item = vki_dtype_size(info->dtype), count = item ? bytes / item : 0;
    bool is_float = info->dtype == VKI_DTYPE_FLOAT || info->dtype == VKI_DTYPE_FLOAT16 || info->dtype == VKI_DTYPE_BFLOAT16 ||
                    info->dtype == VKI_DTYPE_DOUBLE;
    if (!count) {
        printf("  (empty)\n");
        return;
    }
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    size_t nan = 0, inf = 0, finite = 0;
    for (size_t i = 0; i < count; i++) {
        double v = element_as_double(info->dtype, data, i);
        if (isnan(v)) { nan++; continue; }
        if (isinf(v)) inf++;
        else { sum += v; finite++; }
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    const char *fmt = is_float ? "%.6g" : "%.0f";
    printf("  min ");
    printf(fmt, lo);
    printf("  max ");
    printf(fmt, hi);
    printf("  mean %.6g", finite ? sum / (double)finite : NAN);
    if (nan || inf) printf("  (%zu NaN, %zu Inf)", nan, inf);
    printf("\n  first:");
    for (size_t i = 0; i < count && i < 8; i++) {
        printf(" ");
        printf(fmt, element_as_double(info->dtype, data, i));
    }
    printf("%s\n", count > 8 ? " ..." : "");
}

/* The file name of an output: every character outside [A-Za-z0-9._-] becomes '_'. */
static void output_file_name(const char *name, uint32_t index, char *buf, size_t size)
{
    size_t n = 0;
    for (const char *c = name; *c && n + 5 < size; c++) {
        bool ok = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '.' ||
                  *c == '_' || *c == '-';
        buf[n++] = ok ? *c : '_';
    }
    buf[n] = 0;
    if (!n || !strcmp(buf, ".") || !strcmp(buf, "..")) snprintf(buf, size, "output_%u", index);
    strcat(buf, ".npy");
}

/* A sequence or optional output: its tensors' summaries (not written by --output-dir). */
static int print_list_output(vki_session *s, uint32_t index, const vki_tensor_info *declared)
{
    int32_t count;
    if (vki_session_get_output_count(s, index, &count) != VKI_OK) return cli_lib_error("reading outputs");
    if (count < 0) {
        printf("output %s: none\n", declared->name);
        return 0;
    }
    bool seq = declared->kind == VKI_VALUE_SEQUENCE || declared->kind == VKI_VALUE_OPTIONAL_SEQUENCE;
    if (seq) printf("output %s: a sequence of %d tensor%s (not written by --output-dir)\n", declared->name, count, count == 1 ? "" : "s");
    for (int32_t k = 0; k < count; k++) {
        vki_tensor_info info;
        const void *data;
        size_t bytes;
        if (vki_session_get_output_element(s, index, (uint32_t)k, &info, &data, &bytes) != VKI_OK)
            return cli_lib_error("reading outputs");
        char shape[512];
        cli_format_dims(info.dims, info.rank, shape, sizeof shape);
        if (seq) printf("  [%d]: %s %s\n", k, vki_dtype_name(info.dtype), shape);
        else printf("output %s: %s %s (not written by --output-dir)\n", info.name, vki_dtype_name(info.dtype), shape);
        print_summary(&info, data, bytes);
    }
    return 0;
}

int cli_write_outputs(vki_model *m, vki_session *s, const char *dir, FILE *report)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "vkinfer: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    uint32_t n = vki_model_output_count(m);
    char (*names)[512] = calloc(n ? n : 1, sizeof *names);
    if (!names) return cli_lib_error("out of memory");
    int rc = 0;
    for (uint32_t i = 0; i < n && !rc; i++) {
        vki_tensor_info info;
        const void *data;
        size_t bytes;
        if (vki_model_output_info(m, i, &info) == VKI_OK && info.kind != VKI_VALUE_TENSOR) {
            snprintf(names[i], sizeof names[i], "output_%u.npy", i); /* no file: sequences and optionals */
            continue;
        }
        if (vki_session_get_output(s, i, &info, &data, &bytes) != VKI_OK) {
            rc = cli_lib_error("reading outputs");
            break;
        }
        output_file_name(info.name, i, names[i], sizeof names[i]);
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(names[i], names[j])) {
                fprintf(stderr, "vkinfer: outputs %u and %u both map to the file name %s; writing output %u as output_%u.npy\n",
                        j, i, names[i], i, i);
                snprintf(names[i], sizeof names[i], "output_%u.npy", i);
            }
        char path[4096], err[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (npy_write(path, info.dtype, info.dims, info.rank, data, bytes, err, sizeof err)) {
            fprintf(stderr, "vkinfer: %s\n", err);
            rc = 1;
        } else {
            fprintf(report, "wrote %s%s\n", path,
                    info.dtype == VKI_DTYPE_BFLOAT16 ? " (bfloat16 written as float32)" : "");
        }
    }
    free(names);
    return rc;
}

int cli_prepare_output_dir(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        fprintf(stderr, "vkinfer: --output-dir: path too long\n");
        return 1;
    }
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p) continue;
        char saved = *p;
        *p = 0;
        struct stat st;
        if (stat(path, &st) != 0) {
            if (mkdir(path, 0777) != 0) {
                fprintf(stderr, "vkinfer: cannot create the output directory %s: %s\n", path, strerror(errno));
                return 1;
            }
        } else if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "vkinfer: --output-dir %s: %s is not a directory\n", dir, path);
            return 1;
        }
        *p = saved;
        if (!saved) break;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "vkinfer: cannot write into the output directory %s: %s\n", dir, strerror(errno));
        return 1;
    }
    return 0;
}

int cmd_run(int argc, char **argv)
{
    run_options o;
    if (cli_parse_run_options("run", argc, argv, false, &o)) return EXIT_USAGE;
    if (o.output_dir && cli_prepare_output_dir(o.output_dir)) return 1;
    loaded l;
    int rc = cli_load(&o, &l);
    int64_t batch;
    if (!rc) rc = cli_set_inputs(l.model, l.session, &o, false, &batch);
    double first_ms = 0;
    if (!rc) {
        double t0 = cli_now_ms();
        if (vki_session_run(l.session) != VKI_OK) rc = cli_lib_error("running the model");
        first_ms = cli_now_ms() - t0;
    }
    vki_session_stats stats = {0};
    if (!rc && vki_session_stats_get(l.session, &stats) != VKI_OK) rc = cli_lib_error("reading stats");
    for (uint32_t i = 0; !rc && i < vki_model_output_count(l.model); i++) {
        vki_tensor_info info;
        const void *data;
        size_t bytes;
        if (vki_model_output_info(l.model, i, &info) == VKI_OK && info.kind != VKI_VALUE_TENSOR) {
            rc = print_list_output(l.session, i, &info);
            continue;
        }
        if (vki_session_get_output(l.session, i, &info, &data, &bytes) != VKI_OK) {
            rc = cli_lib_error("reading outputs");
            break;
        }
        char shape[512];
        cli_format_dims(info.dims, info.rank, shape, sizeof shape);
        printf("output %s: %s %s%s\n", info.name, vki_dtype_name(info.dtype), shape,
               info.dtype == VKI_DTYPE_BFLOAT16 && o.output_dir ? " (saved as float32: numpy has no bfloat16)" : "");
        print_summary(&info, data, bytes);
    }
    if (!rc && o.output_dir) rc = cli_write_outputs(l.model, l.session, o.output_dir, stdout);
    if (!rc) {
        vki_device_info dev;
        char threads[200];
        if (vki_context_device_info(l.ctx, &dev) == VKI_OK) {
            printf("device: %s\n", dev.name);
            if (*cli_cpu_threads_note(&l, &dev, threads, sizeof threads)) printf("cpu threads: %s\n", threads);
        }
        printf("time: load %.2f ms, session %.2f ms, plan %.2f ms (made with the session when every input shape is "
               "declared, else in the first run), first run %.2f ms, run %.2f ms\n",
               l.load_ms, l.session_ms, stats.plan_ms, first_ms, stats.last_run_ms);
        printf("plan: %u dispatches, %u GPU nodes, %u fused into their producer, %u folded at plan time, %u views; "
               "weights %.2f MiB, intermediates %.2f MiB\n",
               stats.dispatch_count, stats.gpu_node_count, stats.fused_node_count, stats.folded_node_count,
               stats.aliased_node_count,
               (double)stats.weight_bytes / 1048576.0, (double)stats.intermediate_bytes / 1048576.0);
    }
    cli_unload(&l);
    return rc;
}
