/* Dtype facts and the host-side conversions between ONNX dtypes and their GPU storages. */
#include "util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

const char *vki_dtype_name(vki_dtype t)
{
    switch (t) {
    case VKI_DTYPE_FLOAT: return "float32";
    case VKI_DTYPE_UINT8: return "uint8";
    case VKI_DTYPE_INT8: return "int8";
    case VKI_DTYPE_UINT16: return "uint16";
    case VKI_DTYPE_INT16: return "int16";
    case VKI_DTYPE_INT32: return "int32";
    case VKI_DTYPE_INT64: return "int64";
    case VKI_DTYPE_STRING: return "string";
    case VKI_DTYPE_BOOL: return "bool";
    case VKI_DTYPE_FLOAT16: return "float16";
    case VKI_DTYPE_DOUBLE: return "float64";
    case VKI_DTYPE_UINT32: return "uint32";
    case VKI_DTYPE_UINT64: return "uint64";
    case VKI_DTYPE_BFLOAT16: return "bfloat16";
    case VKI_DTYPE_FLOAT8E4M3FN: return "float8e4m3fn";
    case VKI_DTYPE_FLOAT8E4M3FNUZ: return "float8e4m3fnuz";
    case VKI_DTYPE_FLOAT8E5M2: return "float8e5m2";
    case VKI_DTYPE_FLOAT8E5M2FNUZ: return "float8e5m2fnuz";
    case VKI_DTYPE_UINT4: return "uint4";
    case VKI_DTYPE_INT4: return "int4";
    case VKI_DTYPE_FLOAT4E2M1: return "float4e2m1";
    case VKI_DTYPE_FLOAT8E8M0: return "float8e8m0";
    case VKI_DTYPE_UINT2: return "uint2";
    case VKI_DTYPE_INT2: return "int2";
    case VKI_DTYPE_FLOAT6E2M3: return "float6e2m3";
    case VKI_DTYPE_FLOAT6E3M2: return "float6e3m2";
    default: break;
    }
    /* ONNX dtypes vkinfer has no enum value for: named in messages only */
    switch ((int)t) {
    case 14: return "complex64";
    case 15: return "complex128";
    default: return "unknown";
    }
}

size_t vki_dtype_size(vki_dtype t)
{
    switch (t) {
    case VKI_DTYPE_UINT8: case VKI_DTYPE_INT8: case VKI_DTYPE_BOOL: return 1;
    case VKI_DTYPE_FLOAT8E4M3FN: case VKI_DTYPE_FLOAT8E4M3FNUZ: case VKI_DTYPE_FLOAT8E5M2:
    case VKI_DTYPE_FLOAT8E5M2FNUZ: case VKI_DTYPE_FLOAT4E2M1: case VKI_DTYPE_FLOAT8E8M0: case VKI_DTYPE_UINT4: case VKI_DTYPE_INT4:
    case VKI_DTYPE_UINT2: case VKI_DTYPE_INT2: case VKI_DTYPE_FLOAT6E2M3: case VKI_DTYPE_FLOAT6E3M2:
        return 1; /* one byte per element on the host */
    case VKI_DTYPE_UINT16: case VKI_DTYPE_INT16: case VKI_DTYPE_FLOAT16:
    case VKI_DTYPE_BFLOAT16: return 2;
    case VKI_DTYPE_FLOAT: case VKI_DTYPE_INT32: case VKI_DTYPE_UINT32: return 4;
    case VKI_DTYPE_INT64: case VKI_DTYPE_DOUBLE: case VKI_DTYPE_UINT64: return 8;
    default: return 0;
    }
}

bool dtype_is_float(vki_dtype t)
{
    switch (t) {
    case VKI_DTYPE_FLOAT: case VKI_DTYPE_FLOAT16: case VKI_DTYPE_BFLOAT16: case VKI_DTYPE_DOUBLE:
    case VKI_DTYPE_FLOAT8E4M3FN: case VKI_DTYPE_FLOAT8E4M3FNUZ: case VKI_DTYPE_FLOAT8E5M2:
    case VKI_DTYPE_FLOAT8E5M2FNUZ: case VKI_DTYPE_FLOAT4E2M1: case VKI_DTYPE_FLOAT8E8M0:
    case VKI_DTYPE_FLOAT6E2M3: case VKI_DTYPE_FLOAT6E3M2: return true;
    default: return false;
    }
}

bool dtype_is_int(vki_dtype t)
{
    switch (t) {
    case VKI_DTYPE_UINT8: case VKI_DTYPE_INT8: case VKI_DTYPE_UINT16: case VKI_DTYPE_INT16:
    case VKI_DTYPE_INT32: case VKI_DTYPE_INT64: case VKI_DTYPE_BOOL: case VKI_DTYPE_UINT32:
    case VKI_DTYPE_UINT64: case VKI_DTYPE_UINT4: case VKI_DTYPE_INT4: case VKI_DTYPE_UINT2:
    case VKI_DTYPE_INT2: return true;
    default: return false;
    }
}

bool dtype_is_minifloat(vki_dtype t)
{
    return t == VKI_DTYPE_FLOAT8E4M3FN || t == VKI_DTYPE_FLOAT8E4M3FNUZ || t == VKI_DTYPE_FLOAT8E5M2 ||
           t == VKI_DTYPE_FLOAT8E5M2FNUZ || t == VKI_DTYPE_FLOAT4E2M1 || t == VKI_DTYPE_FLOAT8E8M0 ||
           t == VKI_DTYPE_FLOAT6E2M3 || t == VKI_DTYPE_FLOAT6E3M2;
}

/* Every numeric dtype runs (strings and complex do not). */
bool dtype_gpu_supported(vki_dtype t) { return dtype_is_float(t) || dtype_is_int(t); }

/* The small float formats: exponent and mantissa bits, bias, largest finite value, and what
 * they lack (fn: no infinity, NaN is all ones; fnuz: no infinity and no -0, NaN is 0x80;
 * float4e2m1 and float6: neither infinity nor NaN). */
typedef struct minifloat {
    int bits, man, bias;
    double max;
    enum { MF_IEEE, MF_FN, MF_FNUZ, MF_NONE } special;
} minifloat;

static const minifloat *minifloat_of(vki_dtype t)
{
    static const minifloat e4m3fn = {8, 3, 7, 448.0, MF_FN}, e4m3fnuz = {8, 3, 8, 240.0, MF_FNUZ},
                           e5m2 = {8, 2, 15, 57344.0, MF_IEEE}, e5m2fnuz = {8, 2, 16, 57344.0, MF_FNUZ},
                           e2m1 = {4, 1, 1, 6.0, MF_NONE}, e2m3 = {6, 3, 1, 7.5, MF_NONE},
                           e3m2 = {6, 2, 3, 28.0, MF_NONE};
    switch (t) {
    case VKI_DTYPE_FLOAT8E4M3FN: return &e4m3fn;
    case VKI_DTYPE_FLOAT8E4M3FNUZ: return &e4m3fnuz;
    case VKI_DTYPE_FLOAT8E5M2: return &e5m2;
    case VKI_DTYPE_FLOAT8E5M2FNUZ: return &e5m2fnuz;
    case VKI_DTYPE_FLOAT4E2M1: return &e2m1;
    case VKI_DTYPE_FLOAT6E2M3: return &e2m3;
    case VKI_DTYPE_FLOAT6E3M2: return &e3m2;
    default: return NULL;
    }
}

uint8_t e8m0_round(float v, bool saturate, int round_mode)
{
    uint32_t b;
    memcpy(&b, &v, 4);
    uint32_t e = (b >> 23) & 0xff;
    if (e == 0xff) return 0xff;
    bool up = false;
    if (round_mode == E8M0_UP) up = (b & 0x7fffff) != 0;
    if (round_mode == E8M0_NEAREST) up = (b & 0x400000) && ((b & 0x200000) || (b & 0x1fffff) || e > 0);
    if (up && saturate && e == 0xfe) up = false;
    return (uint8_t)(e + up);
}

double minifloat_decode(vki_dtype t, uint8_t code)
{
    if (t == VKI_DTYPE_FLOAT8E8M0) return code == 0xff ? NAN : ldexp(1.0, code - 127);
    const minifloat *f = minifloat_of(t);
    int ebits = f->bits - 1 - f->man;
    unsigned sign = (code >> (f->bits - 1)) & 1, e = (code >> f->man) & ((1u << ebits) - 1), m = code & ((1u << f->man) - 1);
    unsigned magnitude = code & ((1u << (f->bits - 1)) - 1);
    if (f->special == MF_FNUZ && code == 0x80) return NAN;
    if (f->special == MF_FN && magnitude == 0x7f) return sign ? -NAN : NAN;
    if (f->special == MF_IEEE && e == (1u << ebits) - 1) return m ? (sign ? -NAN : NAN) : sign ? -INFINITY : INFINITY;
    double v = e ? ldexp(1.0 + ldexp(m, -f->man), (int)e - f->bias) : ldexp(m, 1 - f->bias - f->man);
    return sign ? -v : v;
}

double minifloat_round(vki_dtype t, double v, bool saturate)
{
    if (t == VKI_DTYPE_FLOAT8E8M0) return minifloat_decode(t, e8m0_round((float)v, saturate, E8M0_UP));
    const minifloat *f = minifloat_of(t);
    if (isnan(v)) return f->special == MF_NONE ? 0.0 : v; /* float4/float6 have no NaN: 0, as ml_dtypes */
    double a = fabs(v);
    if (saturate || f->special == MF_NONE) a = fmin(a, f->max);
    if (isinf(a)) return f->special == MF_IEEE ? v : NAN;
    int e = a > 0 ? ilogb(a) : 0;
    if (e < 1 - f->bias) e = 1 - f->bias; /* subnormal: the quantum of the smallest exponent */
    double q = ldexp(1.0, e - f->man), r = nearbyint(a / q) * q; /* ties to even */
    if (r > f->max) return f->special == MF_IEEE ? (signbit(v) ? -INFINITY : INFINITY) : NAN;
    if (r == 0 && f->special == MF_FNUZ) return 0.0;
    return signbit(v) ? -r : r;
}

uint8_t minifloat_encode(vki_dtype t, double v, bool saturate)
{
    if (t == VKI_DTYPE_FLOAT8E8M0) { /* a value of the format packed exactly (others: rounded down) */
        if (isnan(v) || isinf(v)) return 0xff;
        int e = v > 0 ? ilogb(v) : -127;
        return (uint8_t)(e < -127 ? 0 : e > 127 ? 254 : e + 127);
    }
    const minifloat *f = minifloat_of(t);
    double r = minifloat_round(t, v, saturate);
    unsigned sign = signbit(r) ? 1u << (f->bits - 1) : 0;
    int ebits = f->bits - 1 - f->man;
    if (isnan(r)) return (uint8_t)(f->special == MF_FNUZ ? 0x80 : f->special == MF_FN ? sign | 0x7f : sign | 0x7e);
    if (isinf(r)) return (uint8_t)(sign | (((1u << ebits) - 1) << f->man));
    double a = fabs(r);
    if (a == 0) return (uint8_t)sign;
    int e = ilogb(a);
    if (e < 1 - f->bias) return (uint8_t)(sign | (unsigned)ldexp(a, f->bias - 1 + f->man)); /* subnormal */
    unsigned m = (unsigned)(ldexp(a, f->man - e) - ldexp(1.0, f->man));
    return (uint8_t)(sign | ((unsigned)(e + f->bias) << f->man) | m);
}

/* A 4- or 2-bit integer's host byte, wrapped to its width (the signed ones sign-extended). */
static int32_t small_int(vki_dtype t, int64_t v)
{
    switch (t) {
    case VKI_DTYPE_UINT4: return (int32_t)(v & 15);
    case VKI_DTYPE_INT4: return (int32_t)((v & 15) ^ 8) - 8;
    case VKI_DTYPE_UINT2: return (int32_t)(v & 3);
    case VKI_DTYPE_INT2: return (int32_t)((v & 3) ^ 2) - 2;
    default: return (int32_t)v;
    }
}

int64_t shape_numel(const int64_t *dims, int rank)
{
    /* saturates at INT64_MAX rather than overflow: dims come from files, and a product too
     * large for any tensor must stay too large (checks compare it with 2^40) */
    int64_t n = 1;
    bool saturated = false;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 0) return 0;
        if (dims[i] < 0) { /* symbolic (-1) dims: the plain product, as callers expect */
            n = 1;
            for (int k = 0; k < rank; k++) n *= dims[k];
            return n;
        }
        if (n > INT64_MAX / dims[i]) saturated = true;
        else n *= dims[i];
    }
    return saturated ? INT64_MAX : n;
}

const char *shape_str(const int64_t *dims, int rank, char *buf, size_t size)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, size - o, "[");
    for (int i = 0; i < rank && o < size; i++)
        o += (size_t)snprintf(buf + o, size - o, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (o < size) snprintf(buf + o, size - o, "]");
    return buf;
}

float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: renormalize */
            exp = 127 - 15 + 1;
            while (!(man & 1024)) {
                man <<= 1;
                exp--;
            }
            bits = sign | (exp << 23) | ((man & 1023) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 255, man = x & 0x7fffff;
    if (exp == 255) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00);
    if (e <= 0) { /* subnormal or zero, round to nearest even */
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000;
        int shift = 14 - e;
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++; /* may carry into exp: ok */
    return (uint16_t)half;
}

float bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

bool convert_to_gpu(vki_dtype t, const void *src, uint32_t *dst, size_t count, size_t *bad_index)
{
    const unsigned char *s = src;
    if (t == VKI_DTYPE_FLOAT || t == VKI_DTYPE_INT32) { /* already the GPU's form: the hot path */
        memcpy(dst, src, count * 4);
        return true;
    }
    for (size_t i = 0; i < count; i++) {
        int32_t iv = 0;
        float fv;
        switch (t) {
        case VKI_DTYPE_FLOAT: memcpy(&dst[i], s + 4 * i, 4); continue;
        case VKI_DTYPE_INT32: memcpy(&dst[i], s + 4 * i, 4); continue;
        case VKI_DTYPE_FLOAT16: {
            uint16_t h;
            memcpy(&h, s + 2 * i, 2);
            fv = half_to_float(h);
            memcpy(&dst[i], &fv, 4);
            continue;
        }
        case VKI_DTYPE_BFLOAT16: {
            uint16_t h;
            memcpy(&h, s + 2 * i, 2);
            fv = bf16_to_float(h);
            memcpy(&dst[i], &fv, 4);
            continue;
        }
        case VKI_DTYPE_INT64: {
            int64_t v;
            memcpy(&v, s + 8 * i, 8);
            if (v < INT32_MIN || v > INT32_MAX) {
                if (bad_index) *bad_index = i;
                return false;
            }
            iv = (int32_t)v;
            break;
        }
        case VKI_DTYPE_UINT32: case VKI_DTYPE_UINT64: {
            uint64_t v = 0;
            if (t == VKI_DTYPE_UINT32) {
                uint32_t w;
                memcpy(&w, s + 4 * i, 4);
                v = w;
            } else {
                memcpy(&v, s + 8 * i, 8);
            }
            if (v > INT32_MAX) {
                if (bad_index) *bad_index = i;
                return false;
            }
            iv = (int32_t)v;
            break;
        }
        case VKI_DTYPE_DOUBLE: { /* beyond float32's range becomes +-inf, as a C cast rounds */
            double v;
            memcpy(&v, s + 8 * i, 8);
            fv = fabs(v) > FLT_MAX && !isinf(v) ? (float)copysign(INFINITY, v) : (float)v;
            memcpy(&dst[i], &fv, 4);
            continue;
        }
        case VKI_DTYPE_FLOAT8E4M3FN: case VKI_DTYPE_FLOAT8E4M3FNUZ: case VKI_DTYPE_FLOAT8E5M2:
        case VKI_DTYPE_FLOAT8E5M2FNUZ: case VKI_DTYPE_FLOAT4E2M1: case VKI_DTYPE_FLOAT8E8M0:
        case VKI_DTYPE_FLOAT6E2M3: case VKI_DTYPE_FLOAT6E3M2:
            fv = (float)host_read_f64(t, s, i); /* exact */
            memcpy(&dst[i], &fv, 4);
            continue;
        case VKI_DTYPE_UINT4: case VKI_DTYPE_INT4: case VKI_DTYPE_UINT2: case VKI_DTYPE_INT2:
            iv = small_int(t, s[i]);
            break;
        case VKI_DTYPE_UINT8: iv = s[i]; break;
        case VKI_DTYPE_INT8: iv = (int8_t)s[i]; break;
        case VKI_DTYPE_BOOL: iv = s[i] != 0; break;
        case VKI_DTYPE_UINT16: {
            uint16_t v;
            memcpy(&v, s + 2 * i, 2);
            iv = v;
            break;
        }
        case VKI_DTYPE_INT16: {
            int16_t v;
            memcpy(&v, s + 2 * i, 2);
            iv = v;
            break;
        }
        default: if (bad_index) *bad_index = i; return false;
        }
        memcpy(&dst[i], &iv, 4);
    }
    return true;
}

void convert_from_gpu(vki_dtype t, const uint32_t *src, void *dst, size_t count)
{
    unsigned char *d = dst;
    if (t == VKI_DTYPE_FLOAT || t == VKI_DTYPE_INT32) {
        memcpy(dst, src, count * 4);
        return;
    }
    for (size_t i = 0; i < count; i++) {
        int32_t iv;
        float fv;
        memcpy(&iv, &src[i], 4);
        memcpy(&fv, &src[i], 4);
        switch (t) {
        case VKI_DTYPE_FLOAT: case VKI_DTYPE_INT32: memcpy(d + 4 * i, &src[i], 4); break;
        case VKI_DTYPE_FLOAT16: { uint16_t h = float_to_half(fv); memcpy(d + 2 * i, &h, 2); break; }
        case VKI_DTYPE_BFLOAT16: { uint16_t h = float_to_bf16(fv); memcpy(d + 2 * i, &h, 2); break; }
        case VKI_DTYPE_INT64: case VKI_DTYPE_UINT64: { int64_t v = iv; memcpy(d + 8 * i, &v, 8); break; }
        case VKI_DTYPE_UINT32: memcpy(d + 4 * i, &iv, 4); break; /* negative: wrapped, as uint32 arithmetic */
        case VKI_DTYPE_DOUBLE: { double v = fv; memcpy(d + 8 * i, &v, 8); break; }
        case VKI_DTYPE_FLOAT8E4M3FN: case VKI_DTYPE_FLOAT8E4M3FNUZ: case VKI_DTYPE_FLOAT8E5M2:
        case VKI_DTYPE_FLOAT8E5M2FNUZ: case VKI_DTYPE_FLOAT4E2M1: case VKI_DTYPE_FLOAT8E8M0:
        case VKI_DTYPE_FLOAT6E2M3: case VKI_DTYPE_FLOAT6E3M2: /* values of the format (Cast rounded them): exact */
            d[i] = minifloat_encode(t, fv, false);
            break;
        case VKI_DTYPE_UINT4: case VKI_DTYPE_INT4: case VKI_DTYPE_UINT2: case VKI_DTYPE_INT2:
            d[i] = (unsigned char)small_int(t, iv);
            break;
        case VKI_DTYPE_UINT8: case VKI_DTYPE_INT8: d[i] = (unsigned char)iv; break;
        case VKI_DTYPE_BOOL: d[i] = iv != 0; break;
        case VKI_DTYPE_UINT16: case VKI_DTYPE_INT16: { uint16_t v = (uint16_t)iv; memcpy(d + 2 * i, &v, 2); break; }
        default: break;
        }
    }
}

gpu_storage storage_native(vki_dtype t)
{
    switch (t) {
    case VKI_DTYPE_FLOAT16: return GPU_F16;
    case VKI_DTYPE_BFLOAT16: return GPU_BF16;
    case VKI_DTYPE_INT16: return GPU_I16;
    case VKI_DTYPE_UINT16: return GPU_U16;
    case VKI_DTYPE_INT8: return GPU_I8;
    case VKI_DTYPE_UINT8: return GPU_U8;
    case VKI_DTYPE_BOOL: return GPU_BOOL;
    case VKI_DTYPE_DOUBLE: return GPU_F64;
    default: return GPU_W32;
    }
}

uint32_t storage_size(gpu_storage s)
{
    switch (s) {
    case GPU_W32: return 4;
    case GPU_F64: return 8;
    case GPU_F16: case GPU_BF16: case GPU_I16: case GPU_U16: return 2;
    default: return 1;
    }
}

const char *storage_name(gpu_storage s)
{
    static const char *names[] = {"w32", "f16", "bf16", "i16", "u16", "i8", "u8", "bool", "f64"};
    return (unsigned)s < GPU_STORAGE_COUNT ? names[s] : "?";
}

bool host_to_storage(vki_dtype t, const void *src, gpu_storage s, void *dst, size_t count, size_t *bad_index)
{
    if (!dtype_gpu_supported(t)) {
        if (bad_index) *bad_index = 0;
        return false;
    }
    if (s == GPU_W32) return convert_to_gpu(t, src, dst, count, bad_index);
    if (s == GPU_F64 && t != VKI_DTYPE_DOUBLE) { /* a float dtype widened for a float64 kernel: exact */
        double *d = dst;
        for (size_t i = 0; i < count; i++) d[i] = host_read_f64(t, src, i);
        return true;
    }
    if (s == storage_native(t)) { /* the dtype's own bytes: the hot path */
        if (t == VKI_DTYPE_BOOL) { /* any non-zero byte is true; kernels see 0 or 1 */
            const uint8_t *b = src;
            uint8_t *d = dst;
            for (size_t i = 0; i < count; i++) d[i] = b[i] != 0;
        } else {
            memcpy(dst, src, count * storage_size(s));
        }
        return true;
    }
    /* a float dtype narrowed (the fp16 execution mode holds float32 values as halves) */
    uint16_t *d = dst;
    for (size_t i = 0; i < count; i++) {
        float f = (float)host_read_f64(t, src, i);
        d[i] = s == GPU_F16 ? float_to_half(f) : float_to_bf16(f);
    }
    return true;
}

void storage_to_host(vki_dtype t, gpu_storage s, const void *src, void *dst, size_t count)
{
    if (s == GPU_W32) {
        convert_from_gpu(t, src, dst, count);
    } else if (s == storage_native(t)) {
        memcpy(dst, src, count * storage_size(s));
    } else if (s == GPU_F64) {
        const double *d = src;
        for (size_t i = 0; i < count; i++) host_write_f64(t, dst, i, d[i]);
    } else { /* halves of a wider float dtype */
        const uint16_t *h = src;
        for (size_t i = 0; i < count; i++)
            host_write_f64(t, dst, i, s == GPU_F16 ? half_to_float(h[i]) : bf16_to_float(h[i]));
    }
}

double host_read_f64(vki_dtype t, const void *data, size_t i)
{
    const unsigned char *s = data;
    switch (t) {
    case VKI_DTYPE_FLOAT: { float v; memcpy(&v, s + 4 * i, 4); return v; }
    case VKI_DTYPE_DOUBLE: { double v; memcpy(&v, s + 8 * i, 8); return v; }
    case VKI_DTYPE_FLOAT16: { uint16_t h; memcpy(&h, s + 2 * i, 2); return half_to_float(h); }
    case VKI_DTYPE_BFLOAT16: { uint16_t h; memcpy(&h, s + 2 * i, 2); return bf16_to_float(h); }
    case VKI_DTYPE_FLOAT8E4M3FN: case VKI_DTYPE_FLOAT8E4M3FNUZ: case VKI_DTYPE_FLOAT8E5M2:
    case VKI_DTYPE_FLOAT8E5M2FNUZ: case VKI_DTYPE_FLOAT8E8M0: return minifloat_decode(t, s[i]);
    case VKI_DTYPE_FLOAT4E2M1: return minifloat_decode(t, s[i] & 15);
    case VKI_DTYPE_FLOAT6E2M3: case VKI_DTYPE_FLOAT6E3M2: return minifloat_decode(t, s[i] & 63);
    default: return (double)host_read_i64(t, data, i);
    }
}

int64_t host_read_i64(vki_dtype t, const void *data, size_t i)
{
    const unsigned char *s = data;
    switch (t) {
    case VKI_DTYPE_INT64: case VKI_DTYPE_UINT64: { int64_t v; memcpy(&v, s + 8 * i, 8); return v; }
    case VKI_DTYPE_INT32: { int32_t v; memcpy(&v, s + 4 * i, 4); return v; }
    case VKI_DTYPE_UINT32: { uint32_t v; memcpy(&v, s + 4 * i, 4); return v; }
    case VKI_DTYPE_INT16: { int16_t v; memcpy(&v, s + 2 * i, 2); return v; }
    case VKI_DTYPE_UINT16: { uint16_t v; memcpy(&v, s + 2 * i, 2); return v; }
    case VKI_DTYPE_INT8: return (int8_t)s[i];
    case VKI_DTYPE_UINT8: case VKI_DTYPE_BOOL: return s[i];
    case VKI_DTYPE_UINT4: case VKI_DTYPE_INT4: case VKI_DTYPE_UINT2: case VKI_DTYPE_INT2: return small_int(t, s[i]);
    default: {
        double v = host_read_f64(t, data, i);
        return isnan(v) ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v;
    }
    }
}

void host_write_f64(vki_dtype t, void *data, size_t i, double v)
{
    unsigned char *d = data;
    switch (t) {
    case VKI_DTYPE_FLOAT: { float f = (float)v; memcpy(d + 4 * i, &f, 4); return; }
    case VKI_DTYPE_DOUBLE: memcpy(d + 8 * i, &v, 8); return;
    case VKI_DTYPE_FLOAT16: { uint16_t h = float_to_half((float)v); memcpy(d + 2 * i, &h, 2); return; }
    case VKI_DTYPE_BFLOAT16: { uint16_t h = float_to_bf16((float)v); memcpy(d + 2 * i, &h, 2); return; }
    case VKI_DTYPE_BOOL: d[i] = v != 0; return;
    case VKI_DTYPE_FLOAT8E4M3FN: case VKI_DTYPE_FLOAT8E4M3FNUZ: case VKI_DTYPE_FLOAT8E5M2:
    case VKI_DTYPE_FLOAT8E5M2FNUZ: case VKI_DTYPE_FLOAT4E2M1: case VKI_DTYPE_FLOAT8E8M0:
    case VKI_DTYPE_FLOAT6E2M3: case VKI_DTYPE_FLOAT6E3M2:
        d[i] = minifloat_encode(t, v, false);
        return;
    default: /* an integer: truncated toward zero, NaN as 0 */
        host_write_i64(t, data, i, isnan(v) ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v);
        return;
    }
}

void host_write_i64(vki_dtype t, void *data, size_t i, int64_t v)
{
    unsigned char *d = data;
    switch (t) {
    case VKI_DTYPE_INT64: case VKI_DTYPE_UINT64: memcpy(d + 8 * i, &v, 8); return;
    case VKI_DTYPE_INT32: case VKI_DTYPE_UINT32: { int32_t x = (int32_t)v; memcpy(d + 4 * i, &x, 4); return; }
    case VKI_DTYPE_INT16: case VKI_DTYPE_UINT16: { int16_t x = (int16_t)v; memcpy(d + 2 * i, &x, 2); return; }
    case VKI_DTYPE_INT8: case VKI_DTYPE_UINT8: d[i] = (unsigned char)v; return;
    case VKI_DTYPE_BOOL: d[i] = v != 0; return;
    case VKI_DTYPE_UINT4: case VKI_DTYPE_INT4: case VKI_DTYPE_UINT2: case VKI_DTYPE_INT2:
        d[i] = (unsigned char)small_int(t, v);
        return;
    default: host_write_f64(t, data, i, (double)v); return;
    }
}

void dtype_range_message(vki_dtype t, const void *data, size_t i, char *buf, size_t size)
{
    if (t == VKI_DTYPE_UINT64 || t == VKI_DTYPE_UINT32)
        snprintf(buf, size, "(%s) holds %llu at index %zu, outside the range 0..2147483647 vkinfer holds %s in on the GPU "
                 "(as int32)", vki_dtype_name(t), (unsigned long long)host_read_i64(t, data, i) & (t == VKI_DTYPE_UINT32 ? 0xffffffffull : ~0ull),
                 i, vki_dtype_name(t));
    else
        snprintf(buf, size, "(%s) holds %lld at index %zu, outside the int32 range vkinfer narrows %s to on the GPU",
                 vki_dtype_name(t), (long long)host_read_i64(t, data, i), i, vki_dtype_name(t));
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
