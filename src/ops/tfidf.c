/* TfIdfVectorizer over integer tokens (shaders/tfidf.comp): the pool's n-grams are grouped
 * by output column at plan time; one invocation per (row, column) counts them in its row.
 * Same semantics as ONNX's reference: ids count every n-gram of the pool, also those of a
 * length outside [min_gram_length, max_gram_length]; a repeated n-gram takes its last id;
 * unigrams count once, longer n-grams at every skip distance up to max_skip_count + 1. */
#include "op.h"

#include <stdlib.h>
#include <string.h>

typedef struct ngram {
    int n;
    const int64_t *items;
    int64_t id; /* 1-based, as ngram_indexes counts */
} ngram;

static int compare_ngrams(const void *pa, const void *pb)
{
    const ngram *a = pa, *b = pb;
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    for (int k = 0; k < a->n; k++)
        if (a->items[k] != b->items[k]) return a->items[k] < b->items[k] ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static vki_status plan_tfidf(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *x = op_in(c, 0);
    const int64_t *pool, *counts, *indexes;
    int n_pool = ir_attr_ints(c->node, "pool_int64s", &pool);
    int n_counts = ir_attr_ints(c->node, "ngram_counts", &counts);
    int n_indexes = ir_attr_ints(c->node, "ngram_indexes", &indexes);
    const ir_attr *strings = ir_find_attr(c->node, "pool_strings"), *weights = ir_find_attr(c->node, "weights");
    if (strings && strings->count > 0) return op_error(c, VKI_ERROR_UNSUPPORTED, "pool_strings: strings unsupported");
    if (x->dtype != VKI_DTYPE_INT32 && x->dtype != VKI_DTYPE_INT64)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "X is %s: only int32 and int64 tokens are supported (strings unsupported)",
                        vki_dtype_name(x->dtype));
    if (x->rank > 2) return op_error(c, VKI_ERROR_SHAPE, "X must be [C] or [N, C], not rank %d", x->rank);
    const char *mode_name = ir_attr_string(c->node, "mode", "");
    uint32_t mode = !strcmp(mode_name, "TF") ? 0 : !strcmp(mode_name, "IDF") ? 1 : !strcmp(mode_name, "TFIDF") ? 2 : 3;
    if (mode == 3) return op_error(c, VKI_ERROR_MODEL, "mode must be TF, IDF or TFIDF, not '%s'", mode_name);
    int64_t min_len = ir_attr_int(c->node, "min_gram_length", -1), max_len = ir_attr_int(c->node, "max_gram_length", -1);
    int64_t max_skip = ir_attr_int(c->node, "max_skip_count", -1);
    if (min_len < 1 || max_len < min_len || max_skip < 0 || max_skip > 1 << 20)
        return op_error(c, VKI_ERROR_MODEL, "min_gram_length %lld, max_gram_length %lld and max_skip_count %lld: need "
                        "1 <= min <= max and 0 <= max_skip_count <= 2^20", (long long)min_len, (long long)max_len,
                        (long long)max_skip);
    if (n_pool < 1 || n_counts < 1 || n_indexes < 1)
        return op_error(c, VKI_ERROR_MODEL, "pool_int64s, ngram_counts and ngram_indexes must be non-empty "
                        "(%d, %d and %d entries)", n_pool, n_counts, n_indexes);
    int64_t cols = 0;
    for (int k = 0; k < n_indexes; k++) {
        if (indexes[k] < 0 || indexes[k] >= INT32_MAX)
            return op_error(c, VKI_ERROR_MODEL, "ngram_indexes[%d] is %lld, outside [0, 2^31)", k, (long long)indexes[k]);
        if (indexes[k] + 1 > cols) cols = indexes[k] + 1;
    }
    if (weights && weights->type != ATTR_FLOATS) return op_error(c, VKI_ERROR_MODEL, "weights must be a list of floats");
    if (weights && weights->count && weights->count != cols)
        return op_error(c, VKI_ERROR_MODEL, "weights has %d entries for %lld output columns", weights->count, (long long)cols);

    /* the pool's n-grams of a length in [min_len, max_len], with their ids */
    ngram *grams = malloc(sizeof *grams * (size_t)n_pool);
    if (!grams) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    int n_grams = 0;
    int64_t id = 1;
    for (int g = 0; g < n_counts; g++) {
        int64_t start = counts[g], end = g + 1 < n_counts ? counts[g + 1] : n_pool, len = g + 1;
        if (start < 0 || end < start || end > n_pool || (end - start) % len) {
            free(grams);
            return op_error(c, VKI_ERROR_MODEL, "ngram_counts[%d] = %lld: the %lld-grams must be a whole number of "
                            "entries of pool_int64s (%d entries) after those before", g, (long long)start,
                            (long long)len, n_pool);
        }
        for (int64_t at = start; at < end; at += len, id++) {
            if (len < min_len || len > max_len) continue;
            bool fits = true; /* tokens are held as int32: an n-gram with a larger item never matches */
            for (int64_t k = 0; k < len; k++) fits &= pool[at + k] >= INT32_MIN && pool[at + k] <= INT32_MAX;
            if (id > n_indexes) {
                free(grams);
                return op_error(c, VKI_ERROR_MODEL, "the pool holds more n-grams than ngram_indexes' %d entries", n_indexes);
            }
            if (fits) grams[n_grams++] = (ngram){(int)len, pool + at, id};
        }
    }
    qsort(grams, (size_t)n_grams, sizeof *grams, compare_ngrams);
    int64_t *col_count = calloc((size_t)cols + 1, sizeof *col_count);
    if (!col_count) {
        free(grams);
        return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    int kept = 0;
    for (int k = 0; k < n_grams; k++) {
        /* equal n-grams sort together by id: the last one is the one the reference counts */
        if (k + 1 < n_grams && grams[k + 1].n == grams[k].n &&
            !memcmp(grams[k + 1].items, grams[k].items, sizeof(int64_t) * (size_t)grams[k].n))
            continue;
        grams[kept++] = grams[k];
        col_count[indexes[grams[k].id - 1]] += 1 + grams[k].n;
    }

    int64_t dims[2] = {x->rank == 2 ? x->dims[0] : cols, cols};
    int out_rank = x->rank == 2 ? 2 : 1;
    vki_status st = op_set_output(c, 0, VKI_DTYPE_FLOAT, out_rank, dims);
    int64_t rows = x->rank == 2 ? x->dims[0] : 1, row_len = x->rank == 0 ? 1 : x->dims[x->rank - 1];
    int64_t words = cols + 1 + cols;
    for (int64_t k = 0; k < cols; k++) words += col_count[k];
    if (st == VKI_OK && (rows * cols > UINT32_MAX || words > INT32_MAX || rows * row_len > INT32_MAX))
        st = op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    if (st != VKI_OK || rows * cols == 0) {
        free(grams);
        free(col_count);
        return st;
    }
    int table;
    int32_t *t = op_temp_const(c, VKI_DTYPE_INT32, words, &table);
    if (!t) {
        free(grams);
        free(col_count);
        return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    /* column offsets, then each column's n-grams (placed through col_count as cursors) */
    int64_t at = cols + 1;
    for (int64_t k = 0; k < cols; k++) {
        t[k] = (int32_t)at;
        at += col_count[k];
        col_count[k] = t[k];
    }
    t[cols] = (int32_t)at;
    for (int k = 0; k < kept; k++) {
        int64_t *cursor = &col_count[indexes[grams[k].id - 1]];
        t[(*cursor)++] = grams[k].n;
        for (int j = 0; j < grams[k].n; j++) t[(*cursor)++] = (int32_t)grams[k].items[j];
    }
    bool has_weights = weights && weights->count;
    if (has_weights) memcpy(t + at, weights->floats, sizeof(float) * (size_t)cols);
    free(grams);
    free(col_count);
    struct { uint32_t count, cols, row_len, max_skip, weights_at, has_weights; } push = {
        (uint32_t)(rows * cols), (uint32_t)cols, (uint32_t)row_len, (uint32_t)max_skip, (uint32_t)at, has_weights};
    uint32_t spec[2] = {64, mode}, gx, gy;
    int values[3] = {op_in_index(c, 0), table, op_out_index(c, 0)};
    op_grid_1d((uint64_t)(rows * cols), 64, &gx, &gy);
    return op_dispatch(c, "tfidf", spec, 2, &push, sizeof push, values, 3, gx, gy, 1);
}

const op_def op_TfIdfVectorizer = {"TfIdfVectorizer", "", "int32 int64",
                                   "integer pools (pool_int64s); pool_strings unsupported", plan_tfidf};
