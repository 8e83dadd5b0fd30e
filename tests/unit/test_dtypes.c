/* The dtypes held in another GPU form (docs/architecture.md, "Dtypes on the GPU") through the
 * public API: a round trip of every value of each small format and of edge values of float64,
 * uint32 and uint64; the range checks that name the tensor (an input and a constant);
 * float64 beyond float32's range and precision, in double and in the fp32 fallback; 4-bit data
 * packed in a model file, unpacked by the reader. */
#include "vkinfer.h"
#include "check.h"
#include "pbwrite.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* y = Concat(x, x) along axis 0: the GPU reads and writes every element (an Identity would
 * alias its input). */
static void write_concat_model(const char *path, int dtype, int64_t n)
{
    pbw graph = {0}, model = {0}, node = {0}, attr = {0};
    int64_t in_dims[1] = {n}, out_dims[1] = {2 * n};
    pbw_str(&node, 1, "x");
    pbw_str(&node, 1, "x");
    pbw_str(&node, 2, "y");
    pbw_str(&node, 4, "Concat");
    pbw_str(&attr, 1, "axis");
    pbw_int(&attr, 3, 0);
    pbw_int(&attr, 20, 2); /* AttributeProto.INT */
    pbw_msg(&node, 5, &attr);
    pbw_msg(&graph, 1, &node);
    pbw_value_info(&graph, 11, "x", dtype, in_dims, 1);
    pbw_value_info(&graph, 12, "y", dtype, out_dims, 1);
    pbw_model(&model, &graph);
    pbw_save(&model, path);
}

/* x + c with c a uint64 initializer of one element holding `c`. */
static void write_add_const_model(const char *path, uint64_t c)
{
    pbw graph = {0}, model = {0};
    int64_t dims[1] = {1};
    pbw_node2(&graph, "Add", "x", "c", "y");
    pbw_initializer(&graph, "c", VKI_DTYPE_UINT64, 1, &c, sizeof c);
    pbw_value_info(&graph, 11, "x", VKI_DTYPE_UINT64, dims, 1);
    pbw_value_info(&graph, 12, "y", VKI_DTYPE_UINT64, dims, 1);
    pbw_model(&model, &graph);
    pbw_save(&model, path);
}

/* y = Identity(c) with c a packed initializer of n elements of dtype (raw_data as ONNX packs it). */
static void write_packed_const_model(const char *path, int dtype, int64_t n, const uint8_t *packed, size_t bytes)
{
    pbw graph = {0}, model = {0};
    int64_t dims[1] = {n};
    pbw_node(&graph, "Identity", "c", "y");
    pbw_initializer(&graph, "c", dtype, (uint64_t)n, packed, bytes);
    pbw_value_info(&graph, 12, "y", dtype, dims, 1);
    pbw_model(&model, &graph);
    pbw_save(&model, path);
}

/* y = Cast(x, to), x float32[n]. */
static void write_cast_model(const char *path, int to, int64_t n)
{
    pbw graph = {0}, model = {0}, node = {0}, attr = {0};
    int64_t dims[1] = {n};
    pbw_str(&node, 1, "x");
    pbw_str(&node, 2, "y");
    pbw_str(&node, 4, "Cast");
    pbw_str(&attr, 1, "to");
    pbw_int(&attr, 3, (uint64_t)to);
    pbw_int(&attr, 20, 2); /* AttributeProto.INT */
    pbw_msg(&node, 5, &attr);
    pbw_msg(&graph, 1, &node);
    pbw_value_info(&graph, 11, "x", VKI_DTYPE_FLOAT, dims, 1);
    pbw_value_info(&graph, 12, "y", to, dims, 1);
    pbw_model(&model, &graph);
    pbw_save(&model, path);
}

/* A Cast node of `in` to dtype `to`. */
static void add_cast_node(pbw *graph, const char *in, const char *out, int to)
{
    pbw node = {0}, attr = {0};
    pbw_str(&node, 1, in);
    pbw_str(&node, 2, out);
    pbw_str(&node, 4, "Cast");
    pbw_str(&attr, 1, "to");
    pbw_int(&attr, 3, (uint64_t)to);
    pbw_int(&attr, 20, 2); /* AttributeProto.INT */
    pbw_msg(&node, 5, &attr);
    pbw_msg(graph, 1, &node);
}

/* float64 arithmetic and data movement, x float64[5]: sum = x + c (c a float64 constant of one
 * element), product = x * x, narrow = Cast(x, float32), through_int = Cast(Cast(x, int32),
 * float64), gathered = Gather(x, [4, 1]), chosen = Where([1, 0, 1, 0, 1], x, sum). */
static void write_f64_math_model(const char *path, double c)
{
    pbw graph = {0}, model = {0}, where = {0};
    int64_t dims[1] = {5}, two[1] = {2};
    pbw_node2(&graph, "Add", "x", "c", "sum");
    pbw_node2(&graph, "Mul", "x", "x", "product");
    add_cast_node(&graph, "x", "narrow", VKI_DTYPE_FLOAT);
    add_cast_node(&graph, "x", "i", VKI_DTYPE_INT32);
    add_cast_node(&graph, "i", "through_int", VKI_DTYPE_DOUBLE);
    pbw_node2(&graph, "Gather", "x", "idx", "gathered");
    pbw_str(&where, 1, "cond");
    pbw_str(&where, 1, "x");
    pbw_str(&where, 1, "sum");
    pbw_str(&where, 2, "chosen");
    pbw_str(&where, 4, "Where");
    pbw_msg(&graph, 1, &where);
    const int64_t idx[2] = {4, 1};
    const uint8_t cond[5] = {1, 0, 1, 0, 1};
    pbw_initializer(&graph, "c", VKI_DTYPE_DOUBLE, 1, &c, sizeof c);
    pbw_initializer(&graph, "idx", VKI_DTYPE_INT64, 2, idx, sizeof idx);
    pbw_initializer(&graph, "cond", VKI_DTYPE_BOOL, 5, cond, sizeof cond);
    pbw_value_info(&graph, 11, "x", VKI_DTYPE_DOUBLE, dims, 1);
    pbw_value_info(&graph, 12, "sum", VKI_DTYPE_DOUBLE, dims, 1);
    pbw_value_info(&graph, 12, "product", VKI_DTYPE_DOUBLE, dims, 1);
    pbw_value_info(&graph, 12, "narrow", VKI_DTYPE_FLOAT, dims, 1);
    pbw_value_info(&graph, 12, "through_int", VKI_DTYPE_DOUBLE, dims, 1);
    pbw_value_info(&graph, 12, "gathered", VKI_DTYPE_DOUBLE, two, 1);
    pbw_value_info(&graph, 12, "chosen", VKI_DTYPE_DOUBLE, dims, 1);
    pbw_model(&model, &graph);
    pbw_save(&model, path);
}

/* Runs write_f64_math_model's model on x in a context of its own, with
 * VKINFER_DISABLE_FEATURES=float64 when `fallback`; the results are those of double arithmetic
 * where the context has shaderFloat64, else those of the documented fp32 fallback. */
static void f64_math(const char *path, bool fallback)
{
    const double x[5] = {1.0, 1e100, -3e-100, 16777217.0, 0.1}, c = 1e-12;
    const char *mode = fallback ? "without shaderFloat64" : "in double";
    if (fallback) setenv("VKINFER_DISABLE_FEATURES", "float64", 1);
    vki_context *ctx = NULL;
    vki_status st = vki_context_create(NULL, &ctx);
    if (fallback) unsetenv("VKINFER_DISABLE_FEATURES");
    vki_device_info device;
    if (st == VKI_OK) st = vki_context_device_info(ctx, &device);
    /* lavapipe and the H200 have shaderFloat64; VKINFER_LIMITS=android-baseline-2022 does not */
    bool in_double = st == VKI_OK && device.shader_float64;
    CHECK(!fallback || !in_double, "VKINFER_DISABLE_FEATURES=float64 left shaderFloat64 on");
    if (!fallback && !in_double) mode = "without shaderFloat64 (the device lacks it)";
    vki_model *m = NULL;
    vki_session *s = NULL;
    write_f64_math_model(path, c);
    if (st == VKI_OK) st = vki_model_load(ctx, path, &m);
    if (st == VKI_OK) st = vki_session_create(m, &s);
    int64_t dims[1] = {5};
    if (st == VKI_OK) st = vki_session_set_input(s, "x", VKI_DTYPE_DOUBLE, dims, 1, x, sizeof x);
    if (st == VKI_OK) st = vki_session_run(s);
    const double *sum = NULL, *product = NULL, *through_int = NULL, *gathered = NULL, *chosen = NULL;
    const float *narrow = NULL;
    const void **outs[6] = {(const void **)&sum, (const void **)&product, (const void **)&narrow,
                            (const void **)&through_int, (const void **)&gathered, (const void **)&chosen};
    for (int k = 0; k < 6 && st == VKI_OK; k++) {
        vki_tensor_info info;
        size_t bytes;
        st = vki_session_get_output(s, k, &info, outs[k], &bytes);
    }
    CHECK(st == VKI_OK, "float64 math %s: %s", mode, vki_last_error());
    if (st == VKI_OK) {
        /* Cast to float32 rounds once, as C does, on every device */
        bool narrow_ok = true;
        for (int i = 0; i < 5; i++) narrow_ok = narrow_ok && !memcmp(&narrow[i], &(float){(float)x[i]}, 4);
        CHECK(narrow_ok, "float64 Cast to float32 %s: %g %g %g %g %g", mode, narrow[0], narrow[1], narrow[2], narrow[3],
              narrow[4]);
        /* Gather and Where move the 8 bytes unchanged on every device */
        CHECK(!memcmp(&gathered[0], &x[4], 8) && !memcmp(&gathered[1], &x[1], 8) && !memcmp(&chosen[0], &x[0], 8) &&
              !memcmp(&chosen[1], &sum[1], 8) && !memcmp(&chosen[2], &x[2], 8) && !memcmp(&chosen[3], &sum[3], 8),
              "float64 Gather/Where %s: %.17g %.17g, %.17g %.17g %.17g", mode, gathered[0], gathered[1], chosen[0], chosen[1],
              chosen[2]);
        if (in_double) { /* double arithmetic: beyond float32's range and precision, as C computes it */
            bool ok = true;
            for (int i = 0; i < 5; i++) ok = ok && sum[i] == x[i] + c && product[i] == x[i] * x[i];
            CHECK(ok && sum[0] != 1.0, "float64 Add/Mul in double: sum %.17g %.17g %.17g, product %.17g %.17g %.17g",
                  sum[0], sum[1], sum[2], product[0], product[1], product[2]);
            CHECK(through_int[0] == 1.0 && through_int[3] == 16777217.0 && through_int[4] == 0.0,
                  "float64 Cast through int32 in double: %.17g %.17g %.17g", through_int[0], through_int[3], through_int[4]);
        } else { /* the documented fp32 fallback: float32's precision, +-inf beyond its range */
            CHECK(sum[0] == 1.0 && isinf(sum[1]) && sum[1] > 0 && product[2] == 0.0 && through_int[3] == 16777216.0,
                  "float64 fp32 fallback: sum %.17g %.17g, product %.17g, through int32 %.17g", sum[0], sum[1], product[2],
                  through_int[3]);
        }
    }
    vki_session_destroy(s);
    vki_model_destroy(m);
    vki_context_destroy(ctx);
}

/* Runs a model without inputs; its output 0 must be `want` (n bytes). */
static void check_const_output(vki_context *ctx, const char *path, const char *what, const uint8_t *want, size_t n)
{
    vki_model *m = NULL;
    vki_session *s = NULL;
    vki_status st = vki_model_load(ctx, path, &m);
    if (st == VKI_OK) st = vki_session_create(m, &s);
    if (st == VKI_OK) st = vki_session_run(s);
    const uint8_t *y = NULL;
    size_t got = 0;
    vki_tensor_info info;
    if (st == VKI_OK) st = vki_session_get_output(s, 0, &info, (const void **)&y, &got);
    CHECK(st == VKI_OK && got == n && !memcmp(y, want, n), "%s: %s", what, st == VKI_OK ? "wrong values" : vki_last_error());
    vki_session_destroy(s);
    vki_model_destroy(m);
}

/* Runs the Concat model on `data` (n elements of `size` bytes) and checks both halves of the
 * output equal it byte for byte, or as floats for the float formats (NaN matching NaN). */
static void round_trip(vki_context *ctx, const char *path, vki_dtype dtype, const void *data, int64_t n)
{
    size_t size = vki_dtype_size(dtype), bytes = (size_t)n * size;
    write_concat_model(path, dtype, n);
    vki_model *m = NULL;
    vki_session *s = NULL;
    vki_status st = vki_model_load(ctx, path, &m);
    if (st == VKI_OK) st = vki_session_create(m, &s);
    int64_t dims[1] = {n};
    if (st == VKI_OK) st = vki_session_set_input(s, "x", dtype, dims, 1, data, bytes);
    if (st == VKI_OK) st = vki_session_run(s);
    CHECK(st == VKI_OK, "%s: %s", vki_dtype_name(dtype), vki_last_error());
    if (st == VKI_OK) {
        vki_tensor_info info;
        const uint8_t *y = NULL;
        size_t got = 0;
        st = vki_session_get_output(s, 0, &info, (const void **)&y, &got);
        CHECK(st == VKI_OK && info.dtype == dtype && got == 2 * bytes, "%s: output dtype %s, %zu bytes", vki_dtype_name(dtype),
              vki_dtype_name(info.dtype), got);
        if (st == VKI_OK && got == 2 * bytes) {
            int bad = -1;
            for (int half = 0; half < 2 && bad < 0; half++)
                for (int64_t i = 0; i < n && bad < 0; i++) {
                    const uint8_t *a = (const uint8_t *)data + i * (int64_t)size, *b = y + (half * n + i) * (int64_t)size;
                    if (memcmp(a, b, size)) bad = (int)i;
                }
            CHECK(bad < 0, "%s: element %d changed on the way through the GPU", vki_dtype_name(dtype), bad);
        }
    }
    vki_session_destroy(s);
    vki_model_destroy(m);
}

/* The codes of a small float format that round-trip: all but e5m2's NaNs other than 0x7e and
 * 0xfe (a NaN comes back as the format's canonical NaN, with its sign where it has one). */
static int64_t float_codes(vki_dtype dtype, uint8_t *codes)
{
    int64_t n = 0;
    int count = dtype == VKI_DTYPE_FLOAT4E2M1 ? 16 : dtype == VKI_DTYPE_FLOAT6E2M3 || dtype == VKI_DTYPE_FLOAT6E3M2 ? 64 : 256;
    for (int c = 0; c < count; c++)
        if (dtype != VKI_DTYPE_FLOAT8E5M2 || (c & 0x7c) != 0x7c || (c & 3) == 0 || (c & 3) == 2) codes[n++] = (uint8_t)c;
    return n;
}

static vki_status run_one(vki_context *ctx, const char *path, vki_dtype dtype, const void *x, size_t bytes, const void **y)
{
    vki_model *m = NULL;
    vki_session *s = NULL;
    vki_status st = vki_model_load(ctx, path, &m);
    if (st == VKI_OK) st = vki_session_create(m, &s);
    int64_t dims[1] = {(int64_t)(bytes / vki_dtype_size(dtype))};
    if (st == VKI_OK) st = vki_session_set_input(s, "x", dtype, dims, 1, x, bytes);
    if (st == VKI_OK) st = vki_session_run(s);
    static uint8_t out[64];
    if (st == VKI_OK) {
        vki_tensor_info info;
        const void *data;
        size_t got;
        st = vki_session_get_output(s, 0, &info, &data, &got);
        if (st == VKI_OK && got <= sizeof out) memcpy(out, data, got);
        *y = out;
    }
    vki_session_destroy(s);
    vki_model_destroy(m);
    return st;
}

int main(void)
{
    vki_context *ctx = NULL;
    if (vki_context_create(NULL, &ctx) != VKI_OK) {
        printf("no device: %s\n", vki_last_error());
        return 1;
    }
    char path[] = "/tmp/vki_dtypes_XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);

    /* every code of each small float format, every value of the small integers */
    const vki_dtype floats[] = {VKI_DTYPE_FLOAT8E4M3FN, VKI_DTYPE_FLOAT8E4M3FNUZ, VKI_DTYPE_FLOAT8E5M2,
                                VKI_DTYPE_FLOAT8E5M2FNUZ, VKI_DTYPE_FLOAT4E2M1, VKI_DTYPE_FLOAT8E8M0,
                                VKI_DTYPE_FLOAT6E2M3, VKI_DTYPE_FLOAT6E3M2};
    for (size_t k = 0; k < sizeof floats / sizeof *floats; k++) {
        uint8_t codes[256];
        int64_t n = float_codes(floats[k], codes);
        round_trip(ctx, path, floats[k], codes, n);
    }
    int8_t i4[16], i2[4];
    uint8_t u4[16], u2[4];
    for (int v = 0; v < 16; v++) i4[v] = (int8_t)(v - 8), u4[v] = (uint8_t)v;
    for (int v = 0; v < 4; v++) i2[v] = (int8_t)(v - 2), u2[v] = (uint8_t)v;
    round_trip(ctx, path, VKI_DTYPE_INT4, i4, 16);
    round_trip(ctx, path, VKI_DTYPE_UINT4, u4, 16);
    round_trip(ctx, path, VKI_DTYPE_INT2, i2, 4);
    round_trip(ctx, path, VKI_DTYPE_UINT2, u2, 4);
    /* float64 values float32 holds exactly, uint32/uint64 up to 2^31-1 */
    const double f64[] = {0.0, -0.0, 1.5, -2.25, 0x1p127, 0x1p-100, INFINITY, -INFINITY};
    round_trip(ctx, path, VKI_DTYPE_DOUBLE, f64, 8);
    const uint32_t u32[] = {0, 1, 65535, 2147483647u};
    round_trip(ctx, path, VKI_DTYPE_UINT32, u32, 4);
    const uint64_t u64[] = {0, 7, 1u << 20, 2147483647u};
    round_trip(ctx, path, VKI_DTYPE_UINT64, u64, 4);

    /* float64 is held as its 8 bytes: data movement keeps values beyond float32's range and
     * precision on every device */
    {
        write_concat_model(path, VKI_DTYPE_DOUBLE, 3);
        const double x[3] = {1e300, -1e300, 0.1};
        const double *y = NULL;
        vki_status st = run_one(ctx, path, VKI_DTYPE_DOUBLE, x, sizeof x, (const void **)&y);
        CHECK(st == VKI_OK && y && !memcmp(y, x, sizeof x) && !memcmp(y + 3, x, sizeof x),
              "float64 Concat: %s", st == VKI_OK ? "wrong values" : vki_last_error());
    }
    /* float64 Add, Mul and Cast in double (lavapipe has shaderFloat64), and the fp32 fallback */
    f64_math(path, false);
    f64_math(path, true);
    /* uint64 and uint32 inputs above 2^31-1: an error naming the input, index and value */
    {
        write_concat_model(path, VKI_DTYPE_UINT64, 2);
        const uint64_t x[2] = {1, (uint64_t)1 << 40};
        const void *y = NULL;
        vki_status st = run_one(ctx, path, VKI_DTYPE_UINT64, x, sizeof x, &y);
        const char *e = vki_last_error();
        CHECK(st == VKI_ERROR_UNSUPPORTED && strstr(e, "input 'x'") && strstr(e, "uint64") && strstr(e, "1099511627776") &&
              strstr(e, "index 1"), "uint64 out of range: status %d, '%s'", st, e);
        write_concat_model(path, VKI_DTYPE_UINT32, 1);
        const uint32_t x32[1] = {3000000000u};
        st = run_one(ctx, path, VKI_DTYPE_UINT32, x32, sizeof x32, &y);
        e = vki_last_error();
        CHECK(st == VKI_ERROR_UNSUPPORTED && strstr(e, "input 'x'") && strstr(e, "uint32") && strstr(e, "3000000000"),
              "uint32 out of range: status %d, '%s'", st, e);
    }
    /* a uint64 constant above 2^31-1: an error naming the constant; one that fits computes */
    {
        write_add_const_model(path, (uint64_t)1 << 33);
        const uint64_t x[1] = {5};
        const void *y = NULL;
        vki_status st = run_one(ctx, path, VKI_DTYPE_UINT64, x, sizeof x, &y);
        const char *e = vki_last_error();
        CHECK(st == VKI_ERROR_UNSUPPORTED && strstr(e, "constant 'c'") && strstr(e, "8589934592"),
              "uint64 constant out of range: status %d, '%s'", st, e);
        write_add_const_model(path, 2000000000u);
        st = run_one(ctx, path, VKI_DTYPE_UINT64, x, sizeof x, &y);
        CHECK(st == VKI_OK && y && ((const uint64_t *)y)[0] == 2000000005u, "uint64 Add: %s",
              st == VKI_OK ? "wrong value" : vki_last_error());
    }
    /* packed in the file, one byte per element on the host: int4 two to a byte (sign-extended),
     * uint2 four to a byte, float6 four in three bytes (onnx.numpy_helper._pack_6bit's bytes) */
    {
        const uint8_t i4[2] = {0x9 | 0x7 << 4, 0x3}, i4_want[3] = {0xf9, 7, 3}; /* -7, 7, 3 */
        write_packed_const_model(path, VKI_DTYPE_INT4, 3, i4, sizeof i4);
        check_const_output(ctx, path, "int4 constant", i4_want, 3);
        const uint8_t u2[2] = {0x1b, 0x02}, u2_want[5] = {3, 2, 1, 0, 2};
        write_packed_const_model(path, VKI_DTYPE_UINT2, 5, u2, sizeof u2);
        check_const_output(ctx, path, "uint2 constant", u2_want, 5);
        const uint8_t f6[4] = {193, 7, 254, 24}, f6_want[5] = {1, 31, 32, 63, 24}; /* 0.0625, 28, -0, -28, 8 */
        write_packed_const_model(path, VKI_DTYPE_FLOAT6E3M2, 5, f6, sizeof f6);
        check_const_output(ctx, path, "float6e3m2 constant", f6_want, 5);
    }
    /* Cast to the float6 formats on the GPU: ties to even, saturating, NaN-free (the codes
     * ml_dtypes gives for the same values) */
    {
        const float x[10] = {0.3f, 7.6f, -100.0f, 0.0625f, 0.1875f, -0.0f, 1e-9f, 3.3f, 13.9f, 0.09f};
        const uint8_t e2m3[10] = {2, 31, 63, 0, 2, 32, 0, 21, 31, 1}, e3m2[10] = {5, 24, 63, 1, 3, 32, 0, 19, 27, 1};
        const vki_dtype to[2] = {VKI_DTYPE_FLOAT6E2M3, VKI_DTYPE_FLOAT6E3M2};
        for (int k = 0; k < 2; k++) {
            write_cast_model(path, to[k], 10);
            const uint8_t *y = NULL;
            vki_status st = run_one(ctx, path, VKI_DTYPE_FLOAT, x, sizeof x, (const void **)&y);
            CHECK(st == VKI_OK && y && !memcmp(y, k ? e3m2 : e2m3, 10), "Cast to %s: %s", vki_dtype_name(to[k]),
                  st == VKI_OK ? "wrong codes" : vki_last_error());
        }
    }
    unlink(path);
    vki_context_destroy(ctx);
    printf("%d passed, %d failed\n", passes, failures);
    return failures != 0;
}
