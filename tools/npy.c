/* NumPy .npy files for the CLI: a reader that checks every field of a possibly hostile file
 * (format v1/v2/v3, either byte order, C or Fortran order) and a v1.0 writer. */
#define _POSIX_C_SOURCE 200809L /* fileno */
#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* Real headers are a few hundred bytes; a bigger claim is a broken or hostile file. */
#define NPY_MAX_HEADER (1u << 20)

static int fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && size) vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return -1;
}

static bool host_is_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* ---- header parsing: the header is a Python dict literal written by numpy ---------------- */

typedef struct header_parser {
    const char *p, *end;
} header_parser;

static void skip_space(header_parser *h)
{
    while (h->p < h->end && isspace((unsigned char)*h->p)) h->p++;
}

static bool accept(header_parser *h, char c)
{
    skip_space(h);
    if (h->p < h->end && *h->p == c) {
        h->p++;
        return true;
    }
    return false;
}

/* A quoted Python string without escapes (numpy never writes any in these fields). */
static bool parse_string(header_parser *h, char *buf, size_t size)
{
    skip_space(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return false;
    char quote = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != quote) {
        if (*h->p == '\\' || n + 1 >= size) return false;
        buf[n++] = *h->p++;
    }
    if (h->p >= h->end) return false;
    h->p++;
    buf[n] = 0;
    return true;
}

static bool parse_word(header_parser *h, const char *word)
{
    skip_space(h);
    size_t n = strlen(word);
    if ((size_t)(h->end - h->p) < n || memcmp(h->p, word, n)) return false;
    h->p += n;
    return true;
}

/* A non-negative decimal integer (Python 2 files may end one with 'L'). */
static bool parse_dim(header_parser *h, int64_t *out)
{
    skip_space(h);
    if (h->p >= h->end || !isdigit((unsigned char)*h->p)) return false;
    int64_t v = 0;
    while (h->p < h->end && isdigit((unsigned char)*h->p)) {
        int digit = *h->p++ - '0';
        if (v > (INT64_MAX - digit) / 10) return false;
        v = v * 10 + digit;
    }
    if (h->p < h->end && *h->p == 'L') h->p++;
    *out = v;
    return true;
}

typedef struct npy_header {
    char descr[32];
    bool fortran_order;
    int32_t rank;
    int64_t dims[VKI_MAX_RANK];
} npy_header;

static int parse_shape(header_parser *h, npy_header *hd, char *err, size_t err_size)
{
    if (!accept(h, '(')) return fail(err, err_size, "'shape' is not a tuple");
    hd->rank = 0;
    if (accept(h, ')')) return 0;
    for (;;) {
        int64_t d;
        if (!parse_dim(h, &d)) return fail(err, err_size, "'shape' holds something other than non-negative integers");
        if (hd->rank == VKI_MAX_RANK) return fail(err, err_size, "rank above %d, the most vkinfer supports", VKI_MAX_RANK);
        hd->dims[hd->rank++] = d;
        bool comma = accept(h, ',');
        if (accept(h, ')')) return 0;
        if (!comma) return fail(err, err_size, "'shape' is not a well-formed tuple");
    }
}

static int parse_header(const char *text, size_t len, npy_header *hd, char *err, size_t err_size)
{
    header_parser h = {text, text + len};
    bool have_descr = false, have_order = false, have_shape = false;
    memset(hd, 0, sizeof *hd);
    if (!accept(&h, '{')) return fail(err, err_size, "the header is not a dict");
    while (!accept(&h, '}')) {
        char key[32];
        if (!parse_string(&h, key, sizeof key) || !accept(&h, ':'))
            return fail(err, err_size, "the header dict is malformed");
        if (!strcmp(key, "descr")) {
            skip_space(&h);
            if (h.p < h.end && *h.p == '[')
                return fail(err, err_size, "structured (record) dtypes are not supported; save a plain numeric array");
            if (!parse_string(&h, hd->descr, sizeof hd->descr)) return fail(err, err_size, "'descr' is not a dtype string");
            have_descr = true;
        } else if (!strcmp(key, "fortran_order")) {
            if (parse_word(&h, "True")) hd->fortran_order = true;
            else if (parse_word(&h, "False")) hd->fortran_order = false;
            else return fail(err, err_size, "'fortran_order' is neither True nor False");
            have_order = true;
        } else if (!strcmp(key, "shape")) {
            if (parse_shape(&h, hd, err, err_size)) return -1;
            have_shape = true;
        } else {
            return fail(err, err_size, "unexpected header key '%s'", key);
        }
        if (!accept(&h, ',')) {
            if (!accept(&h, '}')) return fail(err, err_size, "the header dict is malformed");
            break;
        }
    }
    if (!have_descr || !have_order || !have_shape)
        return fail(err, err_size, "the header lacks '%s'", !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    return 0;
}

/* Maps a numpy dtype string to vkinfer's dtype; *swap says the bytes need reversing. */
static int parse_descr(const char *descr, vki_dtype *dtype, bool *swap, char *err, size_t err_size)
{
    char order = descr[0];
    const char *type = descr + 1;
    if (order != '<' && order != '>' && order != '|' && order != '=') {
        order = '=';
        type = descr;
    }
    static const struct {
        const char *code;
        vki_dtype dtype;
    } known[] = {
        {"f4", VKI_DTYPE_FLOAT}, {"f2", VKI_DTYPE_FLOAT16}, {"i1", VKI_DTYPE_INT8},   {"i2", VKI_DTYPE_INT16},
        {"i4", VKI_DTYPE_INT32}, {"i8", VKI_DTYPE_INT64},   {"u1", VKI_DTYPE_UINT8},  {"u2", VKI_DTYPE_UINT16},
        {"b1", VKI_DTYPE_BOOL},  {"?", VKI_DTYPE_BOOL},     {"f8", VKI_DTYPE_DOUBLE}, {"u4", VKI_DTYPE_UINT32},
        {"u8", VKI_DTYPE_UINT64},
    };
    *dtype = VKI_DTYPE_UNDEFINED;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (!strcmp(type, known[i].code)) *dtype = known[i].dtype;
    if (*dtype == VKI_DTYPE_UNDEFINED)
        return fail(err, err_size, "dtype '%s' is not supported (float32/16/64, int8/16/32/64, uint8/16/32/64 and bool "
                    "are)", descr);
    bool little = host_is_little_endian();
    *swap = vki_dtype_size(*dtype) > 1 && ((order == '<' && !little) || (order == '>' && little));
    return 0;
}

static void swap_bytes(uint8_t *data, size_t count, size_t item)
{
    for (size_t i = 0; i < count; i++, data += item)
        for (size_t a = 0, b = item - 1; a < b; a++, b--) {
            uint8_t t = data[a];
            data[a] = data[b];
            data[b] = t;
        }
}

/* Fortran order is the C order of the reversed shape: walk the C multi-index and read the
 * element at its column-major offset. */
static void fortran_to_c(const uint8_t *src, uint8_t *dst, const int64_t *dims, int32_t rank, size_t count, size_t item)
{
    int64_t idx[VKI_MAX_RANK] = {0}, stride[VKI_MAX_RANK];
    int64_t s = 1;
    for (int d = 0; d < rank; d++) {
        stride[d] = s;
        s *= dims[d];
    }
    for (size_t i = 0; i < count; i++) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++) off += idx[d] * stride[d];
        memcpy(dst + i * item, src + (size_t)off * item, item);
        for (int d = rank - 1; d >= 0; d--) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
    }
}

int npy_read(const char *path, npy_array *out, char *err, size_t err_size)
{
    char msg[512];
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, err_size, "%s: %s", path, strerror(errno));
    struct stat st;
    bool regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    uint8_t prefix[12];
    char *header = NULL;
    uint8_t *data = NULL;
    int rc = -1;
    size_t n = fread(prefix, 1, 10, f);
    if (n < 10 || memcmp(prefix, NPY_MAGIC, NPY_MAGIC_LEN)) {
        snprintf(msg, sizeof msg, "not a .npy file (no \\x93NUMPY magic)");
        goto done;
    }
    unsigned major = prefix[6];
    size_t header_len, header_start;
    if (major == 1) {
        header_len = (size_t)prefix[8] | (size_t)prefix[9] << 8;
        header_start = 10;
    } else if (major == 2 || major == 3) {
        if (fread(prefix + 10, 1, 2, f) != 2) {
            snprintf(msg, sizeof msg, "truncated header");
            goto done;
        }
        header_len = (size_t)prefix[8] | (size_t)prefix[9] << 8 | (size_t)prefix[10] << 16 | (size_t)prefix[11] << 24;
        header_start = 12;
    } else {
        snprintf(msg, sizeof msg, "format version %u.%u is not supported (1.x, 2.x and 3.x are)", major, prefix[7]);
        goto done;
    }
    if (header_len == 0 || header_len > NPY_MAX_HEADER) {
        snprintf(msg, sizeof msg, "header length %zu is out of range", header_len);
        goto done;
    }
    if (regular && (uint64_t)st.st_size < header_start + header_len) {
        snprintf(msg, sizeof msg, "truncated header (file has %lld bytes, the header claims %zu)", (long long)st.st_size,
                 header_start + header_len);
        goto done;
    }
    header = malloc(header_len + 1);
    if (!header) {
        snprintf(msg, sizeof msg, "out of memory");
        goto done;
    }
    if (fread(header, 1, header_len, f) != header_len) {
        snprintf(msg, sizeof msg, "truncated header");
        goto done;
    }
    header[header_len] = 0;
    if (memchr(header, 0, header_len)) {
        snprintf(msg, sizeof msg, "the header contains a NUL byte");
        goto done;
    }
    npy_header hd;
    bool swap = false;
    char why[256];
    if (parse_header(header, header_len, &hd, why, sizeof why) ||
        parse_descr(hd.descr, &out->dtype, &swap, why, sizeof why)) {
        snprintf(msg, sizeof msg, "%s", why);
        goto done;
    }
    size_t item = vki_dtype_size(out->dtype);
    /* the product of the non-zero dims must fit too: callers multiply dims in any order */
    size_t count = 1, nonzero_count = 1;
    for (int d = 0; d < hd.rank; d++) {
        if (hd.dims[d] && (uint64_t)hd.dims[d] > (uint64_t)INT64_MAX / item / nonzero_count) {
            snprintf(msg, sizeof msg, "shape is too large");
            goto done;
        }
        if (hd.dims[d]) nonzero_count *= (size_t)hd.dims[d];
        count *= (size_t)hd.dims[d];
    }
    size_t bytes = count * item;
    if (regular && (uint64_t)st.st_size - (header_start + header_len) < bytes) {
        snprintf(msg, sizeof msg, "truncated data: the shape needs %zu bytes, the file holds %lld", bytes,
                 (long long)((uint64_t)st.st_size - (header_start + header_len)));
        goto done;
    }
    data = malloc(bytes ? bytes : 1);
    if (!data) {
        snprintf(msg, sizeof msg, "out of memory for %zu bytes", bytes);
        goto done;
    }
    if (fread(data, 1, bytes, f) != bytes) {
        snprintf(msg, sizeof msg, "truncated data: the shape needs %zu bytes", bytes);
        goto done;
    }
    if (swap) swap_bytes(data, count, item);
    if (out->dtype == VKI_DTYPE_BOOL)
        for (size_t i = 0; i < count; i++) data[i] = data[i] != 0;
    if (hd.fortran_order && hd.rank > 1 && count > 1) {
        uint8_t *c_order = malloc(bytes);
        if (!c_order) {
            snprintf(msg, sizeof msg, "out of memory for %zu bytes", bytes);
            goto done;
        }
        fortran_to_c(data, c_order, hd.dims, hd.rank, count, item);
        free(data);
        data = c_order;
    }
    out->rank = hd.rank;
    memcpy(out->dims, hd.dims, sizeof out->dims);
    out->data = data;
    out->bytes = bytes;
    data = NULL;
    rc = 0;
done:
    if (rc) fail(err, err_size, "%s: %s", path, msg);
    free(header);
    free(data);
    fclose(f);
    return rc;
}

void npy_free(npy_array *a)
{
    if (!a) return;
    free(a->data);
    a->data = NULL;
    a->bytes = 0;
}

static float bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

int npy_write(const char *path, vki_dtype dtype, const int64_t *dims, int32_t rank, const void *data, size_t bytes,
              char *err, size_t err_size)
{
    const char *code = NULL;
    switch (dtype) {
    case VKI_DTYPE_FLOAT: case VKI_DTYPE_BFLOAT16: code = "f4"; break; /* bf16 is not a numpy dtype */
    case VKI_DTYPE_FLOAT16: code = "f2"; break;
    case VKI_DTYPE_INT8: code = "i1"; break;
    case VKI_DTYPE_INT16: code = "i2"; break;
    case VKI_DTYPE_INT32: code = "i4"; break;
    case VKI_DTYPE_INT64: code = "i8"; break;
    case VKI_DTYPE_UINT8: code = "u1"; break;
    case VKI_DTYPE_UINT16: code = "u2"; break;
    case VKI_DTYPE_DOUBLE: code = "f8"; break;
    case VKI_DTYPE_UINT32: code = "u4"; break;
    case VKI_DTYPE_UINT64: code = "u8"; break;
    /* no numpy dtype: int4/int2 as int8 values, uint4/uint2 as uint8 values, the float8 and
     * float4 formats as their codes in uint8 (ml_dtypes: a.view(ml_dtypes.float8_e4m3fn)) */
    case VKI_DTYPE_INT4: case VKI_DTYPE_INT2: code = "i1"; break;
    case VKI_DTYPE_UINT4: case VKI_DTYPE_UINT2: case VKI_DTYPE_FLOAT8E4M3FN: case VKI_DTYPE_FLOAT8E4M3FNUZ:
    case VKI_DTYPE_FLOAT8E5M2: case VKI_DTYPE_FLOAT8E5M2FNUZ: case VKI_DTYPE_FLOAT8E8M0: case VKI_DTYPE_FLOAT4E2M1:
    case VKI_DTYPE_FLOAT6E2M3: case VKI_DTYPE_FLOAT6E3M2:
        code = "u1";
        break;
    case VKI_DTYPE_BOOL: code = "b1"; break;
    default: return fail(err, err_size, "%s: cannot write dtype %s to .npy", path, vki_dtype_name(dtype));
    }
    if (rank < 0 || rank > VKI_MAX_RANK) return fail(err, err_size, "%s: rank %d out of range", path, rank);
    size_t item = vki_dtype_size(dtype), count = 1;
    for (int d = 0; d < rank; d++) count *= (size_t)dims[d];
    if (count * item != bytes)
        return fail(err, err_size, "%s: %zu bytes do not match the shape (%zu needed)", path, bytes, count * item);

    char header[512];
    char order = vki_dtype_size(dtype) == 1 ? '|' : host_is_little_endian() ? '<' : '>';
    int len = snprintf(header, sizeof header, "{'descr': '%c%s', 'fortran_order': False, 'shape': (", order, code);
    for (int d = 0; d < rank; d++)
        len += snprintf(header + len, sizeof header - (size_t)len, "%lld%s", (long long)dims[d], rank == 1 ? "," : d + 1 < rank ? ", " : "");
    len += snprintf(header + len, sizeof header - (size_t)len, "), }");
    /* numpy pads with spaces so that the data starts on a 64-byte boundary, ending in '\n' */
    size_t total = 10 + (size_t)len + 1;
    size_t padded = (total + 63) / 64 * 64;
    while ((size_t)len < padded - 10 - 1) header[len++] = ' ';
    header[len++] = '\n';
    uint8_t prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(len & 255), (uint8_t)(len >> 8)};

    FILE *f = fopen(path, "wb");
    if (!f) return fail(err, err_size, "%s: %s", path, strerror(errno));
    bool ok = fwrite(prefix, 1, sizeof prefix, f) == sizeof prefix && fwrite(header, 1, (size_t)len, f) == (size_t)len;
    if (ok && dtype == VKI_DTYPE_BFLOAT16) {
        const uint8_t *src = data;
        for (size_t i = 0; ok && i < count; i++) {
            uint16_t h;
            memcpy(&h, src + 2 * i, 2);
            float v = bf16_to_float(h);
            ok = fwrite(&v, 4, 1, f) == 1;
        }
    } else if (ok && bytes) {
        ok = fwrite(data, 1, bytes, f) == bytes;
    }
    if (fclose(f) != 0) ok = false;
    if (!ok) return fail(err, err_size, "%s: write failed: %s", path, strerror(errno));
    return 0;
}
