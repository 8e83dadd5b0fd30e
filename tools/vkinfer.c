/* The vkinfer command: list devices and ops, run a model on .npy inputs, and benchmark it.
 * Other programs call it, so its options, output files and --json fields are an interface. */
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

#define EXIT_USAGE 2

static const char usage_text[] =
    "usage:\n"
    "  vkinfer devices                      list the Vulkan devices ('*' marks the default)\n"
    "  vkinfer ops [--markdown]             list the ops vkinfer runs\n"
    "  vkinfer run MODEL.onnx [options]     run the model once, print and save its outputs\n"
    "      --input NAME=FILE.npy            an input (repeat for each input; a bfloat16 input takes float32)\n"
    "      --random-inputs                  fill inputs not given with seeded random data\n"
    "      --seed N                         seed of --random-inputs (default 0)\n"
    "      --output-dir DIR                 write each output to DIR/<name>.npy\n"
    "      --device SPEC                    device index or name substring (see `vkinfer devices`)\n"
    "      --precision fp32|fp16            fp16: float32 weights and activations held as float16 on the GPU\n"
    "  vkinfer bench MODEL.onnx [options]   time whole runs (upload + GPU + download)\n"
    "      --input NAME=FILE.npy | --random-inputs [--seed N]\n"
    "      --warmup N (default 10)  --runs N (default 50)  --json  --device SPEC  --precision fp32|fp16\n"
    "      --profile                        then one run with GPU timestamps: time per op, slowest dispatches\n"
    "  vkinfer --version | help\n"
    "environment: VKINFER_DEVICE (default device), VKINFER_VALIDATION=1, VKINFER_CACHE_DIR\n";

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "vkinfer: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n\n%s", usage_text);
    va_end(ap);
    return EXIT_USAGE;
}

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
        printf("    fp16 arithmetic: %s, 16-bit storage: %s, 8-bit storage: %s, cooperative matrix: %s\n",
               d->fp16_arithmetic ? "yes" : "no", d->storage_16bit ? "yes" : "no", d->storage_8bit ? "yes" : "no",
               d->cooperative_matrix ? "yes" : "no");
    }
    if (!n) printf("no Vulkan devices\n");
    free(infos);
    return 0;
}

/* Markdown table cells must not contain '|' or line breaks. */
static void print_md_cell(const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", stdout);
        else if (*s == '\n') putchar(' ');
        else putchar(*s);
    }
}

static int cmd_ops(int argc, char **argv)
{
    bool markdown = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--markdown")) markdown = true;
        else return usage_error("ops: unknown option '%s'", argv[i]);
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
            print_md_cell(name);
            printf(" | ");
            print_md_cell(op.dtypes ? op.dtypes : "");
            printf(" | ");
            print_md_cell(op.notes ? op.notes : "");
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

typedef struct run_options {
    const char *model, *output_dir, *device;
    input_arg inputs[MAX_INPUT_ARGS];
    int n_inputs;
    bool random_inputs, json, profile, fp16;
    uint64_t seed;
    long warmup, runs;
} run_options;

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
    for (int i = 0; i < argc; i++) {
        char *arg = argv[i], *value = NULL;
        char opt[64];
        if (!strncmp(arg, "--", 2)) {
            char *eq = strchr(arg, '=');
            size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
            if (len >= sizeof opt) return usage_error("%s: unknown option '%s'", cmd, arg);
            memcpy(opt, arg, len);
            opt[len] = 0;
            if (eq) value = eq + 1;
        } else {
            if (o->model) return usage_error("%s: unexpected argument '%s' (one model only)", cmd, arg);
            o->model = arg;
            continue;
        }
        bool takes_value = !strcmp(opt, "--input") || !strcmp(opt, "--output-dir") || !strcmp(opt, "--device") ||
                           !strcmp(opt, "--seed") || !strcmp(opt, "--precision") || (bench && (!strcmp(opt, "--warmup") || !strcmp(opt, "--runs")));
        if (takes_value && !value) {
            if (i + 1 >= argc) return usage_error("%s: %s needs a value", cmd, opt);
            value = argv[++i];
        } else if (!takes_value && value) {
            return usage_error("%s: %s takes no value", cmd, opt);
        }
        if (!strcmp(opt, "--input")) {
            char *eq = strchr(value, '=');
            if (!eq || eq == value || !eq[1]) return usage_error("%s: --input takes NAME=FILE.npy, got '%s'", cmd, value);
            if (o->n_inputs == MAX_INPUT_ARGS) return usage_error("%s: more than %d --input options", cmd, MAX_INPUT_ARGS);
            *eq = 0;
            o->inputs[o->n_inputs++] = (input_arg){value, eq + 1};
        } else if (!strcmp(opt, "--output-dir") && !bench) {
            o->output_dir = value;
        } else if (!strcmp(opt, "--device")) {
            o->device = value;
        } else if (!strcmp(opt, "--precision")) {
            if (strcmp(value, "fp32") && strcmp(value, "fp16"))
                return usage_error("%s: --precision takes fp32 or fp16, got '%s'", cmd, value);
            o->fp16 = !strcmp(value, "fp16");
        } else if (!strcmp(opt, "--seed")) {
            char *end;
            errno = 0;
            o->seed = strtoull(value, &end, 10);
            if (errno || end == value || *end) return usage_error("%s: --seed takes a non-negative integer", cmd);
        } else if (!strcmp(opt, "--random-inputs")) {
            o->random_inputs = true;
        } else if (bench && !strcmp(opt, "--json")) {
            o->json = true;
        } else if (bench && !strcmp(opt, "--profile")) {
            o->profile = true;
        } else if (bench && !strcmp(opt, "--warmup")) {
            if (!parse_count(value, 0, &o->warmup)) return usage_error("%s: --warmup takes an integer >= 0", cmd);
        } else if (bench && !strcmp(opt, "--runs")) {
            if (!parse_count(value, 1, &o->runs)) return usage_error("%s: --runs takes an integer >= 1", cmd);
        } else {
            return usage_error("%s: unknown option '%s'", cmd, arg);
        }
    }
    if (!o->model) return usage_error("%s: no model given", cmd);
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
        fprintf(stderr, "  %s: %s %s\n", t.name, vki_dtype_name(t.dtype), shape);
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

/* Uniform floats in [-1,1), integers in [0,10), random bools; symbolic dims are 1. */
static int make_random_input(const vki_tensor_info *t, uint64_t *rng, npy_array *out)
{
    memset(out, 0, sizeof *out);
    if (t->rank < 0) return -1;
    out->dtype = t->dtype;
    out->rank = t->rank;
    size_t count = 1, item = vki_dtype_size(t->dtype);
    for (int d = 0; d < t->rank; d++) {
        out->dims[d] = t->dims[d] >= 0 ? t->dims[d] : 1;
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
        case VKI_DTYPE_INT64: memcpy(p + 8 * i, &v, 8); break;
        default: return -1;
        }
    }
    return 0;
}

/* Reads the --input files, makes random inputs if asked, checks them against the model's
 * inputs and sets them on the session. */
static int set_inputs(vki_model *m, vki_session *s, const run_options *o, bool quiet)
{
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
    uint64_t rng = o->seed ^ 0x5eed5eed5eedull;
    for (uint32_t i = 0; i < n; i++) {
        vki_tensor_info t;
        if (vki_model_input_info(m, i, &t) != VKI_OK) return lib_error("reading the model's inputs");
        char want[512], got[512];
        format_shape(&t, want, sizeof want);
        const input_arg *given = NULL;
        for (int a = 0; a < o->n_inputs; a++)
            if (!strcmp(o->inputs[a].name, t.name)) given = &o->inputs[a];
        npy_array arr;
        if (given) {
            char err[1024];
            if (npy_read(given->path, &arr, err, sizeof err)) return input_error(m, "input '%s': %s", t.name, err);
        } else if (o->random_inputs) {
            if (make_random_input(&t, &rng, &arr))
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
    default: return NAN;
    }
}

static void print_summary(const vki_tensor_info *info, const void *data, size_t bytes)
{
    size_t item = vki_dtype_size(info->dtype), count = item ? bytes / item : 0;
    bool is_float = info->dtype == VKI_DTYPE_FLOAT || info->dtype == VKI_DTYPE_FLOAT16 || info->dtype == VKI_DTYPE_BFLOAT16;
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
} loaded;

static void unload(loaded *l)
{
    vki_session_destroy(l->session);
    vki_model_destroy(l->model);
    vki_context_destroy(l->ctx);
}

static int load(const run_options *o, loaded *l)
{
    memset(l, 0, sizeof *l);
    vki_context_options opts = {.device = o->device, .validation = -1, .cache_dir = NULL};
    if (vki_context_create(&opts, &l->ctx) != VKI_OK) return lib_error("opening the Vulkan device");
    double t0 = now_ms();
    if (vki_model_load(l->ctx, o->model, &l->model) != VKI_OK) return lib_error("loading the model");
    l->load_ms = now_ms() - t0;
    t0 = now_ms();
    vki_session_options sopts = {o->fp16 ? VKI_PRECISION_FP16 : VKI_PRECISION_DEFAULT};
    if (vki_session_create_with_options(l->model, &sopts, &l->session) != VKI_OK) return lib_error("creating a session");
    l->session_ms = now_ms() - t0;
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    run_options o;
    if (parse_run_options("run", argc, argv, false, &o)) return EXIT_USAGE;
    loaded l;
    int rc = load(&o, &l);
    if (!rc) rc = set_inputs(l.model, l.session, &o, false);
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
        if (vki_context_device_info(l.ctx, &dev) == VKI_OK) printf("device: %s\n", dev.name);
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

static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

typedef struct op_time {
    const char *op;
    double ms;
    int count;
} op_time;

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

/* One more run with per-dispatch GPU timestamps (after the timed runs, which it does not
 * touch): GPU time per op type and the slowest dispatches. */
static int print_profile(vki_session *s, bool json)
{
    uint32_t n = 0;
    if (vki_session_set_profiling(s, 1) != VKI_OK || vki_session_run(s) != VKI_OK || vki_session_run(s) != VKI_OK ||
        vki_session_profile(s, NULL, 0, &n) != VKI_OK)
        return lib_error("profiling");
    vki_dispatch_profile *d = calloc(n + 1, sizeof *d);
    op_time *ops = calloc(n + 1, sizeof *ops);
    if (!d || !ops) {
        free(d);
        free(ops);
        return lib_error("out of memory");
    }
    vki_session_profile(s, d, n, &n);
    int n_ops = 0;
    double total = 0;
    for (uint32_t i = 0; i < n; i++) {
        total += d[i].gpu_ms;
        int k = 0;
        while (k < n_ops && strcmp(ops[k].op, d[i].op)) k++;
        if (k == n_ops) ops[n_ops++] = (op_time){d[i].op, 0, 0};
        ops[k].ms += d[i].gpu_ms;
        ops[k].count++;
    }
    qsort(ops, (size_t)n_ops, sizeof *ops, compare_op_time);
    qsort(d, n, sizeof *d, compare_dispatch_time);
    if (json) {
        printf(", \"gpu_total_ms\": %.4f, \"gpu_ms_by_op\": {", total);
        for (int k = 0; k < n_ops; k++) {
            printf("%s", k ? ", " : "");
            print_json_string(ops[k].op);
            printf(": %.4f", ops[k].ms);
        }
        printf("}");
    } else {
        printf("GPU time:  %.3f ms in %u dispatches (timestamps after each dispatch)\n", total, n);
        for (int k = 0; k < n_ops; k++)
            printf("  %-24s %9.3f ms %5.1f%%  %d dispatches\n", ops[k].op, ops[k].ms, total > 0 ? 100 * ops[k].ms / total : 0,
                   ops[k].count);
        printf("slowest dispatches:\n");
        for (uint32_t i = 0; i < n && i < 15; i++)
            printf("  %9.3f ms  %-22s %-18s %s\n", d[i].gpu_ms, d[i].shader, d[i].op, d[i].node);
    }
    free(d);
    free(ops);
    return 0;
}

static int cmd_bench(int argc, char **argv)
{
    run_options o;
    if (parse_run_options("bench", argc, argv, true, &o)) return EXIT_USAGE;
    loaded l;
    int rc = load(&o, &l);
    if (!rc) rc = set_inputs(l.model, l.session, &o, o.json);
    double *times = calloc((size_t)o.runs, sizeof *times);
    if (!rc && !times) rc = lib_error("out of memory");
    double first_ms = 0;
    if (!rc) {
        double t0 = now_ms();
        if (vki_session_run(l.session) != VKI_OK) rc = lib_error("running the model");
        first_ms = now_ms() - t0;
    }
    for (long i = 0; !rc && i < o.warmup; i++)
        if (vki_session_run(l.session) != VKI_OK) rc = lib_error("running the model");
    for (long i = 0; !rc && i < o.runs; i++) {
        double t0 = now_ms();
        if (vki_session_run(l.session) != VKI_OK) rc = lib_error("running the model");
        times[i] = now_ms() - t0;
    }
    vki_session_stats stats = {0};
    vki_device_info dev = {0};
    if (!rc && vki_session_stats_get(l.session, &stats) != VKI_OK) rc = lib_error("reading stats");
    if (!rc && vki_context_device_info(l.ctx, &dev) != VKI_OK) rc = lib_error("reading the device");
    if (!rc) {
        qsort(times, (size_t)o.runs, sizeof *times, compare_doubles);
        double median = percentile(times, o.runs, 0.5), p10 = percentile(times, o.runs, 0.1),
               p90 = percentile(times, o.runs, 0.9);
        if (o.json) {
            printf("{\"model\": ");
            print_json_string(o.model);
            printf(", \"device\": ");
            print_json_string(dev.name);
            printf(", \"load_ms\": %.4f, \"session_ms\": %.4f, \"plan_ms\": %.4f, \"first_run_ms\": %.4f, \"median_ms\": %.4f, "
                   "\"p10_ms\": %.4f, \"p90_ms\": %.4f, \"runs\": %ld, \"warmup\": %ld, \"dispatches\": %u, "
                   "\"weight_bytes\": %llu, \"intermediate_bytes\": %llu",
                   l.load_ms, l.session_ms, stats.plan_ms, first_ms, median, p10, p90, o.runs, o.warmup, stats.dispatch_count,
                   (unsigned long long)stats.weight_bytes, (unsigned long long)stats.intermediate_bytes);
            if (o.profile) rc = print_profile(l.session, true);
            printf("}\n");
        } else {
            printf("model:     %s\ndevice:    %s\n", o.model, dev.name);
            printf("load:      %.2f ms\nsession:   %.2f ms\nplan:      %.2f ms (with the session when every input shape is "
                   "declared, else in the first run)\nfirst run: %.2f ms\n", l.load_ms, l.session_ms, stats.plan_ms, first_ms);
            printf("run:       median %.3f ms, p10 %.3f ms, p90 %.3f ms over %ld runs after %ld warm-up runs\n"
                   "           (whole vki_session_run calls: input upload + GPU + output download)\n",
                   median, p10, p90, o.runs, o.warmup);
            printf("plan:      %u dispatches; weights %.2f MiB, intermediates %.2f MiB\n", stats.dispatch_count,
                   (double)stats.weight_bytes / 1048576.0, (double)stats.intermediate_bytes / 1048576.0);
            if (o.profile) rc = print_profile(l.session, false);
        }
    }
    free(times);
    unload(&l);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage_error("no command given");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("vkinfer %d.%d\n", VKI_VERSION_MAJOR, VKI_VERSION_MINOR);
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (!strcmp(cmd, "devices")) return argc == 2 ? cmd_devices() : usage_error("devices takes no arguments");
    if (!strcmp(cmd, "ops")) return cmd_ops(argc - 2, argv + 2);
    if (!strcmp(cmd, "run")) return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench")) return cmd_bench(argc - 2, argv + 2);
    return usage_error("unknown command '%s'", cmd);
}
