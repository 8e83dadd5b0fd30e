/* ONNX ModelProto -> ir_graph. Every length, offset and index is checked: a truncated or
 * hostile file gives VKI_ERROR_MODEL, never a crash. Raw tensor data is not copied. */
#include "onnx_reader.h"

#include "protobuf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct reader {
    onnx_model *model;
    ir_graph *g;
    /* name -> value index, open addressing */
    int *table;
    size_t table_cap;
    /* expanding a subgraph (ir_graph_expand): the name prefixes of the scopes, outermost
     * first; the last one prefixes the names the subgraph defines */
    const char *const *scopes;
    int n_scopes;
} reader;

static vki_status bad(const char *what) { return vki_fail(VKI_ERROR_MODEL, "malformed ONNX file: %s", what); }

static vki_status oom(void) { return vki_fail(VKI_ERROR_OUT_OF_MEMORY, "out of host memory reading the model"); }

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
        return oom();
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
            if (!pb_read_varint(&r, &v)) return bad("tensor dims");
        }
        if (t->rank >= VKI_MAX_RANK)
            return vki_fail(VKI_ERROR_UNSUPPORTED, "tensor '%s' has more than %d dimensions",
                            t->name ? t->name : "", VKI_MAX_RANK);
        if ((int64_t)v < 0) return bad("negative tensor dimension");
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
        if (!ok) return bad("truncated packed tensor data");
    }
    if (have != numel)
        return bad(have > numel ? "tensor has more data elements than its dims say"
                                : "tensor has fewer data elements than its dims say");
    unsigned char *out = arena_alloc(arena, numel * esize);
    if (!out) return oom();
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
                    if ((size_t)(r.end - r.p) < w) return bad("truncated packed tensor data");
                    raw = 0;
                    for (size_t i = 0; i < w; i++) raw |= (uint64_t)r.p[i] << (8 * i);
                    r.p += w;
                } else if (!pb_read_varint(&r, &raw)) {
                    return bad("truncated packed tensor data");
                }
            } else {
                raw = f->u;
            }
            if (n >= numel) return bad("tensor has more data elements than its dims say");
            unsigned char *d = out + n * esize;
            switch (t->dtype) {
            case VKI_DTYPE_FLOAT16: case VKI_DTYPE_BFLOAT16: case VKI_DTYPE_UINT16:
            case VKI_DTYPE_INT16: { uint16_t v = (uint16_t)raw; memcpy(d, &v, 2); break; }
            case VKI_DTYPE_UINT8: case VKI_DTYPE_INT8: case VKI_DTYPE_BOOL: *d = (unsigned char)raw; break;
            case VKI_DTYPE_FLOAT: case VKI_DTYPE_INT32: case VKI_DTYPE_UINT32: { uint32_t v = (uint32_t)raw; memcpy(d, &v, 4); break; }
            default: memcpy(d, &raw, 8); break;
            }
            n++;
            if (!packed) break;
        }
    }
    if (n != numel) return bad("tensor has fewer data elements than its dims say");
    t->data = out;
    t->bytes = numel * esize;
    return VKI_OK;
}

typedef struct ext_ref {
    const char *location;
    int64_t offset, length;
} ext_ref;

static vki_status load_external(onnx_model *m, ir_tensor *t, const ext_ref *ext, size_t need)
{
    if (!m || !m->dir)
        return vki_fail(VKI_ERROR_MODEL, "tensor '%s' uses external data, which needs a model file path", t->name);
    const char *loc = ext->location;
    if (!loc || !*loc) return bad("external data without a location");
    if (loc[0] == '/' || strstr(loc, "..") || strchr(loc, '\\'))
        return vki_fail(VKI_ERROR_MODEL, "tensor '%s': external data location '%s' leaves the model's folder",
                        t->name, loc);
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", m->dir, loc) >= (int)sizeof path) return bad("external data path too long");
    const uint8_t *data;
    size_t len;
    /* the same file may back many tensors: reuse its mapping */
    VKI_TRY(map_file(path, m, &data, &len));
    if (ext->offset < 0 || (uint64_t)ext->offset > len) return bad("external data offset past the end of its file");
    size_t avail = len - (size_t)ext->offset;
    size_t want = ext->length >= 0 ? (size_t)ext->length : avail;
    if (want > avail || want != need)
        return vki_fail(VKI_ERROR_MODEL, "tensor '%s': external data in '%s' has %zu bytes at offset %lld, dims need %zu",
                        t->name, loc, want > avail ? avail : want, (long long)ext->offset, need);
    t->data = data + ext->offset;
    t->bytes = need;
    return VKI_OK;
}

static vki_status parse_tensor(const uint8_t *p, size_t len, ir_tensor *t, vki_arena *arena, onnx_model *m)
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
        case 8: if (!(t->name = dup_str(arena, &f))) return oom(); break;
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
            if (e.error || !key || !value) return bad("external_data entry");
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
    if (r.error) return bad("truncated TensorProto");
    int64_t numel = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] > 0 && numel > INT64_MAX / 16 / t->dims[i]) return bad("tensor dims overflow");
        numel *= t->dims[i];
    }
    size_t esize = vki_dtype_size(t->dtype);
    if (t->dtype == VKI_DTYPE_STRING) return VKI_OK; /* kept without data; refused where used */
    if (esize == 0) return vki_fail(VKI_ERROR_UNSUPPORTED, "tensor '%s' has unsupported dtype %d", t->name, (int)t->dtype);
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

vki_status onnx_tensor_file_load(const char *path, ir_tensor *t, vki_arena *arena)
{
    FILE *f = fopen(path, "rb");
    if (!f) return vki_fail(VKI_ERROR_IO, "cannot open '%s': %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = n > 0 ? arena_alloc(arena, (size_t)n) : NULL;
    if (n > 0 && (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)) {
        fclose(f);
        return vki_fail(VKI_ERROR_IO, "cannot read '%s'", path);
    }
    fclose(f);
    return parse_tensor(buf, n > 0 ? (size_t)n : 0, t, arena, NULL);
}

/* ---- values ---- */

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static int find_value(reader *rd, const char *name)
{
    if (!rd->table_cap) return -1;
    size_t i = hash_name(name) & (rd->table_cap - 1);
    while (rd->table[i] >= 0) {
        if (!strcmp(rd->g->values[rd->table[i]].name, name)) return rd->table[i];
        i = (i + 1) & (rd->table_cap - 1);
    }
    return -1;
}

static vki_status grow_table(reader *rd)
{
    size_t cap = rd->table_cap ? rd->table_cap * 2 : 1024;
    int *t = malloc(cap * sizeof *t);
    if (!t) return oom();
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
static vki_status add_value(reader *rd, const char *name, int *index)
{
    ir_graph *g = rd->g;
    if (g->n_values == g->cap_values) {
        int cap = g->cap_values ? g->cap_values * 2 : 256;
        ir_value *v = realloc(g->values, (size_t)cap * sizeof *v);
        if (!v) return oom();
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

/* ValueInfoProto: name, and the tensor type's elem_type and shape. */
static vki_status parse_value_info(reader *rd, const pb_field *vf, const char **name, ir_value *info)
{
    memset(info, 0, sizeof *info);
    info->rank = -1;
    *name = NULL;
    pb_reader r = pb_init(vf->data, vf->len);
    pb_field f;
    while (pb_next(&r, &f)) {
        if (f.number == 1 && f.wire == PB_LEN) {
            if (!(*name = dup_str(&rd->g->arena, &f))) return oom();
        } else if (f.number == 2 && f.wire == PB_LEN) {
            pb_reader tr = pb_init(f.data, f.len);
            pb_field tf;
            while (pb_next(&tr, &tf)) {
                if (tf.wire != PB_LEN) continue;
                if (tf.number != 1) {
                    if (tf.number == 4 || tf.number == 5 || tf.number == 9 || tf.number == 8)
                        info->dtype = VKI_DTYPE_UNDEFINED - 1; /* marks a non-tensor type */
                    continue;
                }
                pb_reader er = pb_init(tf.data, tf.len);
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
                                return vki_fail(VKI_ERROR_UNSUPPORTED, "value '%s' has more than %d dimensions",
                                                *name ? *name : "", VKI_MAX_RANK);
                            int d = info->rank++;
                            info->dims[d] = -1;
                            pb_reader dr = pb_init(sf.data, sf.len);
                            pb_field df;
                            while (pb_next(&dr, &df)) {
                                if (df.number == 1 && df.wire == PB_VARINT) info->dims[d] = (int64_t)df.u;
                                if (df.number == 2 && df.wire == PB_LEN && !(info->dim_names[d] = dup_str(&rd->g->arena, &df)))
                                    return oom();
                            }
                            if (dr.error) return bad("tensor shape dimension");
                            if (info->dims[d] < -1) return bad("negative dimension");
                        }
                        if (sr.error) return bad("tensor shape");
                    }
                }
                if (er.error) return bad("tensor type");
            }
            if (tr.error) return bad("type");
        }
    }
    if (r.error) return bad("ValueInfoProto");
    if (!*name) return bad("value without a name");
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
        case 1: if (!(a->name = dup_str(arena, &f))) return oom(); break;
        case 20: a->type = (enum ir_attr_type)f.u; break;
        case 2: { uint32_t b = (uint32_t)f.u; memcpy(&a->f, &b, 4); break; }
        case 3: a->i = (int64_t)f.u; break;
        case 4: if (!(a->s = dup_str(arena, &f))) return oom(); a->s_len = f.len; break;
        case 6: a->graph_bytes = f.data; a->graph_len = f.len; break;
        case 7: nfloats += (int)pb_packed_count(&f, 4, &ok); if (!ok) return bad("attribute floats"); break;
        case 8: nints += (int)pb_packed_count(&f, 0, &ok); if (!ok) return bad("attribute ints"); break;
        case 9: nstrings++; break;
        case 10: ntensors++; break;
        case 21: return vki_fail(VKI_ERROR_UNSUPPORTED, "attribute references (ref_attr_name) are only valid inside functions");
        default: break;
        }
    }
    if (r.error) return bad("AttributeProto");
    if (!a->name) return bad("attribute without a name");
    a->count = a->type == ATTR_FLOATS ? nfloats : a->type == ATTR_INTS ? nints
             : a->type == ATTR_STRINGS ? nstrings : a->type == ATTR_TENSORS ? ntensors : 0;
    /* never NULL, so that a consumer of an empty list reads nothing rather than crashing */
    if (!(a->floats = arena_alloc(arena, (size_t)(nfloats + 1) * 4))) return oom();
    if (!(a->ints = arena_alloc(arena, (size_t)(nints + 1) * 8))) return oom();
    if (!(a->strings = arena_alloc(arena, (size_t)(nstrings + 1) * sizeof(char *)))) return oom();
    int ntens_alloc = ntensors + 1;
    ir_tensor *tensors = arena_alloc(arena, (size_t)ntens_alloc * sizeof(ir_tensor));
    if (!tensors) return oom();
    int fi = 0, ii = 0, si = 0, ti = 0;
    r = pb_init(af->data, af->len);
    while (pb_next(&r, &f)) {
        if (f.number == 5 && f.wire == PB_LEN) {
            VKI_TRY(parse_tensor(f.data, f.len, &tensors[ntensors], arena, rd->model));
            a->tensor = &tensors[ntensors];
        } else if (f.number == 10 && f.wire == PB_LEN) {
            VKI_TRY(parse_tensor(f.data, f.len, &tensors[ti++], arena, rd->model));
        } else if (f.number == 9 && f.wire == PB_LEN) {
            if (!(a->strings[si++] = dup_str(arena, &f))) return oom();
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
    if (a->type == ATTR_TENSOR && !a->tensor) return bad("TENSOR attribute without a tensor");
    if (a->type == ATTR_STRING && !a->s) a->s = ""; /* an empty string is encoded as no field */
    if (a->type == ATTR_GRAPH && !a->graph_bytes) return bad("GRAPH attribute without a graph");
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
static int resolve_value(reader *rd, const char *name)
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

static vki_status parse_node(reader *rd, const pb_field *nf, int node_index)
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
        else if (f.number == 3 && !(n->name = dup_str(arena, &f))) return oom();
        else if (f.number == 4 && !(n->op_type = dup_str(arena, &f))) return oom();
        else if (f.number == 7 && !(n->domain = dup_str(arena, &f))) return oom();
    }
    if (r.error) return bad("NodeProto");
    if (!n->op_type || !*n->op_type) return bad("node without op_type");
    if (!n->domain || !strcmp(n->domain, "ai.onnx")) n->domain = "";
    if (!n->name || !*n->name) {
        char buf[64];
        snprintf(buf, sizeof buf, "_%d", node_index);
        size_t l = strlen(n->op_type);
        char *name = arena_alloc(arena, l + strlen(buf) + 1);
        if (!name) return oom();
        memcpy(name, n->op_type, l);
        strcpy(name + l, buf);
        n->name = name;
    }
    if (rd->n_scopes) {
        pb_field nf2 = {.data = (const uint8_t *)n->name, .len = strlen(n->name)};
        if (!(n->name = scoped_name(rd, &nf2))) return oom();
        n->scopes = rd->scopes;
        n->n_scopes = rd->n_scopes;
    }
    n->inputs = arena_alloc(arena, (size_t)(nin + 1) * sizeof(int));
    n->outputs = arena_alloc(arena, (size_t)(nout + 1) * sizeof(int));
    n->attrs = arena_alloc(arena, (size_t)(nattr + 1) * sizeof(ir_attr));
    if (!n->inputs || !n->outputs || !n->attrs) return oom();
    r = pb_init(nf->data, nf->len);
    while (pb_next(&r, &f)) {
        if (f.wire != PB_LEN) continue;
        if (f.number == 1) {
            int v = -1;
            if (f.len) {
                char tmp[1024];
                char *name = f.len < sizeof tmp ? tmp : dup_str(arena, &f);
                if (!name) return oom();
                if (name == tmp) { memcpy(tmp, f.data, f.len); tmp[f.len] = 0; }
                v = resolve_value(rd, name);
                if (v == -2) return oom();
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
                if (!name) return oom();
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
    if (r.error) return bad("truncated GraphProto");
    g->nodes = arena_alloc(&g->arena, (size_t)(n_nodes + 1) * sizeof(ir_node));
    g->inputs = arena_alloc(&g->arena, (size_t)(n_inputs + 1) * sizeof(int));
    g->outputs = arena_alloc(&g->arena, (size_t)(n_outputs + 1) * sizeof(int));
    if (!g->nodes || !g->inputs || !g->outputs) return oom();
    /* initializers first: inputs may repeat them (IR < 4 lists initializers as inputs) */
    r = pb_init(p, len);
    while (pb_next(&r, &f)) {
        if (f.number != 5 || f.wire != PB_LEN) continue;
        ir_tensor t;
        VKI_TRY(parse_tensor(f.data, f.len, &t, &g->arena, rd->model));
        if (!t.name || !*t.name) return bad("initializer without a name");
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
            return vki_fail(VKI_ERROR_UNSUPPORTED, "graph input '%s' is a sequence, map or optional; only tensors are supported", name);
        VKI_TRY(add_value(rd, name, &v));
        ir_value *val = &g->values[v];
        val->kind = VALUE_INPUT;
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
            return vki_fail(VKI_ERROR_UNSUPPORTED, "graph output '%s' is a sequence, map or optional; only tensors are supported", name);
        ir_value *val = &g->values[v];
        val->is_output = true;
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
            if (o.error) return bad("opset_import");
            if (default_domain) g->opset = version;
        }
    }
    if (r.error) return bad("truncated ModelProto");
    if (!graph) return bad("no graph in the model");
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
    if (!out->dir) return oom();
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

/* ---- control flow: subgraphs inlined at plan time ---- */

/* The planner decides each If's branch, Loop's trip count and Scan's length once they are
 * known (src/ops/control.c) and asks for a graph with those nodes replaced by their
 * subgraphs' nodes: one copy per iteration, names prefixed by the instance
 * ("Loop_3[2]/sum"), outer-scope names resolved through the enclosing scopes. Nested
 * control nodes stay nodes and are decided in the next round. */

typedef struct expander {
    reader rd;
    int cap_nodes;
} expander;

static vki_status ex_reserve(expander *e, int extra)
{
    ir_graph *g = e->rd.g;
    if (g->n_nodes + extra <= e->cap_nodes) return VKI_OK;
    int cap = e->cap_nodes * 2 > g->n_nodes + extra ? e->cap_nodes * 2 : g->n_nodes + extra + 16;
    ir_node *n = realloc(g->nodes, (size_t)cap * sizeof *n);
    if (!n) return oom();
    memset(n + e->cap_nodes, 0, (size_t)(cap - e->cap_nodes) * sizeof *n);
    g->nodes = n;
    e->cap_nodes = cap;
    return VKI_OK;
}

/* A new intermediate named prefix + base (+ "~k" while that name is taken). */
static vki_status ex_value(expander *e, const char *prefix, const char *base, int *v)
{
    size_t n = strlen(prefix) + strlen(base) + 24;
    char *name = arena_alloc(&e->rd.g->arena, n);
    if (!name) return oom();
    snprintf(name, n, "%s%s", prefix, base);
    for (int k = 1; find_value(&e->rd, name) >= 0; k++) snprintf(name, n, "%s%s~%d", prefix, base, k);
    return add_value(&e->rd, name, v);
}

static vki_status ex_node(expander *e, const char *op, const char *name, const int *in, int n_in, const int *out,
                          int n_out, ir_attr *attrs, int n_attrs)
{
    VKI_TRY(ex_reserve(e, 1));
    ir_graph *g = e->rd.g;
    int idx = g->n_nodes;
    ir_node *n = &g->nodes[idx];
    memset(n, 0, sizeof *n);
    n->name = name;
    n->op_type = op;
    n->domain = "";
    n->inputs = arena_alloc(&g->arena, (size_t)(n_in + 1) * sizeof(int));
    n->outputs = arena_alloc(&g->arena, (size_t)(n_out + 1) * sizeof(int));
    n->attrs = attrs ? attrs : arena_alloc(&g->arena, sizeof(ir_attr));
    if (!n->inputs || !n->outputs || !n->attrs) return oom();
    memcpy(n->inputs, in, (size_t)n_in * sizeof(int));
    memcpy(n->outputs, out, (size_t)n_out * sizeof(int));
    n->n_inputs = n_in;
    n->n_outputs = n_out;
    n->n_attrs = n_attrs;
    n->scopes = e->rd.scopes;
    n->n_scopes = e->rd.n_scopes;
    for (int k = 0; k < n_out; k++)
        if (out[k] >= 0) g->values[out[k]].producer = idx;
    g->n_nodes++;
    return VKI_OK;
}

static ir_attr *ex_attr_int(expander *e, const char *name, int64_t v)
{
    ir_attr *a = arena_alloc(&e->rd.g->arena, sizeof *a);
    if (!a) return NULL;
    a->name = name;
    a->type = ATTR_INT;
    a->i = v;
    return a;
}

/* A Constant node making an int64 tensor of n elements (rank 0 or 1). */
static vki_status ex_const_i64(expander *e, const char *prefix, const char *base, const int64_t *vals, int n, int rank,
                               int *v)
{
    vki_arena *a = &e->rd.g->arena;
    ir_attr *at = arena_alloc(a, sizeof *at);
    ir_tensor *t = arena_alloc(a, sizeof *t);
    int64_t *d = arena_alloc(a, (size_t)(n + 1) * sizeof *d);
    if (!at || !t || !d) return oom();
    memcpy(d, vals, (size_t)n * sizeof *d);
    t->name = "";
    t->dtype = VKI_DTYPE_INT64;
    t->rank = rank;
    t->dims[0] = n;
    t->data = d;
    t->bytes = (size_t)n * sizeof *d;
    at->name = "value";
    at->type = ATTR_TENSOR;
    at->tensor = t;
    VKI_TRY(ex_value(e, prefix, base, v));
    return ex_node(e, "Constant", e->rd.g->values[*v].name, NULL, 0, v, 1, at, 1);
}

static vki_status ex_identity(expander *e, int from, int to)
{
    return ex_node(e, "Identity", e->rd.g->values[to].name, &from, 1, &to, 1, NULL, 0);
}

/* x with a new axis of length 1 (Unsqueeze by attribute before opset 13, by input after). */
static vki_status ex_unsqueeze(expander *e, const char *prefix, int x, int64_t axis, int *out)
{
    ir_graph *g = e->rd.g;
    VKI_TRY(ex_value(e, prefix, "unsqueezed", out));
    if (g->opset >= 13) {
        int axes;
        VKI_TRY(ex_const_i64(e, prefix, "axes", &axis, 1, 1, &axes));
        int in[2] = {x, axes};
        return ex_node(e, "Unsqueeze", g->values[*out].name, in, 2, out, 1, NULL, 0);
    }
    ir_attr *a = arena_alloc(&g->arena, sizeof *a);
    int64_t *ints = arena_alloc(&g->arena, sizeof *ints);
    if (!a || !ints) return oom();
    *ints = axis;
    *a = (ir_attr){.name = "axes", .type = ATTR_INTS, .count = 1, .ints = ints};
    return ex_node(e, "Unsqueeze", g->values[*out].name, &x, 1, out, 1, a, 1);
}

/* out = the n values of parts, each with a new axis `axis`, concatenated along it. */
static vki_status ex_stack(expander *e, const char *prefix, const int *parts, int n, int64_t axis, int out)
{
    ir_graph *g = e->rd.g;
    int *u = malloc((size_t)(n + 1) * sizeof *u);
    if (!u) return oom();
    vki_status st = VKI_OK;
    for (int i = 0; st == VKI_OK && i < n; i++) st = ex_unsqueeze(e, prefix, parts[i], axis, &u[i]);
    ir_attr *a = st == VKI_OK ? ex_attr_int(e, "axis", axis) : NULL;
    if (st == VKI_OK && !a) st = oom();
    if (st == VKI_OK) st = ex_node(e, "Concat", g->values[out].name, u, n, &out, 1, a, 1);
    free(u);
    return st;
}

static char *ex_prefix(expander *e, const ir_node *owner, const char *label)
{
    size_t n = strlen(owner->name) + strlen(label) + 4;
    char *s = arena_alloc(&e->rd.g->arena, n);
    if (s) snprintf(s, n, "%s[%s]/", owner->name, label);
    return s;
}

/* One instance of the subgraph `graph` of `owner`, named by label: its formal inputs bound to
 * bind[0..n_bind), its outputs' values into outs[0..n_outs). */
static vki_status ex_subgraph(expander *e, const ir_node *owner, const char *label, const ir_attr *graph,
                              const int *bind, int n_bind, int *outs, int n_outs)
{
    reader *rd = &e->rd;
    ir_graph *g = rd->g;
    char *prefix = ex_prefix(e, owner, label);
    const char **scopes = arena_alloc(&g->arena, (size_t)(owner->n_scopes + 1) * sizeof *scopes);
    if (!prefix || !scopes) return oom();
    for (int k = 0; k < owner->n_scopes; k++) scopes[k] = owner->scopes[k];
    scopes[owner->n_scopes] = prefix;
    const char *const *saved = rd->scopes;
    int saved_n = rd->n_scopes;
    rd->scopes = scopes;
    rd->n_scopes = owner->n_scopes + 1;
    vki_status st = VKI_OK;
    int n_in = 0, n_out = 0;
    pb_reader r = pb_init(graph->graph_bytes, graph->graph_len);
    pb_field f;
    while (st == VKI_OK && pb_next(&r, &f)) { /* formal inputs: bound by Identity nodes */
        if (f.number != 11 || f.wire != PB_LEN) continue;
        const char *name;
        ir_value info;
        st = parse_value_info(rd, &f, &name, &info);
        if (st != VKI_OK) break;
        if (n_in >= n_bind) {
            n_in++;
            continue;
        }
        int v;
        st = ex_value(e, prefix, name, &v);
        if (st == VKI_OK) st = ex_identity(e, bind[n_in], v);
        n_in++;
    }
    if (st == VKI_OK && n_in != n_bind)
        st = vki_fail(VKI_ERROR_MODEL, "node '%s' (%s): its subgraph '%s' has %d inputs, %d expected", owner->name,
                      owner->op_type, graph->name, n_in, n_bind);
    r = pb_init(graph->graph_bytes, graph->graph_len);
    while (st == VKI_OK && pb_next(&r, &f)) { /* initializers: Constant nodes */
        if (f.number != 5 || f.wire != PB_LEN) continue;
        ir_tensor *t = arena_alloc(&g->arena, sizeof *t);
        ir_attr *a = arena_alloc(&g->arena, sizeof *a);
        if (!t || !a) {
            st = oom();
            break;
        }
        st = parse_tensor(f.data, f.len, t, &g->arena, rd->model);
        if (st != VKI_OK) break;
        *a = (ir_attr){.name = "value", .type = ATTR_TENSOR, .tensor = t};
        int v;
        st = ex_value(e, prefix, t->name, &v);
        if (st == VKI_OK) st = ex_node(e, "Constant", g->values[v].name, NULL, 0, &v, 1, a, 1);
    }
    r = pb_init(graph->graph_bytes, graph->graph_len);
    while (st == VKI_OK && pb_next(&r, &f)) {
        if (f.number != 1 || f.wire != PB_LEN) continue;
        st = ex_reserve(e, 1);
        if (st == VKI_OK) st = parse_node(rd, &f, g->n_nodes);
        if (st == VKI_OK) g->n_nodes++;
    }
    r = pb_init(graph->graph_bytes, graph->graph_len);
    while (st == VKI_OK && pb_next(&r, &f)) {
        if (f.number != 12 || f.wire != PB_LEN) continue;
        const char *name;
        ir_value info;
        st = parse_value_info(rd, &f, &name, &info);
        if (st != VKI_OK) break;
        int v = resolve_value(rd, name);
        if (v == -2) st = oom();
        else if (v < 0)
            st = vki_fail(VKI_ERROR_MODEL, "node '%s' (%s): subgraph '%s' outputs '%s', which it does not define",
                          owner->name, owner->op_type, graph->name, name);
        else if (n_out < n_outs) outs[n_out] = v;
        n_out++;
    }
    if (st == VKI_OK && r.error) st = bad("truncated subgraph");
    if (st == VKI_OK && n_out != n_outs)
        st = vki_fail(VKI_ERROR_MODEL, "node '%s' (%s): its subgraph '%s' has %d outputs, %d expected", owner->name,
                      owner->op_type, graph->name, n_out, n_outs);
    rd->scopes = saved;
    rd->n_scopes = saved_n;
    return st;
}

static const ir_attr *ex_graph_attr(const ir_node *n, const char *name)
{
    const ir_attr *a = ir_find_attr(n, name);
    return a && a->type == ATTR_GRAPH ? a : NULL;
}

static vki_status ex_if(expander *e, const ir_node *n, int64_t branch)
{
    const ir_attr *body = ex_graph_attr(n, branch ? "then_branch" : "else_branch");
    if (!body) return vki_fail(VKI_ERROR_MODEL, "node '%s' (If) has no %s graph", n->name, branch ? "then_branch" : "else_branch");
    int *outs = malloc((size_t)(n->n_outputs + 1) * sizeof *outs);
    if (!outs) return oom();
    vki_status st = ex_subgraph(e, n, branch ? "then" : "else", body, NULL, 0, outs, n->n_outputs);
    for (int k = 0; st == VKI_OK && k < n->n_outputs; k++)
        if (n->outputs[k] >= 0) st = ex_identity(e, outs[k], n->outputs[k]);
    free(outs);
    return st;
}

/* Whether v is `cond` passed through Identity nodes. */
static bool ex_passes_through(const ir_graph *g, int v, int cond)
{
    for (int hops = 0; hops < 64 && v >= 0; hops++) {
        if (v == cond) return true;
        int p = g->values[v].producer;
        if (p < 0 || strcmp(g->nodes[p].op_type, "Identity") || g->nodes[p].n_inputs < 1) return false;
        v = g->nodes[p].inputs[0];
    }
    return false;
}

static vki_status ex_loop(expander *e, const ir_node *n, int64_t trips)
{
    ir_graph *g = e->rd.g;
    const ir_attr *body = ex_graph_attr(n, "body");
    if (!body) return vki_fail(VKI_ERROR_MODEL, "node '%s' (Loop) has no body graph", n->name);
    int n_carried = n->n_inputs - 2;
    int n_scan = n->n_outputs - n_carried;
    if (n_carried < 0 || n_scan < 0)
        return vki_fail(VKI_ERROR_MODEL, "node '%s' (Loop) has %d inputs and %d outputs", n->name, n->n_inputs, n->n_outputs);
    for (int k = 0; k < n_scan; k++)
        if (trips == 0 && n->outputs[n_carried + k] >= 0)
            return vki_fail(VKI_ERROR_UNSUPPORTED, "node '%s' (Loop) runs 0 times: its scan output %d would be empty with a "
                            "shape only the body knows; not supported", n->name, k);
    size_t n_bind = (size_t)n_carried + 2, n_outs = (size_t)n_carried + 1 + (size_t)n_scan;
    int *bind = malloc(n_bind * sizeof *bind), *outs = malloc(n_outs * sizeof *outs);
    int *scans = malloc(((size_t)n_scan * (size_t)trips + 1) * sizeof *scans);
    vki_status st = bind && outs && scans ? VKI_OK : oom();
    char *prefix = ex_prefix(e, n, "loop");
    if (st == VKI_OK && !prefix) st = oom();
    int cond = n->inputs[1];
    if (st == VKI_OK && cond < 0) { /* no condition: true throughout */
        ir_tensor *t = arena_alloc(&g->arena, sizeof *t);
        ir_attr *a = arena_alloc(&g->arena, sizeof *a);
        uint8_t *one = arena_alloc(&g->arena, 1);
        if (!t || !a || !one) st = oom();
        else {
            *one = 1;
            *t = (ir_tensor){.name = "", .dtype = VKI_DTYPE_BOOL, .data = one, .bytes = 1};
            *a = (ir_attr){.name = "value", .type = ATTR_TENSOR, .tensor = t};
            st = ex_value(e, prefix, "cond", &cond);
            if (st == VKI_OK) st = ex_node(e, "Constant", g->values[cond].name, NULL, 0, &cond, 1, a, 1);
        }
    }
    for (int k = 0; st == VKI_OK && k < n_carried; k++) bind[2 + k] = n->inputs[2 + k];
    for (int64_t i = 0; st == VKI_OK && i < trips; i++) {
        char label[32];
        snprintf(label, sizeof label, "%lld", (long long)i);
        char *ip = ex_prefix(e, n, label);
        if (!ip) {
            st = oom();
            break;
        }
        st = ex_const_i64(e, ip, "iteration", &i, 1, 0, &bind[0]);
        bind[1] = cond;
        if (st == VKI_OK) st = ex_subgraph(e, n, label, body, bind, (int)n_bind, outs, (int)n_outs);
        if (st != VKI_OK) break;
        /* the body's formal condition input is Identity(cond): its output must be that again */
        if (i + 1 < trips && !ex_passes_through(g, outs[0], cond))
            st = vki_fail(VKI_ERROR_UNSUPPORTED, "node '%s' (Loop): the body computes its condition output ('%s'); vkinfer "
                          "unrolls a Loop whose condition stays true (passed through unchanged) and refuses a data-dependent "
                          "early exit", n->name, g->values[outs[0]].name);
        cond = outs[0];
        for (int k = 0; k < n_carried; k++) bind[2 + k] = outs[1 + k];
        for (int k = 0; k < n_scan; k++) scans[(size_t)k * (size_t)trips + (size_t)i] = outs[1 + n_carried + k];
    }
    for (int k = 0; st == VKI_OK && k < n_carried; k++)
        if (n->outputs[k] >= 0) st = ex_identity(e, bind[2 + k], n->outputs[k]);
    for (int k = 0; st == VKI_OK && k < n_scan; k++)
        if (n->outputs[n_carried + k] >= 0)
            st = ex_stack(e, prefix, &scans[(size_t)k * (size_t)trips], (int)trips, 0, n->outputs[n_carried + k]);
    free(bind);
    free(outs);
    free(scans);
    return st;
}

/* Gather(x, Constant(pos), axis) into a new value. */
static vki_status ex_take(expander *e, const char *prefix, int x, int64_t pos, int64_t axis, int *out)
{
    int idx;
    VKI_TRY(ex_const_i64(e, prefix, "index", &pos, 1, 0, &idx));
    ir_attr *a = ex_attr_int(e, "axis", axis);
    if (!a) return oom();
    VKI_TRY(ex_value(e, prefix, "slice", out));
    int in[2] = {x, idx};
    return ex_node(e, "Gather", e->rd.g->values[*out].name, in, 2, out, 1, a, 1);
}

/* One scan of `len` steps: state[0..n_state) updated in place; scan input j sliced along
 * in_axes[j] (backwards where in_dirs[j]); scan output k stacked along out_axes[k] into
 * targets[k] (skipped where -1; reversed where out_dirs[k]). */
static vki_status ex_scan_run(expander *e, const ir_node *n, const ir_attr *body, const char *tag, int64_t len,
                              int n_state, int n_in, int n_scan, int *state, const int *xs, const int64_t *in_axes,
                              const int64_t *in_dirs, const int64_t *out_axes, const int64_t *out_dirs, const int *targets)
{
    size_t n_bind = (size_t)(n_state + n_in), n_outs = (size_t)(n_state + n_scan);
    int *bind = malloc((n_bind + 1) * sizeof *bind), *outs = malloc((n_outs + 1) * sizeof *outs);
    int *scans = malloc(((size_t)n_scan * (size_t)len + 1) * sizeof *scans);
    vki_status st = bind && outs && scans ? VKI_OK : oom();
    char *prefix = ex_prefix(e, n, tag);
    if (st == VKI_OK && !prefix) st = oom();
    for (int k = 0; st == VKI_OK && k < n_state; k++) bind[k] = state[k];
    for (int64_t t = 0; st == VKI_OK && t < len; t++) {
        char label[64];
        snprintf(label, sizeof label, "%s%lld", tag, (long long)t);
        char *ip = ex_prefix(e, n, label);
        if (!ip) {
            st = oom();
            break;
        }
        for (int j = 0; st == VKI_OK && j < n_in; j++)
            st = ex_take(e, ip, xs[j], in_dirs[j] ? len - 1 - t : t, in_axes[j], &bind[n_state + j]);
        if (st == VKI_OK) st = ex_subgraph(e, n, label, body, bind, (int)n_bind, outs, (int)n_outs);
        if (st != VKI_OK) break;
        for (int k = 0; k < n_state; k++) bind[k] = outs[k];
        for (int k = 0; k < n_scan; k++) scans[(size_t)k * (size_t)len + (size_t)(out_dirs[k] ? len - 1 - t : t)] = outs[n_state + k];
    }
    for (int k = 0; st == VKI_OK && k < n_state; k++) state[k] = bind[k];
    for (int k = 0; st == VKI_OK && k < n_scan; k++)
        if (targets[k] >= 0) st = ex_stack(e, prefix, &scans[(size_t)k * (size_t)len], (int)len, out_axes[k], targets[k]);
    free(bind);
    free(outs);
    free(scans);
    return st;
}

/* Scan 9+: decision = len. Scan 8 (a batch axis 0 on every input and output, the scan axis 1
 * of scan inputs, no sequence_lens): decision = batch << 32 | len, one scan per batch entry
 * and the results stacked along axis 0. */
static vki_status ex_scan(expander *e, const ir_node *n, int64_t decision)
{
    ir_graph *g = e->rd.g;
    const ir_attr *body = ex_graph_attr(n, "body");
    if (!body) return vki_fail(VKI_ERROR_MODEL, "node '%s' (Scan) has no body graph", n->name);
    bool v8 = g->opset < 9;
    int first = v8 ? 1 : 0; /* Scan-8's input 0 is sequence_lens */
    int n_in = (int)ir_attr_int(n, "num_scan_inputs", -1);
    int n_state = n->n_inputs - first - n_in;
    int n_scan = n->n_outputs - n_state;
    if (n_in < 1 || n_state < 0 || n_scan < 0)
        return vki_fail(VKI_ERROR_MODEL, "node '%s' (Scan) has %d inputs, %d outputs and num_scan_inputs %d", n->name,
                        n->n_inputs, n->n_outputs, n_in);
    const int64_t *ia = NULL, *id = NULL, *oa = NULL, *od = NULL;
    int c_ia = ir_attr_ints(n, "scan_input_axes", &ia);
    int c_id = ir_attr_ints(n, v8 ? "directions" : "scan_input_directions", &id);
    int c_oa = ir_attr_ints(n, "scan_output_axes", &oa), c_od = ir_attr_ints(n, "scan_output_directions", &od);
    if ((c_ia >= 0 && c_ia != n_in) || (c_id >= 0 && c_id != n_in) || (c_oa >= 0 && c_oa != n_scan) ||
        (c_od >= 0 && c_od != n_scan))
        return vki_fail(VKI_ERROR_MODEL, "node '%s' (Scan): an axes or directions attribute has the wrong length", n->name);
    size_t nn = (size_t)(n_in + n_scan + n_state) + 1;
    int64_t *arr = calloc(4 * nn, sizeof *arr);
    int *state = malloc(nn * sizeof *state), *xs = malloc(nn * sizeof *xs), *targets = malloc(nn * sizeof *targets);
    vki_status st = arr && state && xs && targets ? VKI_OK : oom();
    int64_t *in_axes = arr, *in_dirs = arr + nn, *out_axes = arr + 2 * nn, *out_dirs = arr + 3 * nn;
    for (int j = 0; st == VKI_OK && j < n_in; j++) {
        in_axes[j] = c_ia >= 0 ? ia[j] : 0;
        in_dirs[j] = c_id >= 0 ? id[j] : 0;
    }
    for (int k = 0; st == VKI_OK && k < n_scan; k++) {
        out_axes[k] = c_oa >= 0 ? oa[k] : 0;
        out_dirs[k] = c_od >= 0 ? od[k] : 0;
    }
    if (st == VKI_OK && !v8) {
        for (int k = 0; k < n_state; k++) state[k] = n->inputs[k];
        for (int j = 0; j < n_in; j++) xs[j] = n->inputs[n_state + j];
        for (int k = 0; k < n_scan; k++) targets[k] = n->outputs[n_state + k];
        st = ex_scan_run(e, n, body, "", decision, n_state, n_in, n_scan, state, xs, in_axes, in_dirs, out_axes, out_dirs,
                         targets);
        for (int k = 0; st == VKI_OK && k < n_state; k++)
            if (n->outputs[k] >= 0) st = ex_identity(e, state[k], n->outputs[k]);
    } else if (st == VKI_OK) {
        int64_t batch = decision >> 32, len = decision & 0xffffffff;
        size_t per = (size_t)(n_state + n_scan);
        int *res = malloc(((size_t)batch * per + 1) * sizeof *res);
        char *prefix = ex_prefix(e, n, "batch");
        if (!res || !prefix) st = oom();
        for (int64_t b = 0; st == VKI_OK && b < batch; b++) {
            char tag[40];
            snprintf(tag, sizeof tag, "b%lld.", (long long)b);
            char *bp = ex_prefix(e, n, tag);
            if (!bp) st = oom();
            for (int k = 0; st == VKI_OK && k < n_state; k++)
                st = ex_take(e, bp, n->inputs[first + k], b, 0, &state[k]);
            for (int j = 0; st == VKI_OK && j < n_in; j++) st = ex_take(e, bp, n->inputs[first + n_state + j], b, 0, &xs[j]);
            for (int k = 0; st == VKI_OK && k < n_scan; k++) st = ex_value(e, bp, "scanned", &targets[k]);
            if (st == VKI_OK)
                st = ex_scan_run(e, n, body, tag, len, n_state, n_in, n_scan, state, xs, in_axes, in_dirs, out_axes, out_dirs,
                                 targets);
            for (int k = 0; st == VKI_OK && k < n_state; k++) res[(size_t)k * (size_t)batch + (size_t)b] = state[k];
            for (int k = 0; st == VKI_OK && k < n_scan; k++) res[(size_t)(n_state + k) * (size_t)batch + (size_t)b] = targets[k];
        }
        for (int k = 0; st == VKI_OK && k < (int)per; k++)
            if (n->outputs[k] >= 0) st = ex_stack(e, prefix, &res[(size_t)k * (size_t)batch], (int)batch, 0, n->outputs[k]);
        free(res);
    }
    free(arr);
    free(state);
    free(xs);
    free(targets);
    return st;
}

vki_status ir_graph_expand(ir_graph *src, const int64_t *decision, ir_graph **out)
{
    *out = NULL;
    ir_graph *g = calloc(1, sizeof *g);
    if (!g) return oom();
    g->expanded = true;
    g->base = src;
    g->opset = src->opset;
    g->ir_version = src->ir_version;
    g->inputs = src->inputs;
    g->n_inputs = src->n_inputs;
    g->outputs = src->outputs;
    g->n_outputs = src->n_outputs;
    g->cap_values = src->n_values + 64;
    g->values = malloc((size_t)g->cap_values * sizeof *g->values);
    expander e = {.rd = {.g = g}};
    vki_status st = g->values ? VKI_OK : oom();
    if (st == VKI_OK) {
        memcpy(g->values, src->values, (size_t)src->n_values * sizeof *g->values);
        g->n_values = src->n_values;
        for (int v = 0; v < g->n_values; v++) g->values[v].producer = -1;
    }
    while (st == VKI_OK && (size_t)(g->n_values + 1) * 2 > e.rd.table_cap) st = grow_table(&e.rd);
    if (st == VKI_OK) st = ex_reserve(&e, src->n_nodes + 16);
    for (int n = 0; st == VKI_OK && n < src->n_nodes; n++) {
        const ir_node *node = &src->nodes[n];
        if (decision[n] == INT64_MIN) {
            st = ex_reserve(&e, 1);
            if (st != VKI_OK) break;
            g->nodes[g->n_nodes] = *node;
            for (int k = 0; k < node->n_outputs; k++)
                if (node->outputs[k] >= 0) g->values[node->outputs[k]].producer = g->n_nodes;
            g->n_nodes++;
        } else if (!strcmp(node->op_type, "If")) {
            st = ex_if(&e, node, decision[n]);
        } else if (!strcmp(node->op_type, "Loop")) {
            st = ex_loop(&e, node, decision[n]);
        } else if (!strcmp(node->op_type, "Scan")) {
            st = ex_scan(&e, node, decision[n]);
        } else {
            st = vki_fail(VKI_ERROR_MODEL, "internal: node '%s' (%s) is not a control-flow node", node->name, node->op_type);
        }
    }
    free(e.rd.table);
    if (st != VKI_OK) {
        g->base = NULL;
        g->expanded = false;
        arena_free(&g->arena);
        free(g->values);
        free(g->nodes);
        free(g);
        return st;
    }
    *out = g;
    return VKI_OK;
}
