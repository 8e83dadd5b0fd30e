/* The inputs of `run` and `bench`: .npy files (float32 rounded to bfloat16, int8/uint8 for the
 * 4-/2-bit and float8 dtypes numpy lacks) or seeded random values, checked against the model's
 * inputs, and the list of what the model expects when they do not fit. */
#include "cli.h"
#include "cli_run.h"
#include "npy.h"
#include "util/util.h" /* float_to_half, float_to_bf16 */
#include "vkinfer.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void cli_format_dims(const int64_t *dims, int32_t rank, char *buf, size_t size)
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

int cli_set_inputs(vki_model *m, vki_session *s, const run_options *o, bool quiet, int64_t *batch)
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
        cli_format_dims(sh->dims, sh->rank, got, sizeof got);
        if (!fits) return input_error(m, "--shape %s=%s does not fit the model's %s", sh->name, got, want);
    }
    uint64_t rng = o->seed ^ 0x5eed5eed5eedull;
    for (uint32_t i = 0; i < n; i++) {
        vki_tensor_info t;
        if (vki_model_input_info(m, i, &t) != VKI_OK) return cli_lib_error("reading the model's inputs");
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
                cli_format_dims(arr.dims, arr.rank, got, sizeof got);
                printf("input %s: random %s %s (seed %llu)\n", t.name, vki_dtype_name(arr.dtype), got,
                       (unsigned long long)o->seed);
            }
        } else {
            return input_error(m, "input '%s' was not given (use --input %s=FILE.npy or --random-inputs)", t.name, t.name);
        }
        cli_format_dims(arr.dims, arr.rank, got, sizeof got);
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
