/* ONNX ModelProto -> ir_graph. Every length, offset and index is checked: a truncated or
 * hostile file gives VKI_ERROR_MODEL, never a crash. Raw tensor data is not copied. */
#include "onnx_reader.h"

#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>


vki_status reader_bad(const char *what) { return vki_fail(VKI_ERROR_MODEL, "malformed ONNX file: %s", what); }

vki_status reader_oom(void) { return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory reading the model"); }

static char *dup_str(vki_arena *a, const pb_field *f)
{
    return arena_strndup(a, (const char *)f->data, f->len);
}

/* ---- map a file ---- */

static vki_status map_file(const char *path, onnx_model *m, const uint8_t **data, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return vki_fail(VKI_ERROR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return vki_fail(VKI_ERROR_IO, "'%s' is not a regular file", path);
    }
    *len = (size_t)st.st_size;
    if (*len == 0) {
        close(fd);
        *data = (const uint8_t *)"";
        return VKI_OK;
    }
    void *addr = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (addr == MAP_FAILED) return vki_fail(VKI_ERROR_IO, "cannot map '%s': %s", path, strerror(errno));
    onnx_mapping *map = malloc(sizeof *map);
    if (!map) {
        munmap(addr, *len);
        return reader_oom();
    }
    map->addr = addr;
    map->len = *len;
    map->next = m->maps;
    m->maps = map;
    *data = addr;
    return VKI_OK;
}

/* ---- tensors ---- */

static vki_status parse_dims(const pb_field *f, ir_tensor *t)
{
    pb_reader r = f->wire == PB_LEN ? pb_init(f->data, f->len) : pb_init(NULL, 0);
    uint64_t v = f->u;
    do {
        if (f->wire == PB_LEN) {
            if (r.p >= r.end) break;
            if (!pb_read_varint(&r, &v)) return reader_bad("tensor dims");
        }
        if (t->rank >= VKI_MAX_RANK)
            return vki_fail(VKI_ERROR_UNSUPPORTED, "tensor '%s' has more than %d dimensions",
                            t->name ? t->name : "", VKI_MAX_RANK);
        if ((int64_t)v < 0) return reader_bad("negative tensor dimension");
        t->dims[t->rank++] = (int64_t)v;
    } while (f->wire == PB_LEN);
    return VKI_OK;
}

/* Decodes repeated scalar fields (packed or not) into host layout of dtype t. */
static vki_status decode_typed(const pb_field *fields, int nfields, int which, ir_tensor *t,
                               size_t numel, vki_arena *arena)
{
    size_t esize = vki_dtype_size(t->dtype);
    if (esize == 0) return vki_fail(VKI_ERROR_UNSUPPORTED, "tensor '%s' has dtype %s, which has no numeric data",
                                    t->name ? t->name : "", vki_dtype_name(t->dtype));
    /* count first: dims are the file's word, and a hostile file must not make us allocate
     * gigabytes for a handful of data elements */
    size_t have = 0;
    for (int k = 0; k < nfields; k++) {
        bool ok;
        have += pb_packed_count(&fields[k], which == 4 ? 4 : which == 10 ? 8 : 0, &ok);
        if (!ok) return reader_bad("truncated packed tensor data");
    }
    if (have != numel)
        return reader_bad(have > numel ? "tensor has more data elements than its dims say"
                                : "tensor has fewer data elements than its dims say");
    unsigned char *out = arena_alloc(arena, numel * esize);
    if (!out) return reader_oom();
    size_t n = 0;
    for (int k = 0; k < nfields; k++) {
        const pb_field *f = &fields[k];
        pb_reader r = pb_init(f->data, f->len);
        bool packed = f->wire == PB_LEN;
        for (;;) {
            uint64_t raw;
            if (packed) {
                if (r.p >= r.end) break;
                if (which == 4 || which == 10) { /* fixed width */
                    size_t w = which == 4 ? 4 : 8;
                    if ((size_t)(r.end - r.p) < w) return reader_bad("truncated packed tensor data");
                    raw = 0;
                    for (size_t i = 0; i < w; i++) raw |= (uint64_t)r.p[i] << (8 * i);
                    r.p += w;
                } else if (!pb_read_varint(&r, &raw)) {
                    return reader_bad("truncated packed tensor data");
                }
            } else {
                raw = f->u;
            }
            if (n >= numel) return reader_bad("tensor has more data elements than its dims say");
            unsigned char *d = out + n * esize;
            switch (t->dtype) {
            case VKI_DTYPE_FLOAT16: case VKI_DTYPE_BFLOAT16: case VKI_DTYPE_UINT16:
            case VKI_DTYPE_INT16: { uint16_t v = (uint16_t)raw; memcpy(d, &v, 2); break; }
            case VKI_DTYPE_UINT8: case VKI_DTYPE_INT8: case VKI_DTYPE_BOOL: case VKI_DTYPE_FLOAT8E4M3FN:
            case VKI_DTYPE_FLOAT8E4M3FNUZ: case VKI_DTYPE_FLOAT8E5M2: case VKI_DTYPE_FLOAT8E5M2FNUZ:
            case VKI_DTYPE_FLOAT8E8M0: case VKI_DTYPE_FLOAT6E2M3: case VKI_DTYPE_FLOAT6E3M2:
                *d = (unsigned char)raw;
                break;
            case VKI_DTYPE_FLOAT: case VKI_DTYPE_INT32: case VKI_DTYPE_UINT32: { uint32_t v = (uint32_t)raw; memcpy(d, &v, 4); break; }
            default: memcpy(d, &raw, 8); break;
            }
            n++;
            if (!packed) break;
        }
    }
    if (n != numel) return reader_bad("tensor has fewer data elements than its dims say");
    t->data = out;
    t->bytes = numel * esize;
    return VKI_OK;
}

typedef struct ext_ref {
    const char *location;
    int64_t offset, length;
} ext_ref;

/* The location was already checked by name (no "..", not absolute); a symbolic link, of the
 * file or of a folder on the way, can still lead out of the folder, so the link-free path is
 * compared with the folder's own. The file is then opened by that resolved path; a link swapped
 * in between the check and the open still wins that race (openat2's RESOLVE_BENEATH would close
 * it, but it also refuses absolute links that stay inside the folder). */
static vki_status resolve_inside_folder(const char *dir, const char *path, char real[PATH_MAX], const char *tensor,
                                        const char *loc)
{
    char root[PATH_MAX];
    if (!realpath(dir, root))
        return vki_fail(VKI_ERROR_IO, "cannot open the model's folder '%s': %s", dir, strerror(errno));
    if (!realpath(path, real)) return vki_fail(VKI_ERROR_IO, "cannot open '%s': %s", path, strerror(errno));
    size_t rl = strlen(root);
    if (rl == 1) rl = 0; /* the folder is "/": every path is below it */
    if (strncmp(real, root, rl) != 0 || (real[rl] != '/' && real[rl] != 0))
        return vki_fail(VKI_ERROR_MODEL, "tensor '%s': external data location '%s' leaves the model's folder through a "
                        "symbolic link (it resolves to '%s', outside '%s')", tensor, loc, real, root);
    return VKI_OK;
}

static vki_status load_external(onnx_model *m, ir_tensor *t, const ext_ref *ext, size_t need)
{
    if (!m || !m->dir)
        return vki_fail(VKI_ERROR_MODEL, "tensor '%s' uses external data, which needs a model file path", t->name);
    const char *loc = ext->location;
    if (!loc || !*loc) return reader_bad("external data without a location");
    if (loc[0] == '/' || strstr(loc, "..") || strchr(loc, '\\'))
        return vki_fail(VKI_ERROR_MODEL, "tensor '%s': external data location '%s' leaves the model's folder",
                        t->name, loc);
    char path[PATH_MAX], real[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", m->dir, loc) >= (int)sizeof path) return reader_bad("external data path too long");
    VKI_TRY(resolve_inside_folder(m->dir, path, real, t->name, loc));
    const uint8_t *data;
    size_t len;
    VKI_TRY(map_file(real, m, &data, &len));
    if (ext->offset < 0 || (uint64_t)ext->offset > len) return reader_bad("external data offset past the end of its file");
    size_t avail = len - (size_t)ext->offset;
    size_t want = ext->length >= 0 ? (size_t)ext->length : avail;
    if (want > avail || want != need)
        return vki_fail(VKI_ERROR_MODEL, "tensor '%s': external data in '%s' has %zu bytes at offset %lld, dims need %zu",
                        t->name, loc, want > avail ? avail : want, (long long)ext->offset, need);
    t->data = data + ext->offset;
    t->bytes = need;
    return VKI_OK;
}

/* The 6-, 4- and 2-bit dtypes: ONNX packs them into a little-endian bit stream, the first
 * element in the lowest bits (four float6 in three bytes, two or four of the others to a
 * byte) in raw_data and external data; int32_data holds one packed byte per entry for the 4-
 * and 2-bit kinds and one element per entry for float6 (onnx.helper.make_tensor). vkinfer's
 * host layout is one byte per element (include/vkinfer.h), so they are unpacked. */
static vki_status parse_packed(ir_tensor *t, size_t numel, int bits, const pb_field *raw, const pb_field *typed,
                               int ntyped, const ext_ref *ext, vki_arena *arena, onnx_model *m)
{
    size_t packed = (numel * (size_t)bits + 7) / 8;
    const uint8_t *src;
    if (ext) {
        VKI_TRY(load_external(m, t, ext, packed));
        src = t->data;
    } else if (raw) {
        if (raw->len != packed)
            return vki_fail(VKI_ERROR_MODEL, "malformed ONNX file: tensor '%s' raw_data has %zu bytes, %zu elements of "
                            "%s need %zu", t->name, raw->len, numel, vki_dtype_name(t->dtype), packed);
        src = raw->data;
    } else if (bits == 6) { /* one element per int32_data entry, as float8 */
        return decode_typed(typed, ntyped, 5, t, numel, arena);
    } else {
        vki_dtype dtype = t->dtype;
        t->dtype = VKI_DTYPE_UINT8; /* the packed bytes, one per int32_data entry */
        vki_status st = decode_typed(typed, ntyped, 5, t, packed, arena);
        t->dtype = dtype;
        VKI_TRY(st);
        src = t->data;
    }
    uint8_t *out = arena_alloc(arena, numel ? numel : 1);
    if (!out) return reader_oom();
    unsigned mask = (1u << bits) - 1;
    bool is_signed = t->dtype == VKI_DTYPE_INT4 || t->dtype == VKI_DTYPE_INT2;
    for (size_t i = 0; i < numel; i++) {
        size_t bit = i * (size_t)bits, byte = bit / 8;
        unsigned shift = (unsigned)(bit % 8), v = src[byte] >> shift;
        if (shift + (unsigned)bits > 8) v |= (unsigned)src[byte + 1] << (8 - shift); /* float6 across two bytes */
        v &= mask;
        if (is_signed && (v & (1u << (bits - 1)))) v |= ~mask; /* sign-extended into the byte */
        out[i] = (uint8_t)v;
    }
    t->data = out;
    t->bytes = numel;
    return VKI_OK;
}

vki_status parse_tensor(const uint8_t *p, size_t len, ir_tensor *t, vki_arena *arena, onnx_model *m)
{
    memset(t, 0, sizeof *t);
    t->name = "";
    pb_reader r = pb_init(p, len);
    pb_field f;
    pb_field typed[4][64];
    int ntyped[4] = {0};
    const int typed_ids[4] = {4, 5, 7, 10}; /* float, int32, int64, double (uint64 = 11 below) */
    pb_field u64[64];
    int nu64 = 0;
    pb_field raw_field;
    const pb_field *raw = NULL;
    ext_ref ext = {NULL, 0, -1};
    bool external = false;
    while (pb_next(&r, &f)) {
        switch (f.number) {
        case 1: VKI_TRY(parse_dims(&f, t)); break;
        case 2: t->dtype = (vki_dtype)f.u; break;
        case 8: if (!(t->name = dup_str(arena, &f))) return reader_oom(); break;
        case 9: raw_field = f; raw = &raw_field; break;
        case 14: external = f.u == 1; break;
        case 13: {
            pb_reader e = pb_init(f.data, f.len);
            pb_field kv;
            const char *key = NULL, *value = NULL;
            while (pb_next(&e, &kv)) {
                if (kv.number == 1 && kv.wire == PB_LEN) key = dup_str(arena, &kv);
                if (kv.number == 2 && kv.wire == PB_LEN) value = dup_str(arena, &kv);
            }
            if (e.error || !key || !value) return reader_bad("external_data entry");
            if (!strcmp(key, "location")) ext.location = value;
            else if (!strcmp(key, "offset")) ext.offset = strtoll(value, NULL, 10);
            else if (!strcmp(key, "length")) ext.length = strtoll(value, NULL, 10);
            break;
        }
        case 3: return vki_fail(VKI_ERROR_UNSUPPORTED, "segmented tensors are not supported");
        case 11:
            if (nu64 >= 64) return vki_fail(VKI_ERROR_UNSUPPORTED, "tensor data split over more than 64 fields");
            u64[nu64++] = f;
            break;
        default:
            for (int k = 0; k < 4; k++)
                if ((int)f.number == typed_ids[k]) {
                    if (ntyped[k] >= 64) return vki_fail(VKI_ERROR_UNSUPPORTED, "tensor data split over more than 64 fields");
                    typed[k][ntyped[k]++] = f;
                }
            break;
        }
    }
    if (r.error) return reader_bad("truncated TensorProto");
    int64_t numel = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] > 0 && numel > INT64_MAX / 16 / t->dims[i]) return reader_bad("tensor dims overflow");
        numel *= t->dims[i];
    }
    size_t esize = vki_dtype_size(t->dtype);
    if (t->dtype == VKI_DTYPE_STRING) return VKI_OK; /* kept without data; refused where used */
    if (esize == 0) return vki_fail(VKI_ERROR_UNSUPPORTED, "tensor '%s' has unsupported dtype %d", t->name, (int)t->dtype);
    int sub_bits = t->dtype == VKI_DTYPE_UINT4 || t->dtype == VKI_DTYPE_INT4 || t->dtype == VKI_DTYPE_FLOAT4E2M1 ? 4
                   : t->dtype == VKI_DTYPE_UINT2 || t->dtype == VKI_DTYPE_INT2 ? 2
                   : t->dtype == VKI_DTYPE_FLOAT6E2M3 || t->dtype == VKI_DTYPE_FLOAT6E3M2 ? 6 : 0;
    if (sub_bits) return parse_packed(t, (size_t)numel, sub_bits, raw, typed[1], ntyped[1], external ? &ext : NULL, arena, m);
    size_t need = (size_t)numel * esize;
    if (external) return load_external(m, t, &ext, need);
    if (raw) {
        if (raw->len != need)
            return vki_fail(VKI_ERROR_MODEL, "malformed ONNX file: tensor '%s' raw_data has %zu bytes, dims need %zu",
                            t->name, raw->len, need);
        t->data = raw->data;
        t->bytes = need;
        return VKI_OK;
    }
    switch (t->dtype) {
    case VKI_DTYPE_FLOAT: return decode_typed(typed[0], ntyped[0], 4, t, (size_t)numel, arena);
    case VKI_DTYPE_INT64: return decode_typed(typed[2], ntyped[2], 7, t, (size_t)numel, arena);
    case VKI_DTYPE_DOUBLE: return decode_typed(typed[3], ntyped[3], 10, t, (size_t)numel, arena);
    case VKI_DTYPE_UINT32: case VKI_DTYPE_UINT64: return decode_typed(u64, nu64, 11, t, (size_t)numel, arena);
    default: return decode_typed(typed[1], ntyped[1], 5, t, (size_t)numel, arena);
    }
}

vki_status onnx_tensor_parse(const uint8_t *p, size_t len, ir_tensor *t, vki_arena *arena)
{
    return parse_tensor(p, len, t, arena, NULL);
}

/* A whole file into the arena. */
static vki_status read_file(const char *path, vki_arena *arena, uint8_t **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return vki_fail(VKI_ERROR_IO, "cannot open '%s': %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *buf = n > 0 ? arena_alloc(arena, (size_t)n) : NULL;
    if (n > 0 && (!*buf || fread(*buf, 1, (size_t)n, f) != (size_t)n)) {
        fclose(f);
        return vki_fail(VKI_ERROR_IO, "cannot read '%s'", path);
    }
    fclose(f);
    *len = n > 0 ? (size_t)n : 0;
    return VKI_OK;
}

vki_status onnx_tensor_file_load(const char *path, ir_tensor *t, vki_arena *arena)
{
    uint8_t *buf;
    size_t len;
    VKI_TRY(read_file(path, arena, &buf, &len));
    return parse_tensor(buf, len, t, arena, NULL);
}

/* A SequenceProto's tensors (tensor_values, field 3). */
static vki_status parse_sequence(const uint8_t *p, size_t len, ir_tensor **out, int *count, vki_arena *arena)
{
    pb_reader r = pb_init(p, len);
    pb_field f;
    int n = 0;
    while (pb_next(&r, &f)) {
        if (f.wire != PB_LEN) continue;
        if (f.number == 3) n++;
        if (f.number >= 4 && f.number <= 7)
            return vki_fail(VKI_ERROR_UNSUPPORTED, "a sequence of sparse tensors, sequences, maps or optionals");
    }
    if (r.error) return reader_bad("truncated SequenceProto");
    ir_tensor *t = arena_alloc(arena, ((size_t)n + 1) * sizeof *t);
    if (!t) return reader_oom();
    r = pb_init(p, len);
    int k = 0;
    while (pb_next(&r, &f))
        if (f.wire == PB_LEN && f.number == 3) VKI_TRY(parse_tensor(f.data, f.len, &t[k++], arena, NULL));
    *out = t;
    *count = n;
    return VKI_OK;
}

vki_status onnx_value_file_load(const char *path, int kind, ir_tensor **tensors, int *count, vki_arena *arena)
{
    uint8_t *buf;
    size_t len;
    VKI_TRY(read_file(path, arena, &buf, &len));
    if (kind == IR_TENSOR) {
        ir_tensor *t = arena_alloc(arena, sizeof *t);
        if (!t) return reader_oom();
        *tensors = t;
        *count = 1;
        return parse_tensor(buf, len, t, arena, NULL);
    }
    if (kind == IR_SEQUENCE) return parse_sequence(buf, len, tensors, count, arena);
    /* OptionalProto: tensor_value 3, sequence_value 5; neither: none */
    pb_reader r = pb_init(buf, len);
    pb_field fl;
    *count = -1;
    *tensors = NULL;
    while (pb_next(&r, &fl)) {
        if (fl.wire != PB_LEN) continue;
        if (fl.number == 3 && kind == IR_OPTIONAL) {
            ir_tensor *t = arena_alloc(arena, sizeof *t);
            if (!t) return reader_oom();
            *tensors = t;
            *count = 1;
            VKI_TRY(parse_tensor(fl.data, fl.len, t, arena, NULL));
        } else if (fl.number == 5 && kind == IR_OPTIONAL_SEQUENCE) {
            VKI_TRY(parse_sequence(fl.data, fl.len, tensors, count, arena));
        } else if (fl.number >= 3 && fl.number <= 7) {
            return vki_fail(VKI_ERROR_UNSUPPORTED, "'%s' holds a value of another kind than the model declares", path);
        }
    }
    if (r.error) return reader_bad("truncated OptionalProto");
    return VKI_OK;
}

/* ---- values ---- */

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

int find_value(reader *rd, const char *name)
{
    if (!rd->table_cap) return -1;
    size_t i = hash_name(name) & (rd->table_cap - 1);
    while (rd->table[i] >= 0) {
        if (!strcmp(rd->g->values[rd->table[i]].name, name)) return rd->table[i];
        i = (i + 1) & (rd->table_cap - 1);
    }
    return -1;
}

vki_status grow_table(reader *rd)
{
    size_t cap = rd->table_cap ? rd->table_cap * 2 : 1024;
    int *t = malloc(cap * sizeof *t);
    if (!t) return reader_oom();
    for (size_t i = 0; i < cap; i++) t[i] = -1;
    for (int v = 0; v < rd->g->n_values; v++) {
        size_t i = hash_name(rd->g->values[v].name) & (cap - 1);
        while (t[i] >= 0) i = (i + 1) & (cap - 1);
        t[i] = v;
    }
    free(rd->table);
    rd->table = t;
    rd->table_cap = cap;
    return VKI_OK;
}

/* Adds a value named `name` (which must not exist). */
vki_status add_value(reader *rd, const char *name, int *index)
{
    ir_graph *g = rd->g;
    if (g->n_values == g->cap_values) {
        int cap = g->cap_values ? g->cap_values * 2 : 256;
        ir_value *v = realloc(g->values, (size_t)cap * sizeof *v);
        if (!v) return reader_oom();
        g->values = v;
        g->cap_values = cap;
    }
    if ((size_t)(g->n_values + 1) * 2 > rd->table_cap) VKI_TRY(grow_table(rd));
    ir_value *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->rank = -1;
    v->producer = -1;
    size_t i = hash_name(name) & (rd->table_cap - 1);
    while (rd->table[i] >= 0) i = (i + 1) & (rd->table_cap - 1);
    rd->table[i] = g->n_values;
    *index = g->n_values++;
    return VKI_OK;
}

/* TypeProto.Tensor: elem_type and shape into info. */
static vki_status parse_tensor_type(reader *rd, const pb_field *tf, const char *name, ir_value *info)
{
    pb_reader er = pb_init(tf->data, tf->len);
    pb_field ef;
    while (pb_next(&er, &ef)) {
        if (ef.number == 1 && ef.wire == PB_VARINT) info->dtype = (vki_dtype)ef.u;
        if (ef.number == 2 && ef.wire == PB_LEN) {
            info->rank = 0;
            pb_reader sr = pb_init(ef.data, ef.len);
            pb_field sf;
            while (pb_next(&sr, &sf)) {
                if (sf.number != 1 || sf.wire != PB_LEN) continue;
                if (info->rank >= VKI_MAX_RANK)
                    return vki_fail(VKI_ERROR_UNSUPPORTED, "value '%s' has more than %d dimensions", name ? name : "",
                                    VKI_MAX_RANK);
                int d = info->rank++;
                info->dims[d] = -1;
                pb_reader dr = pb_init(sf.data, sf.len);
                pb_field df;
                while (pb_next(&dr, &df)) {
                    if (df.number == 1 && df.wire == PB_VARINT) info->dims[d] = (int64_t)df.u;
                    if (df.number == 2 && df.wire == PB_LEN && !(info->dim_names[d] = dup_str(&rd->g->arena, &df)))
                        return reader_oom();
                }
                if (dr.error) return reader_bad("tensor shape dimension");
                if (info->dims[d] < -1) return reader_bad("negative dimension");
            }
            if (sr.error) return reader_bad("tensor shape");
        }
    }
    if (er.error) return reader_bad("tensor type");
    return VKI_OK;
}

/* TypeProto: a tensor, a sequence of tensors, an optional tensor or an optional sequence of
 * tensors (info->type_kind); anything else (maps, sparse tensors, nested sequences) marks
 * info->dtype VKI_DTYPE_UNDEFINED - 1. depth: sequence/optional wrappers seen so far. */
static vki_status parse_type(reader *rd, const uint8_t *data, size_t len, const char *name, ir_value *info, int depth)
{
    pb_reader tr = pb_init(data, len);
    pb_field tf;
    while (pb_next(&tr, &tf)) {
        if (tf.wire != PB_LEN) continue;
        if (tf.number == 1) {
            VKI_TRY(parse_tensor_type(rd, &tf, name, info));
        } else if (tf.number == 4 || tf.number == 9) { /* Sequence / Optional { elem_type = 1 } */
            bool seq = tf.number == 4;
            bool ok = depth == 0 || (depth == 1 && seq && info->type_kind == IR_OPTIONAL);
            if (!ok) {
                info->dtype = VKI_DTYPE_UNDEFINED - 1;
                continue;
            }
            info->type_kind = seq ? (info->type_kind == IR_OPTIONAL ? IR_OPTIONAL_SEQUENCE : IR_SEQUENCE) : IR_OPTIONAL;
            pb_reader er = pb_init(tf.data, tf.len);
            pb_field ef;
            while (pb_next(&er, &ef))
                if (ef.number == 1 && ef.wire == PB_LEN) VKI_TRY(parse_type(rd, ef.data, ef.len, name, info, depth + 1));
            if (er.error) return reader_bad("sequence or optional type");
        } else if (tf.number == 5 || tf.number == 8) {
            info->dtype = VKI_DTYPE_UNDEFINED - 1; /* marks a type vkinfer does not hold */
        }
    }
    if (tr.error) return reader_bad("type");
    return VKI_OK;
}

/* ValueInfoProto: name, and its type (parse_type). */
vki_status parse_value_info(reader *rd, const pb_field *vf, const char **name, ir_value *info)
{
    memset(info, 0, sizeof *info);
    info->rank = -1;
    *name = NULL;
    pb_reader r = pb_init(vf->data, vf->len);
    pb_field f;
    while (pb_next(&r, &f)) {
        if (f.number == 1 && f.wire == PB_LEN) {
            if (!(*name = dup_str(&rd->g->arena, &f))) return reader_oom();
        } else if (f.number == 2 && f.wire == PB_LEN) {
            VKI_TRY(parse_type(rd, f.data, f.len, *name, info, 0));
        }
    }
    if (r.error) return reader_bad("ValueInfoProto");
    if (!*name) return reader_bad("value without a name");
    return VKI_OK;
}

/* ---- attributes ---- */

static vki_status parse_attr(reader *rd, const pb_field *af, ir_attr *a)
{
    vki_arena *arena = &rd->g->arena;
    memset(a, 0, sizeof *a);
    pb_reader r = pb_init(af->data, af->len);
    pb_field f;
    int nfloats = 0, nints = 0, nstrings = 0, ntensors = 0;
    bool ok;
    /* pass 1: counts and scalars */
    while (pb_next(&r, &f)) {
        switch (f.number) {
        case 1: if (!(a->name = dup_str(arena, &f))) return reader_oom(); break;
        case 20: a->type = (enum ir_attr_type)f.u; break;
        case 2: { uint32_t b = (uint32_t)f.u; memcpy(&a->f, &b, 4); break; }
        case 3: a->i = (int64_t)f.u; break;
        case 4: if (!(a->s = dup_str(arena, &f))) return reader_oom(); a->s_len = f.len; break;
        case 6: a->graph_bytes = f.data; a->graph_len = f.len; break;
        case 7: nfloats += (int)pb_packed_count(&f, 4, &ok); if (!ok) return reader_bad("attribute floats"); break;
        case 8: nints += (int)pb_packed_count(&f, 0, &ok); if (!ok) return reader_bad("attribute ints"); break;
        case 9: nstrings++; break;
        case 10: ntensors++; break;
        case 21: return vki_fail(VKI_ERROR_UNSUPPORTED, "attribute references (ref_attr_name) are only valid inside functions");
        default: break;
        }
    }
    if (r.error) return reader_bad("AttributeProto");
    if (!a->name) return reader_bad("attribute without a name");
    a->count = a->type == ATTR_FLOATS ? nfloats : a->type == ATTR_INTS ? nints
             : a->type == ATTR_STRINGS ? nstrings : a->type == ATTR_TENSORS ? ntensors : 0;
    /* never NULL, so that a consumer of an empty list reads nothing rather than crashing */
    if (!(a->floats = arena_alloc(arena, (size_t)(nfloats + 1) * 4))) return reader_oom();
    if (!(a->ints = arena_alloc(arena, (size_t)(nints + 1) * 8))) return reader_oom();
    if (!(a->strings = arena_alloc(arena, (size_t)(nstrings + 1) * sizeof(char *)))) return reader_oom();
    int ntens_alloc = ntensors + 1;
    ir_tensor *tensors = arena_alloc(arena, (size_t)ntens_alloc * sizeof(ir_tensor));
    if (!tensors) return reader_oom();
    int fi = 0, ii = 0, si = 0, ti = 0;
    r = pb_init(af->data, af->len);
    while (pb_next(&r, &f)) {
        if (f.number == 5 && f.wire == PB_LEN) {
            VKI_TRY(parse_tensor(f.data, f.len, &tensors[ntensors], arena, rd->model));
            a->tensor = &tensors[ntensors];
        } else if (f.number == 10 && f.wire == PB_LEN) {
            VKI_TRY(parse_tensor(f.data, f.len, &tensors[ti++], arena, rd->model));
        } else if (f.number == 9 && f.wire == PB_LEN) {
            if (!(a->strings[si++] = dup_str(arena, &f))) return reader_oom();
        } else if (f.number == 7) {
            if (f.wire == PB_LEN) {
                for (size_t k = 0; k + 4 <= f.len; k += 4) memcpy(&a->floats[fi++], f.data + k, 4);
            } else {
                uint32_t b = (uint32_t)f.u;
                memcpy(&a->floats[fi++], &b, 4);
            }
        } else if (f.number == 8) {
            if (f.wire == PB_LEN) {
                pb_reader pr = pb_init(f.data, f.len);
                uint64_t v;
                while (pr.p < pr.end && pb_read_varint(&pr, &v)) a->ints[ii++] = (int64_t)v;
            } else {
                a->ints[ii++] = (int64_t)f.u;
            }
        }
    }
    if (a->type == ATTR_TENSORS) a->tensor = tensors;
    if (a->type == ATTR_UNDEFINED) { /* IR v1 files may omit the type: infer it */
        a->type = a->tensor ? ATTR_TENSOR : a->s ? ATTR_STRING : a->graph_bytes ? ATTR_GRAPH
                : nfloats ? ATTR_FLOATS : nints ? ATTR_INTS : ATTR_INT;
        if (a->type == ATTR_FLOATS) a->count = nfloats;
        if (a->type == ATTR_INTS) a->count = nints;
    }
    if (a->type == ATTR_TENSOR && !a->tensor) return reader_bad("TENSOR attribute without a tensor");
    if (a->type == ATTR_STRING && !a->s) a->s = ""; /* an empty string is encoded as no field */
    if (a->type == ATTR_GRAPH && !a->graph_bytes) return reader_bad("GRAPH attribute without a graph");
    for (int k = 0; a->type == ATTR_STRINGS && k < a->count; k++)
        if (!a->strings[k]) a->strings[k] = "";
    return VKI_OK;
}

/* ---- nodes ---- */

/* A name the subgraph being expanded defines: its scope's prefix + name. */
static char *scoped_name(reader *rd, const pb_field *f)
{
    if (!rd->n_scopes) return dup_str(&rd->g->arena, f);
    const char *pre = rd->scopes[rd->n_scopes - 1];
    size_t pl = strlen(pre);
    char *s = arena_alloc(&rd->g->arena, pl + f->len + 1);
    if (!s) return NULL;
    memcpy(s, pre, pl);
    memcpy(s + pl, f->data, f->len);
    s[pl + f->len] = 0;
    return s;
}

/* A name a node reads: the innermost scope that defines it, else the main graph. -2: out of
 * memory. */
int resolve_value(reader *rd, const char *name)
{
    size_t nl = strlen(name);
    for (int k = rd->n_scopes - 1; k >= 0; k--) {
        size_t pl = strlen(rd->scopes[k]);
        char *s = malloc(pl + nl + 1);
        if (!s) return -2;
        memcpy(s, rd->scopes[k], pl);
        memcpy(s + pl, name, nl + 1);
        int v = find_value(rd, s);
        free(s);
        if (v >= 0) return v;
    }
    return find_value(rd, name);
}

vki_status parse_node(reader *rd, const pb_field *nf, int node_index)
{
    ir_graph *g = rd->g;
    vki_arena *arena = &g->arena;
    ir_node *n = &g->nodes[node_index];
    pb_reader r = pb_init(nf->data, nf->len);
    pb_field f;
    int nin = 0, nout = 0, nattr = 0;
    while (pb_next(&r, &f)) {
        if (f.wire != PB_LEN) continue;
        if (f.number == 1) nin++;
        else if (f.number == 2) nout++;
        else if (f.number == 5) nattr++;
        else if (f.number == 3 && !(n->name = dup_str(arena, &f))) return reader_oom();
        else if (f.number == 4 && !(n->op_type = dup_str(arena, &f))) return reader_oom();
        else if (f.number == 7 && !(n->domain = dup_str(arena, &f))) return reader_oom();
    }
    if (r.error) return reader_bad("NodeProto");
    if (!n->op_type || !*n->op_type) return reader_bad("node without op_type");
    if (!n->domain || !strcmp(n->domain, "ai.onnx")) n->domain = "";
    if (!n->name || !*n->name) {
        char buf[64];
        snprintf(buf, sizeof buf, "_%d", node_index);
        size_t l = strlen(n->op_type);
        char *name = arena_alloc(arena, l + strlen(buf) + 1);
        if (!name) return reader_oom();
        memcpy(name, n->op_type, l);
        strcpy(name + l, buf);
        n->name = name;
    }
    if (rd->n_scopes) {
        pb_field nf2 = {.data = (const uint8_t *)n->name, .len = strlen(n->name)};
        if (!(n->name = scoped_name(rd, &nf2))) return reader_oom();
        n->scopes = rd->scopes;
        n->n_scopes = rd->n_scopes;
    }
    n->inputs = arena_alloc(arena, (size_t)(nin + 1) * sizeof(int));
    n->outputs = arena_alloc(arena, (size_t)(nout + 1) * sizeof(int));
    n->attrs = arena_alloc(arena, (size_t)(nattr + 1) * sizeof(ir_attr));
    if (!n->inputs || !n->outputs || !n->attrs) return reader_oom();
    r = pb_init(nf->data, nf->len);
    while (pb_next(&r, &f)) {
        if (f.wire != PB_LEN) continue;
        if (f.number == 1) {
            int v = -1;
            if (f.len) {
                char tmp[1024];
                char *name = f.len < sizeof tmp ? tmp : dup_str(arena, &f);
                if (!name) return reader_oom();
                if (name == tmp) { memcpy(tmp, f.data, f.len); tmp[f.len] = 0; }
                v = resolve_value(rd, name);
                if (v == -2) return reader_oom();
                if (v < 0)
                    return vki_fail(VKI_ERROR_MODEL, "node '%s' (%s) reads '%s', which no earlier node, input or "
                                    "initializer defines (the graph must be topologically sorted)",
                                    n->name, n->op_type, name);
            }
            n->inputs[n->n_inputs++] = v;
        } else if (f.number == 2) {
            int v = -1;
            if (f.len) {
                char *name = scoped_name(rd, &f);
                if (!name) return reader_oom();
                int existing = find_value(rd, name);
                if (existing >= 0 && (g->values[existing].producer >= 0 || g->values[existing].kind != VALUE_INTERMEDIATE))
                    return vki_fail(VKI_ERROR_MODEL, "node '%s' (%s) writes '%s', which is already defined",
                                    n->name, n->op_type, name);
                if (existing >= 0) v = existing;
                else VKI_TRY(add_value(rd, name, &v));
                g->values[v].producer = node_index;
            }
            n->outputs[n->n_outputs++] = v;
        } else if (f.number == 5) {
            vki_status st = parse_attr(rd, &f, &n->attrs[n->n_attrs]);
            if (st != VKI_OK) return vki_fail_prefix(st, "node '%s' (%s): ", n->name, n->op_type);
            n->n_attrs++;
        }
    }
    return VKI_OK;
}

/* ---- graph and model ---- */

static vki_status parse_graph(reader *rd, const uint8_t *p, size_t len)
{
    ir_graph *g = rd->g;
    pb_reader r = pb_init(p, len);
    pb_field f;
    int n_nodes = 0, n_inputs = 0, n_outputs = 0;
    while (pb_next(&r, &f)) {
        if (f.wire != PB_LEN) continue;
        if (f.number == 1) n_nodes++;
        if (f.number == 11) n_inputs++;
        if (f.number == 12) n_outputs++;
        if (f.number == 15) return vki_fail(VKI_ERROR_UNSUPPORTED, "sparse initializers are not supported");
    }
    if (r.error) return reader_bad("truncated GraphProto");
    g->nodes = arena_alloc(&g->arena, (size_t)(n_nodes + 1) * sizeof(ir_node));
    g->inputs = arena_alloc(&g->arena, (size_t)(n_inputs + 1) * sizeof(int));
    g->outputs = arena_alloc(&g->arena, (size_t)(n_outputs + 1) * sizeof(int));
    if (!g->nodes || !g->inputs || !g->outputs) return reader_oom();
    /* initializers first: inputs may repeat them (IR < 4 lists initializers as inputs) */
    r = pb_init(p, len);
    while (pb_next(&r, &f)) {
        if (f.number != 5 || f.wire != PB_LEN) continue;
        ir_tensor t;
        VKI_TRY(parse_tensor(f.data, f.len, &t, &g->arena, rd->model));
        if (!t.name || !*t.name) return reader_bad("initializer without a name");
        if (find_value(rd, t.name) >= 0) return vki_fail(VKI_ERROR_MODEL, "initializer '%s' is defined twice", t.name);
        int v;
        VKI_TRY(add_value(rd, t.name, &v));
        ir_value *val = &g->values[v];
        val->kind = VALUE_INITIALIZER;
        val->init = t;
        val->dtype = t.dtype;
        val->rank = t.rank;
        memcpy(val->dims, t.dims, sizeof t.dims);
    }
    r = pb_init(p, len);
    while (pb_next(&r, &f)) {
        if (f.wire != PB_LEN || (f.number != 11)) continue;
        const char *name;
        ir_value info;
        VKI_TRY(parse_value_info(rd, &f, &name, &info));
        int v = find_value(rd, name);
        if (v >= 0) {
            if (g->values[v].kind == VALUE_INITIALIZER) continue; /* an initializer listed as input */
            return vki_fail(VKI_ERROR_MODEL, "graph input '%s' is declared twice", name);
        }
        if ((int)info.dtype == (int)VKI_DTYPE_UNDEFINED - 1)
            return vki_fail(VKI_ERROR_UNSUPPORTED, "graph input '%s' is a map, a sparse tensor or a nested sequence; vkinfer "
                            "holds tensors, sequences of tensors and optional tensors or sequences", name);
        VKI_TRY(add_value(rd, name, &v));
        ir_value *val = &g->values[v];
        val->kind = VALUE_INPUT;
        val->type_kind = info.type_kind;
        val->dtype = info.dtype;
        val->rank = info.rank;
        memcpy(val->dims, info.dims, sizeof info.dims);
        memcpy(val->dim_names, info.dim_names, sizeof info.dim_names);
        g->inputs[g->n_inputs++] = v;
    }
    r = pb_init(p, len);
    while (pb_next(&r, &f)) {
        if (f.number == 1 && f.wire == PB_LEN) {
            VKI_TRY(parse_node(rd, &f, g->n_nodes));
            g->n_nodes++;
        }
    }
    r = pb_init(p, len);
    while (pb_next(&r, &f)) {
        if (f.wire != PB_LEN || f.number != 12) continue;
        const char *name;
        ir_value info;
        VKI_TRY(parse_value_info(rd, &f, &name, &info));
        int v = find_value(rd, name);
        if (v < 0) return vki_fail(VKI_ERROR_MODEL, "graph output '%s' is not produced by any node, input or initializer", name);
        if ((int)info.dtype == (int)VKI_DTYPE_UNDEFINED - 1)
            return vki_fail(VKI_ERROR_UNSUPPORTED, "graph output '%s' is a map, a sparse tensor or a nested sequence; vkinfer "
                            "holds tensors, sequences of tensors and optional tensors or sequences", name);
        ir_value *val = &g->values[v];
        val->is_output = true;
        if (val->kind == VALUE_INTERMEDIATE) val->type_kind = info.type_kind;
        if (val->dtype == VKI_DTYPE_UNDEFINED) val->dtype = info.dtype;
        if (val->rank < 0 && info.rank >= 0 && val->kind == VALUE_INTERMEDIATE) {
            val->rank = info.rank;
            memcpy(val->dims, info.dims, sizeof info.dims);
            memcpy(val->dim_names, info.dim_names, sizeof info.dim_names);
        }
        g->outputs[g->n_outputs++] = v;
    }
    return VKI_OK;
}

static vki_status parse_model(onnx_model *m, const uint8_t *data, size_t len)
{
    reader rd = {m, &m->graph, NULL, 0};
    ir_graph *g = &m->graph;
    pb_reader r = pb_init(data, len);
    pb_field f;
    const pb_field *graph = NULL;
    pb_field graph_field;
    g->opset = -1;
    while (pb_next(&r, &f)) {
        if (f.number == 1 && f.wire == PB_VARINT) g->ir_version = (int64_t)f.u;
        if (f.number == 7 && f.wire == PB_LEN) { graph_field = f; graph = &graph_field; }
        if (f.number == 8 && f.wire == PB_LEN) {
            pb_reader o = pb_init(f.data, f.len);
            pb_field of;
            bool default_domain = true;
            int64_t version = -1;
            while (pb_next(&o, &of)) {
                if (of.number == 1 && of.wire == PB_LEN && of.len && !(of.len == 7 && !memcmp(of.data, "ai.onnx", 7)))
                    default_domain = false;
                if (of.number == 2 && of.wire == PB_VARINT) version = (int64_t)of.u;
            }
            if (o.error) return reader_bad("opset_import");
            if (default_domain) g->opset = version;
        }
    }
    if (r.error) return reader_bad("truncated ModelProto");
    if (!graph) return reader_bad("no graph in the model");
    if (g->opset < 0) g->opset = 1; /* IR v1-2 files without opset_import mean opset 1 */
    vki_status st = parse_graph(&rd, graph->data, graph->len);
    free(rd.table);
    return st;
}

static void init_model(onnx_model *m) { memset(m, 0, sizeof *m); }

vki_status onnx_model_parse(const uint8_t *data, size_t len, onnx_model *out)
{
    init_model(out);
    vki_status st = parse_model(out, data, len);
    if (st != VKI_OK) onnx_model_free(out);
    return st;
}

vki_status onnx_model_load(const char *path, onnx_model *out)
{
    init_model(out);
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) : 1;
    out->dir = malloc(dl + 1);
    if (!out->dir) return reader_oom();
    memcpy(out->dir, slash ? path : ".", dl);
    out->dir[dl] = 0;
    const uint8_t *data;
    size_t len;
    vki_status st = map_file(path, out, &data, &len);
    if (st == VKI_OK) st = parse_model(out, data, len);
    if (st != VKI_OK) {
        vki_fail_prefix(st, "%s: ", path);
        onnx_model_free(out);
    }
    return st;
}

void onnx_model_free(onnx_model *m)
{
    for (onnx_mapping *map = m->maps; map;) {
        onnx_mapping *next = map->next;
        munmap(map->addr, map->len);
        free(map);
        map = next;
    }
    free(m->graph.values);
    ir_graph_free(&m->graph);
    free(m->dir);
    memset(m, 0, sizeof *m);
}
