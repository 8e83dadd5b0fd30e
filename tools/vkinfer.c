/* The vkinfer command: list devices and ops, run a model on .npy inputs, and benchmark it.
 * Other programs call it, so its options, output files and --json fields are an interface. */
#include "cli.h"
#include "cli_bench.h"
#include "npy.h"
#include "vkinfer.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int lib_error(const char *what)
{
    fprintf(stderr, "vkinfer: %s: %s\n", what, vki_last_error());
    return 1;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- devices and ops ------------------------------------------------------------------- */

static void print_bytes(uint64_t b)
{
    if (b >= (1ull << 30)) printf("%.1f GiB", (double)b / (double)(1ull << 30));
    else printf("%.0f MiB", (double)b / (double)(1ull << 20));
}

static int cmd_devices(void)
{
    uint32_t n = 0;
    if (vki_device_list(NULL, 0, &n) != VKI_OK) return lib_error("listing devices");
    vki_device_info *infos = calloc(n ? n : 1, sizeof *infos);
    if (!infos) return lib_error("out of memory");
    if (vki_device_list(infos, n, &n) != VKI_OK) {
        free(infos);
        return lib_error("listing devices");
    }
    for (uint32_t i = 0; i < n; i++) {
        const vki_device_info *d = &infos[i];
        printf("%c %u: %s (%s)\n", d->is_default ? '*' : ' ', d->index, d->name, d->type);
        printf("    driver: %s %s, Vulkan %u.%u.%u, vendor 0x%04x device 0x%04x\n", d->driver_name, d->driver_info,
               d->api_version >> 22, (d->api_version >> 12) & 0x3ff, d->api_version & 0xfff, d->vendor_id, d->device_id);
        printf("    device-local memory: ");
        print_bytes(d->device_local_bytes);
        printf(", maxStorageBufferRange: ");
        print_bytes(d->max_storage_buffer_range);
        printf(" (%llu bytes)\n", (unsigned long long)d->max_storage_buffer_range);
        printf("    workgroup: %u invocations, %u bytes shared; subgroup size: ", d->max_workgroup_invocations,
               d->max_shared_memory_bytes);
        if (d->subgroup_size) printf("%u\n", d->subgroup_size);
        else printf("unknown\n");
        printf("    fp16 arithmetic: %s, 16-bit storage: %s, 8-bit storage: %s, cooperative matrix: %s, float64: %s\n",
               d->fp16_arithmetic ? "yes" : "no", d->storage_16bit ? "yes" : "no", d->storage_8bit ? "yes" : "no",
               d->cooperative_matrix ? "yes" : "no", d->shader_float64 ? "yes" : "no");
    }
    if (!n) printf("no Vulkan devices\n");
    free(infos);
    return 0;
}

static int cmd_ops(int argc, char **argv)
{
    bool markdown = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--markdown")) markdown = true;
        else return cli_usage_error("ops", "unknown option '%s'", argv[i]);
    }
    uint32_t n = vki_op_count();
    if (markdown) printf("| Op | Dtypes | Notes |\n|---|---|---|\n");
    for (uint32_t i = 0; i < n; i++) {
        vki_op_info op;
        if (vki_op_get(i, &op) != VKI_OK) return lib_error("reading the op table");
        char name[256];
        snprintf(name, sizeof name, "%s%s%s", op.domain ? op.domain : "", op.domain && *op.domain ? "." : "", op.name);
        if (markdown) {
            printf("| ");
            cli_print_md_cell(name);
            printf(" | ");
            cli_print_md_cell(op.dtypes ? op.dtypes : "");
            printf(" | ");
            cli_print_md_cell(op.notes ? op.notes : "");
            printf(" |\n");
        } else {
            if (op.notes && *op.notes) printf("%-22s %-44s %s\n", name, op.dtypes ? op.dtypes : "", op.notes);
            else printf("%-22s %s\n", name, op.dtypes ? op.dtypes : "");
        }
    }
    if (!markdown) printf("%u ops\n", n);
    return 0;
}

/* ---- options of run and bench ------------------------------------------------------------ */

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
} run_options;

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

/* Accepts "--opt value" and "--opt=value". Returns 0, or EXIT_USAGE after printing why. */
static int parse_run_options(const char *cmd, int argc, char **argv, bool bench, run_options *o)
{
    memset(o, 0, sizeof *o);
    o->warmup = 10;
    o->runs = 50;
    o->cpu_threads = -1;
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
        } else if (!strcmp(opt, "--output-dir") && !bench) {
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

/* ---- inputs ---------------------------------------------------------------------------- */

static void format_shape(const vki_tensor_info *t, char *buf, size_t size)
{
    if (t->rank < 0) {
        snprintf(buf, size, "(any shape)");
        return;
    }
    size_t o = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < t->rank && o < size; d++) {
        const char *sep = d ? "," : "";
        if (t->dims[d] >= 0) o += (size_t)snprintf(buf + o, size - o, "%s%lld", sep, (long long)t->dims[d]);
        else o += (size_t)snprintf(buf + o, size - o, "%s%s", sep, t->dim_names[d] ? t->dim_names[d] : "?");
    }
    if (o < size) snprintf(buf + o, size - o, "]");
}

static void format_dims(const int64_t *dims, int32_t rank, char *buf, size_t size)
{
    vki_tensor_info t = {.rank = rank};
    memcpy(t.dims, dims, (size_t)(rank > 0 ? rank : 0) * sizeof *dims);
    format_shape(&t, buf, size);
}

static void print_expected_inputs(const vki_model *m)
{
    uint32_t n = vki_model_input_count(m);
    fprintf(stderr, "the model expects %u input%s:\n", n, n == 1 ? "" : "s");
    for (uint32_t i = 0; i < n; i++) {
        vki_tensor_info t;
        char shape[512];
        if (vki_model_input_info(m, i, &t) != VKI_OK) continue;
        format_shape(&t, shape, sizeof shape);
        static const char *const kinds[4] = {"", "sequence of ", "optional ", "optional sequence of "};
        fprintf(stderr, "  %s: %s%s %s\n", t.name, kinds[t.kind & 3], vki_dtype_name(t.dtype), shape);
    }
}

static int input_error(const vki_model *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "vkinfer: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    print_expected_inputs(m);
    return 1;
}

static uint64_t next_random(uint64_t *state) /* splitmix64 */
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 255, man = x & 0x7fffff;
    int e = (int)exp - 127 + 15;
    if (exp == 255 || e >= 31) return (uint16_t)(sign | 0x7c00 | (exp == 255 && man ? 0x200 : 0));
    if (e <= 0) { /* subnormal or zero; random inputs in [-1,1) rarely land here */
        if (e < -10) return (uint16_t)sign;
        return (uint16_t)(sign | ((man | 0x800000) >> (14 - e)));
    }
    uint32_t h = sign | ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
    return (uint16_t)h;
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023;
    float mag = exp == 0 ? ldexpf((float)man, -24) : exp == 31 ? (man ? NAN : INFINITY) : ldexpf((float)(man | 1024), (int)exp - 25);
    return sign ? -mag : mag;
}

static float bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* round to nearest even, as PyTorch's .to(torch.bfloat16) */
static uint16_t float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* Uniform floats in [-1,1), integers in [0,10), random bools, of the shape --shape gives
 * (checked against the model before) or the declared one with symbolic dims 1. */
static int make_random_input(const vki_tensor_info *t, const shape_arg *shape, uint64_t *rng, npy_array *out)
{
    memset(out, 0, sizeof *out);
    if (t->rank < 0 && !shape) return -1;
    out->dtype = t->dtype;
    out->rank = shape ? shape->rank : t->rank;
    size_t count = 1, item = vki_dtype_size(t->dtype);
    for (int d = 0; d < out->rank; d++) {
        out->dims[d] = shape ? shape->dims[d] : t->dims[d] >= 0 ? t->dims[d] : 1;
        if (out->dims[d] > 0 && count > ((size_t)1 << 40) / (size_t)out->dims[d]) return -1;
        count *= (size_t)out->dims[d];
    }
    out->bytes = count * item;
    uint8_t *p = malloc(out->bytes ? out->bytes : 1);
    if (!p) return -1;
    out->data = p;
    for (size_t i = 0; i < count; i++) {
        uint64_t r = next_random(rng);
        float f = (float)((double)(r >> 11) * 0x1.0p-53 * 2.0 - 1.0);
        int64_t v = (int64_t)(r % 10);
        switch (t->dtype) {
        case VKI_DTYPE_FLOAT: memcpy(p + 4 * i, &f, 4); break;
        case VKI_DTYPE_FLOAT16: { uint16_t h = float_to_half(f); memcpy(p + 2 * i, &h, 2); break; }
        case VKI_DTYPE_BFLOAT16: { uint32_t b; memcpy(&b, &f, 4); uint16_t h = (uint16_t)(b >> 16); memcpy(p + 2 * i, &h, 2); break; }
        case VKI_DTYPE_BOOL: p[i] = (uint8_t)(r >> 63); break;
        case VKI_DTYPE_INT8: case VKI_DTYPE_UINT8: p[i] = (uint8_t)v; break;
        case VKI_DTYPE_INT16: case VKI_DTYPE_UINT16: { uint16_t h = (uint16_t)v; memcpy(p + 2 * i, &h, 2); break; }
        case VKI_DTYPE_INT32: { int32_t w = (int32_t)v; memcpy(p + 4 * i, &w, 4); break; }
        case VKI_DTYPE_INT64: case VKI_DTYPE_UINT64: memcpy(p + 8 * i, &v, 8); break;
        case VKI_DTYPE_UINT32: { uint32_t w = (uint32_t)v; memcpy(p + 4 * i, &w, 4); break; }
        case VKI_DTYPE_DOUBLE: { double d = f; memcpy(p + 8 * i, &d, 8); break; }
        case VKI_DTYPE_INT4: case VKI_DTYPE_UINT4: p[i] = (uint8_t)(v % 8); break;
        case VKI_DTYPE_INT2: p[i] = (uint8_t)(v % 2); break;
        case VKI_DTYPE_UINT2: p[i] = (uint8_t)(v % 4); break;
        default: return -1; /* float8/float4: give them with --input */
        }
    }
    return 0;
}

/* Reads the --input files, makes random inputs if asked, checks them against the model's
 * inputs and sets them on the session. */
/* *batch: the first dimension of the first input as given (1 for a scalar), bench's "items". */
static int set_inputs(vki_model *m, vki_session *s, const run_options *o, bool quiet, int64_t *batch)
{
    *batch = 1;
    uint32_t n = vki_model_input_count(m);
    for (int a = 0; a < o->n_inputs; a++) {
        for (int b = 0; b < a; b++)
            if (!strcmp(o->inputs[a].name, o->inputs[b].name))
                return input_error(m, "input '%s' is given twice", o->inputs[a].name);
        bool known = false;
        for (uint32_t i = 0; i < n; i++) {
            vki_tensor_info t;
            if (vki_model_input_info(m, i, &t) == VKI_OK && !strcmp(t.name, o->inputs[a].name)) known = true;
        }
        if (!known) return input_error(m, "the model has no input '%s'", o->inputs[a].name);
    }
    for (int a = 0; a < o->n_shapes; a++) {
        const shape_arg *sh = &o->shapes[a];
        vki_tensor_info t;
        bool found = false;
        for (uint32_t i = 0; i < n && !found; i++)
            found = vki_model_input_info(m, i, &t) == VKI_OK && !strcmp(t.name, sh->name);
        if (!found) return input_error(m, "--shape: the model has no input '%s'", sh->name);
        bool fits = t.rank < 0 || t.rank == sh->rank;
        for (int d = 0; fits && t.rank >= 0 && d < sh->rank; d++) fits = t.dims[d] < 0 || t.dims[d] == sh->dims[d];
        char want[512], got[512];
        format_shape(&t, want, sizeof want);
        format_dims(sh->dims, sh->rank, got, sizeof got);
        if (!fits) return input_error(m, "--shape %s=%s does not fit the model's %s", sh->name, got, want);
    }
    uint64_t rng = o->seed ^ 0x5eed5eed5eedull;
    for (uint32_t i = 0; i < n; i++) {
        vki_tensor_info t;
        if (vki_model_input_info(m, i, &t) != VKI_OK) return lib_error("reading the model's inputs");
        char want[512], got[512];
        format_shape(&t, want, sizeof want);
        const input_arg *given = NULL;
        for (int a = 0; a < o->n_inputs; a++)
            if (!strcmp(o->inputs[a].name, t.name)) given = &o->inputs[a];
        if (t.kind == VKI_VALUE_SEQUENCE || (t.kind == VKI_VALUE_OPTIONAL_SEQUENCE && given))
            return input_error(m, "input '%s' is a sequence of tensors: `vkinfer run` and `bench` take tensor inputs "
                               "only (set sequences with the C or Python API)", t.name);
        if (t.kind == VKI_VALUE_OPTIONAL_SEQUENCE || (t.kind == VKI_VALUE_OPTIONAL && !given)) {
            if (!quiet) printf("input %s: none (an optional input not given)\n", t.name);
            continue; /* an optional input left unset is none */
        }
        npy_array arr;
        if (given) {
            char err[1024];
            if (npy_read(given->path, &arr, err, sizeof err)) return input_error(m, "input '%s': %s", t.name, err);
        } else if (o->random_inputs) {
            const shape_arg *shape = NULL;
            for (int a = 0; a < o->n_shapes; a++)
                if (!strcmp(o->shapes[a].name, t.name)) shape = &o->shapes[a];
            if (!shape)
                for (int d = 0; d < t.rank; d++)
                    if (t.dims[d] < 0) {
                        /* said aloud: a dynamic-batch model silently timed at batch 1 misleads */
                        fprintf(stderr, "vkinfer: input '%s' has symbolic dimensions, set to 1 (choose with --shape %s=...)\n",
                                t.name, t.name);
                        break;
                    }
            if (make_random_input(&t, shape, &rng, &arr))
                return input_error(m, "cannot make a random input '%s' (%s %s): give it with --input", t.name,
                                   vki_dtype_name(t.dtype), want);
            if (!quiet) {
                format_dims(arr.dims, arr.rank, got, sizeof got);
                printf("input %s: random %s %s (seed %llu)\n", t.name, vki_dtype_name(arr.dtype), got,
                       (unsigned long long)o->seed);
            }
        } else {
            return input_error(m, "input '%s' was not given (use --input %s=FILE.npy or --random-inputs)", t.name, t.name);
        }
        format_dims(arr.dims, arr.rank, got, sizeof got);
        if (arr.dtype == VKI_DTYPE_FLOAT && t.dtype == VKI_DTYPE_BFLOAT16) {
            /* numpy has no bfloat16: a float32 file is rounded to it (outputs are written the other way) */
            uint16_t *h = (uint16_t *)arr.data;
            const float *f = (const float *)arr.data;
            size_t count = arr.bytes / 4;
            for (size_t k = 0; k < count; k++) h[k] = float_to_bf16(f[k]);
            arr.dtype = VKI_DTYPE_BFLOAT16;
            arr.bytes = count * 2;
        }
        /* numpy has no 4-/2-bit or float8 dtypes: int8/uint8 files hold the values (int4,
         * uint4, int2, uint2) or the format's codes (float8, float4e2m1), as outputs are written */
        bool small_int = t.dtype == VKI_DTYPE_INT4 || t.dtype == VKI_DTYPE_INT2 || t.dtype == VKI_DTYPE_UINT4 ||
                         t.dtype == VKI_DTYPE_UINT2;
        bool small_signed = t.dtype == VKI_DTYPE_INT4 || t.dtype == VKI_DTYPE_INT2;
        bool codes = t.dtype == VKI_DTYPE_FLOAT8E4M3FN || t.dtype == VKI_DTYPE_FLOAT8E4M3FNUZ ||
                     t.dtype == VKI_DTYPE_FLOAT8E5M2 || t.dtype == VKI_DTYPE_FLOAT8E5M2FNUZ || t.dtype == VKI_DTYPE_FLOAT4E2M1 ||
                     t.dtype == VKI_DTYPE_FLOAT8E8M0 || t.dtype == VKI_DTYPE_FLOAT6E2M3 || t.dtype == VKI_DTYPE_FLOAT6E3M2;
        if ((small_int && arr.dtype == (small_signed ? VKI_DTYPE_INT8 : VKI_DTYPE_UINT8)) ||
            (codes && arr.dtype == VKI_DTYPE_UINT8)) {
            int bits = t.dtype == VKI_DTYPE_INT2 || t.dtype == VKI_DTYPE_UINT2 ? 2 : 4;
            int lo = small_signed ? -(1 << (bits - 1)) : 0, hi = small_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
            if (codes)
                lo = 0, hi = t.dtype == VKI_DTYPE_FLOAT4E2M1 ? 15
                             : t.dtype == VKI_DTYPE_FLOAT6E2M3 || t.dtype == VKI_DTYPE_FLOAT6E3M2 ? 63 : 255;
            for (size_t k = 0; k < arr.bytes; k++) {
                const uint8_t *bytes = arr.data;
                int v = small_signed ? (int8_t)bytes[k] : bytes[k];
                if (v < lo || v > hi) {
                    npy_free(&arr);
                    return input_error(m, "input '%s' (%s, given as %s) holds %d at index %zu, outside %d..%d", t.name,
                                       vki_dtype_name(t.dtype), small_signed ? "int8" : "uint8", v, k, lo, hi);
                }
            }
            arr.dtype = t.dtype;
        }
        if (arr.dtype != t.dtype) {
            npy_free(&arr);
            return input_error(m, "input '%s' is %s, the model expects %s (convert with numpy's astype)", t.name,
                               vki_dtype_name(arr.dtype), vki_dtype_name(t.dtype));
        }
        bool fits = t.rank < 0 || t.rank == arr.rank;
        for (int d = 0; fits && d < arr.rank && t.rank >= 0; d++) fits = t.dims[d] < 0 || t.dims[d] == arr.dims[d];
        if (!fits) {
            npy_free(&arr);
            return input_error(m, "input '%s' has shape %s, the model expects %s", t.name, got, want);
        }
        if (i == 0 && arr.rank > 0) *batch = arr.dims[0];
        vki_status st = vki_session_set_input(s, t.name, arr.dtype, arr.dims, arr.rank, arr.data, arr.bytes);
        npy_free(&arr);
        if (st != VKI_OK) return input_error(m, "input '%s': %s", t.name, vki_last_error());
    }
    return 0;
}

/* ---- outputs --------------------------------------------------------------------------- */

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
    if (vki_session_get_output_count(s, index, &count) != VKI_OK) return lib_error("reading outputs");
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
            return lib_error("reading outputs");
        char shape[512];
        format_dims(info.dims, info.rank, shape, sizeof shape);
        if (seq) printf("  [%d]: %s %s\n", k, vki_dtype_name(info.dtype), shape);
        else printf("output %s: %s %s (not written by --output-dir)\n", info.name, vki_dtype_name(info.dtype), shape);
        print_summary(&info, data, bytes);
    }
    return 0;
}

static int write_outputs(vki_model *m, vki_session *s, const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "vkinfer: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    uint32_t n = vki_model_output_count(m);
    char (*names)[512] = calloc(n ? n : 1, sizeof *names);
    if (!names) return lib_error("out of memory");
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
            rc = lib_error("reading outputs");
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
            printf("wrote %s%s\n", path, info.dtype == VKI_DTYPE_BFLOAT16 ? " (bfloat16 written as float32)" : "");
        }
    }
    free(names);
    return rc;
}

/* ---- run and bench ------------------------------------------------------------------------ */

typedef struct loaded {
    vki_context *ctx;
    vki_model *model;
    vki_session *session;
    double load_ms;
    double session_ms; /* includes the plan when every input shape is declared */
    long cpu_threads;  /* LP_NUM_THREADS as set here: --cpu-threads or the small-model choice; -1 not set */
    int cpu_auto;      /* how cpu_threads was chosen: CPU_CHOSEN_* */
} loaded;

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

static void unload(loaded *l)
{
    vki_session_destroy(l->session);
    vki_model_destroy(l->model);
    vki_context_destroy(l->ctx);
}

/* How many lavapipe threads run the work, where the device is lavapipe: "" elsewhere. */
static const char *cpu_threads_note(const loaded *l, const vki_device_info *dev, char *buf, size_t size)
{
    if (!dev->type || strcmp(dev->type, "cpu")) return "";
    /* lavapipe takes its thread count only from the process's environment, so that is where
     * the count a user set is found (the library's options cannot carry it) */
    const char *env = getenv("LP_NUM_THREADS");
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

static int load(const run_options *o, loaded *l)
{
    memset(l, 0, sizeof *l);
    /* lavapipe reads LP_NUM_THREADS from the environment when the context's Vulkan instance
     * finds it, so the program reads and sets it there, not through the library's options; it
     * has one thread here, so setting the environment is safe (the library never does) */
    l->cpu_threads = o->cpu_threads;
    if (l->cpu_threads < 0 && !getenv("LP_NUM_THREADS")) {
        if (auto_inline(o->model)) l->cpu_threads = 0, l->cpu_auto = CPU_CHOSEN_INLINE;
        else if (sysconf(_SC_NPROCESSORS_ONLN) == 2) l->cpu_threads = 4, l->cpu_auto = CPU_CHOSEN_TWO_PER_CORE;
    }
    if (l->cpu_threads >= 0) {
        char n[24];
        snprintf(n, sizeof n, "%ld", l->cpu_threads);
        if (setenv("LP_NUM_THREADS", n, 1)) return lib_error("setting LP_NUM_THREADS");
    }
    vki_context_options opts = {.device = o->device, .validation = -1, .cache_dir = NULL};
    size_t n_options = (size_t)o->n_options;
    if (vki_context_create_with_options(&opts, o->option_names, o->option_values, n_options, &l->ctx) != VKI_OK)
        return lib_error("opening the Vulkan device");
    double t0 = now_ms();
    if (vki_model_load(l->ctx, o->model, &l->model) != VKI_OK) return lib_error("loading the model");
    l->load_ms = now_ms() - t0;
    t0 = now_ms();
    vki_session_options sopts = {o->fp16 ? VKI_PRECISION_FP16 : VKI_PRECISION_DEFAULT};
    if (vki_session_create_with_options(l->model, &sopts, &l->session) != VKI_OK) return lib_error("creating a session");
    l->session_ms = now_ms() - t0;
    return 0;
}

/* Creates DIR (and missing parents) and checks it is writable, before any inference, so that a
 * long run does not end in "cannot write". */
static int prepare_output_dir(const char *dir)
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

static int cmd_run(int argc, char **argv)
{
    run_options o;
    if (parse_run_options("run", argc, argv, false, &o)) return EXIT_USAGE;
    if (o.output_dir && prepare_output_dir(o.output_dir)) return 1;
    loaded l;
    int rc = load(&o, &l);
    int64_t batch;
    if (!rc) rc = set_inputs(l.model, l.session, &o, false, &batch);
    double first_ms = 0;
    if (!rc) {
        double t0 = now_ms();
        if (vki_session_run(l.session) != VKI_OK) rc = lib_error("running the model");
        first_ms = now_ms() - t0;
    }
    vki_session_stats stats = {0};
    if (!rc && vki_session_stats_get(l.session, &stats) != VKI_OK) rc = lib_error("reading stats");
    for (uint32_t i = 0; !rc && i < vki_model_output_count(l.model); i++) {
        vki_tensor_info info;
        const void *data;
        size_t bytes;
        if (vki_model_output_info(l.model, i, &info) == VKI_OK && info.kind != VKI_VALUE_TENSOR) {
            rc = print_list_output(l.session, i, &info);
            continue;
        }
        if (vki_session_get_output(l.session, i, &info, &data, &bytes) != VKI_OK) {
            rc = lib_error("reading outputs");
            break;
        }
        char shape[512];
        format_dims(info.dims, info.rank, shape, sizeof shape);
        printf("output %s: %s %s%s\n", info.name, vki_dtype_name(info.dtype), shape,
               info.dtype == VKI_DTYPE_BFLOAT16 && o.output_dir ? " (saved as float32: numpy has no bfloat16)" : "");
        print_summary(&info, data, bytes);
    }
    if (!rc && o.output_dir) rc = write_outputs(l.model, l.session, o.output_dir);
    if (!rc) {
        vki_device_info dev;
        char threads[200];
        if (vki_context_device_info(l.ctx, &dev) == VKI_OK) {
            printf("device: %s\n", dev.name);
            if (*cpu_threads_note(&l, &dev, threads, sizeof threads)) printf("cpu threads: %s\n", threads);
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
    unload(&l);
    return rc;
}

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
        lib_error("out of memory");
        return NULL;
    }
    bool progress = isatty(STDERR_FILENO);
    double start = now_ms(), last_progress = 0;
    for (;;) {
        double elapsed = now_ms() - start;
        if (o->duration_s > 0 ? n > 0 && elapsed >= o->duration_s * 1e3 : n >= o->runs) break;
        if (n == cap) {
            double *grown = realloc(times, (size_t)cap * 2 * sizeof *times);
            if (!grown) {
                free(times);
                lib_error("out of memory");
                return NULL;
            }
            times = grown;
            cap *= 2;
        }
        double t0 = now_ms();
        if (vki_session_run(s) != VKI_OK) {
            free(times);
            lib_error("running the model");
            return NULL;
        }
        times[n++] = now_ms() - t0;
        if (progress && now_ms() - last_progress > 100) {
            last_progress = now_ms();
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

static int cmd_bench(int argc, char **argv)
{
    run_options o;
    if (parse_run_options("bench", argc, argv, true, &o)) return EXIT_USAGE;
    loaded l;
    int rc = load(&o, &l);
    int64_t batch = 1;
    if (!rc) rc = set_inputs(l.model, l.session, &o, o.json, &batch);
    double first_ms = 0, *times = NULL;
    long n = 0;
    if (!rc) {
        double t0 = now_ms();
        if (vki_session_run(l.session) != VKI_OK) rc = lib_error("running the model");
        first_ms = now_ms() - t0;
    }
    for (long i = 0; !rc && i < o.warmup; i++)
        if (vki_session_run(l.session) != VKI_OK) rc = lib_error("running the model");
    if (!rc && !(times = timed_runs(l.session, &o, &n))) rc = 1;
    vki_session_stats stats = {0};
    vki_device_info dev = {0};
    if (!rc && vki_session_stats_get(l.session, &stats) != VKI_OK) rc = lib_error("reading stats");
    if (!rc && vki_context_device_info(l.ctx, &dev) != VKI_OK) rc = lib_error("reading the device");
    profile_result pr = {0};
    if (!rc && o.profile && cli_profile_collect(l.session, &pr)) rc = lib_error("profiling");
    if (!rc) {
        double *sorted = malloc((size_t)n * sizeof *sorted);
        if (!sorted) {
            rc = lib_error("out of memory");
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
            if (*cpu_threads_note(&l, &dev, threads, sizeof threads)) printf("cpu threads: %s\n", threads);
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
                rc = fclose(f) != 0 ? 1 : cli_plot(json_path, o.plot);
                unlink(json_path);
            }
        }
    }
done:
    cli_profile_free(&pr);
    free(times);
    unload(&l);
    return rc;
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
