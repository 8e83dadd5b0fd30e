/* Dtype facts and the host-side conversions between ONNX dtypes and their GPU storages. */
#include "util.h"

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
    default: break;
    }
    /* ONNX dtypes vkinfer has no enum value for: named in messages only */
    switch ((int)t) {
    case 14: return "complex64";
    case 15: return "complex128";
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    case 23: return "float4e2m1";
    case 24: return "float8e8m0";
    case 25: return "uint2";
    case 26: return "int2";
    default: return "unknown";
    }
}

size_t vki_dtype_size(vki_dtype t)
{
    switch (t) {
    case VKI_DTYPE_UINT8: case VKI_DTYPE_INT8: case VKI_DTYPE_BOOL: return 1;
    case VKI_DTYPE_UINT16: case VKI_DTYPE_INT16: case VKI_DTYPE_FLOAT16:
    case VKI_DTYPE_BFLOAT16: return 2;
    case VKI_DTYPE_FLOAT: case VKI_DTYPE_INT32: case VKI_DTYPE_UINT32: return 4;
    case VKI_DTYPE_INT64: case VKI_DTYPE_DOUBLE: case VKI_DTYPE_UINT64: return 8;
    default: return 0;
    }
}

bool dtype_is_float(vki_dtype t)
{
    return t == VKI_DTYPE_FLOAT || t == VKI_DTYPE_FLOAT16 || t == VKI_DTYPE_BFLOAT16;
}

bool dtype_is_int(vki_dtype t)
{
    switch (t) {
    case VKI_DTYPE_UINT8: case VKI_DTYPE_INT8: case VKI_DTYPE_UINT16: case VKI_DTYPE_INT16:
    case VKI_DTYPE_INT32: case VKI_DTYPE_INT64: case VKI_DTYPE_BOOL: return true;
    default: return false;
    }
}

/* float64, uint32 and uint64 do not fit the 4-byte GPU form exactly; they are refused. */
bool dtype_gpu_supported(vki_dtype t) { return dtype_is_float(t) || dtype_is_int(t); }

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
        case VKI_DTYPE_INT64: { int64_t v = iv; memcpy(d + 8 * i, &v, 8); break; }
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
    default: return GPU_W32;
    }
}

uint32_t storage_size(gpu_storage s)
{
    switch (s) {
    case GPU_W32: return 4;
    case GPU_F16: case GPU_BF16: case GPU_I16: case GPU_U16: return 2;
    default: return 1;
    }
}

const char *storage_name(gpu_storage s)
{
    static const char *names[] = {"w32", "f16", "bf16", "i16", "u16", "i8", "u8", "bool"};
    return (unsigned)s < GPU_STORAGE_COUNT ? names[s] : "?";
}

bool host_to_storage(vki_dtype t, const void *src, gpu_storage s, void *dst, size_t count, size_t *bad_index)
{
    if (!dtype_gpu_supported(t)) {
        if (bad_index) *bad_index = 0;
        return false;
    }
    if (s == GPU_W32) return convert_to_gpu(t, src, dst, count, bad_index);
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
    default: return (int64_t)host_read_f64(t, data, i);
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
    default: host_write_i64(t, data, i, (int64_t)v); return;
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
    default: host_write_f64(t, data, i, (double)v); return;
    }
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
