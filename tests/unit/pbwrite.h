/* A tiny protobuf writer for tests: builds ONNX models byte by byte. */
#ifndef VKI_TEST_PBWRITE_H
#define VKI_TEST_PBWRITE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pbw {
    uint8_t *data;
    size_t len, cap;
} pbw;

static void pbw_bytes(pbw *w, const void *p, size_t n)
{
    if (w->len + n > w->cap) {
        w->cap = (w->len + n) * 2 + 64;
        w->data = realloc(w->data, w->cap);
    }
    if (n) memcpy(w->data + w->len, p, n); /* p may be NULL for nothing */
    w->len += n;
}

static void pbw_varint(pbw *w, uint64_t v)
{
    uint8_t b[10];
    int n = 0;
    do {
        b[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) b[n] |= 0x80;
        n++;
    } while (v);
    pbw_bytes(w, b, (size_t)n);
}

static void pbw_int(pbw *w, int field, uint64_t v)
{
    pbw_varint(w, (uint64_t)field << 3);
    pbw_varint(w, v);
}

static void pbw_len(pbw *w, int field, const void *p, size_t n)
{
    pbw_varint(w, (uint64_t)field << 3 | 2);
    pbw_varint(w, n);
    pbw_bytes(w, p, n);
}

static void pbw_str(pbw *w, int field, const char *s) { pbw_len(w, field, s, strlen(s)); }

static void pbw_msg(pbw *w, int field, pbw *inner)
{
    pbw_len(w, field, inner->data, inner->len);
    free(inner->data);
    memset(inner, 0, sizeof *inner);
}

/* ValueInfoProto of a float tensor with the given dims (dims < 0: symbolic "N"). */
static void pbw_value_info(pbw *w, int field, const char *name, int elem_type, const int64_t *dims, int rank)
{
    pbw vi = {0}, type = {0}, tensor = {0}, shape = {0};
    for (int i = 0; i < rank; i++) {
        pbw dim = {0};
        if (dims[i] >= 0) pbw_int(&dim, 1, (uint64_t)dims[i]);
        else pbw_str(&dim, 2, "N");
        pbw_msg(&shape, 1, &dim);
    }
    pbw_int(&tensor, 1, (uint64_t)elem_type);
    pbw_msg(&tensor, 2, &shape);
    pbw_msg(&type, 1, &tensor);
    pbw_str(&vi, 1, name);
    pbw_msg(&vi, 2, &type);
    pbw_msg(w, field, &vi);
}

static inline void pbw_node(pbw *graph, const char *op, const char *in, const char *out)
{
    pbw node = {0};
    pbw_str(&node, 1, in);
    pbw_str(&node, 2, out);
    pbw_str(&node, 4, op);
    pbw_msg(graph, 1, &node);
}

/* A node with two inputs (Add, Mul, MatMul...). */
static inline void pbw_node2(pbw *graph, const char *op, const char *a, const char *b, const char *out)
{
    pbw node = {0};
    pbw_str(&node, 1, a);
    pbw_str(&node, 1, b);
    pbw_str(&node, 2, out);
    pbw_str(&node, 4, op);
    pbw_msg(graph, 1, &node);
}

/* A 1-D initializer `name` of elem_type holding `bytes` of raw data. */
static inline void pbw_initializer(pbw *graph, const char *name, int elem_type, uint64_t dim, const void *data, size_t bytes)
{
    pbw t = {0};
    pbw_int(&t, 1, dim);
    pbw_int(&t, 2, (uint64_t)elem_type);
    pbw_str(&t, 8, name);
    pbw_len(&t, 9, data, bytes);
    pbw_msg(graph, 5, &t);
}

/* Writes the bytes to `path` and frees them. */
static inline void pbw_save(pbw *w, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(w->data, 1, w->len, f);
        fclose(f);
    }
    free(w->data);
    memset(w, 0, sizeof *w);
}

/* ModelProto around a graph, opset 13. */
static inline void pbw_model(pbw *model, pbw *graph)
{
    pbw opset = {0};
    pbw_int(model, 1, 8);
    pbw_int(&opset, 2, 13);
    pbw_msg(model, 8, &opset);
    pbw_msg(model, 7, graph);
}

#endif
