/* ai.onnx.ml element maps: Binarizer and ArrayFeatureExtractor (shaders/ml.comp),
 * LabelEncoder (shaders/label_encoder.comp). */
#include "op.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static vki_status plan_binarizer(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0);
    if (x->dtype == VKI_DTYPE_BOOL) return op_error(c, VKI_ERROR_MODEL, "X must be numeric");
    VKI_TRY(op_set_output(c, 0, x->dtype, x->rank, x->dims));
    int64_t count = shape_numel(x->dims, x->rank);
    if (count == 0) return VKI_OK;
    if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    struct { uint32_t count, cols, picks; float threshold; } push = {(uint32_t)count, 1, 1, ir_attr_float(c->node, "threshold", 0.0f)};
    uint32_t spec[3] = {64, op_dtype_code(x->dtype), 0}, gx, gy;
    int values[3] = {op_in_index(c, 0), op_in_index(c, 0), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch(c, "ml", spec, 3, &push, sizeof push, values, 3, gx, gy, 1);
}

/* X [..., N] and indices (any shape, k entries) give [..., k]; a 1-D X gives [1, k], as
 * onnxruntime and ONNX's reference. */
static vki_status plan_array_feature_extractor(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    VKI_TRY(op_require_gpu_dtype(c, 0));
    plan_value *x = op_in(c, 0), *idx = op_in(c, 1);
    if (idx->dtype != VKI_DTYPE_INT64 && idx->dtype != VKI_DTYPE_INT32)
        return op_error(c, VKI_ERROR_MODEL, "Y (the indices) must be int64, not %s", vki_dtype_name(idx->dtype));
    if (x->rank < 1) return op_error(c, VKI_ERROR_SHAPE, "X must have at least one dim");
    int64_t picks = shape_numel(idx->dims, idx->rank), cols = x->dims[x->rank - 1];
    int64_t dims[VKI_MAX_RANK];
    int rank = x->rank < 2 ? 2 : x->rank;
    for (int k = 0; k < rank - 1; k++) dims[k] = x->rank < 2 ? 1 : x->dims[k];
    dims[rank - 1] = picks;
    VKI_TRY(op_set_output(c, 0, x->dtype, rank, dims));
    int64_t count = shape_numel(dims, rank);
    if (count == 0) return VKI_OK;
    if (count > UINT32_MAX || shape_numel(x->dims, x->rank) > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    struct { uint32_t count, cols, picks; float threshold; } push = {(uint32_t)count, (uint32_t)cols, (uint32_t)picks, 0};
    uint32_t spec[3] = {64, op_dtype_code(x->dtype), 1}, gx, gy;
    int values[3] = {op_in_index(c, 0), op_in_index(c, 1), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch(c, "ml", spec, 3, &push, sizeof push, values, 3, gx, gy, 1);
}

const op_def op_Binarizer = {"Binarizer", "ai.onnx.ml", OP_DTYPES_NUMERIC, "", plan_binarizer};
const op_def op_ArrayFeatureExtractor = {"ArrayFeatureExtractor", "ai.onnx.ml", OP_DTYPES_ALL,
                                         "an index outside the last dim reads 0", plan_array_feature_extractor};

/* LabelEncoder over numbers (shaders/label_encoder.comp): keys_int64s, keys_floats or
 * keys_tensor to values_int64s, values_floats or values_tensor; a repeated key takes its last
 * value, a NaN key matches every NaN. String keys or values are an error. */
typedef struct label_pair {
    double key;
    double value;
    int order;
} label_pair;

static int compare_labels(const void *pa, const void *pb)
{
    const label_pair *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->order - b->order;
}

/* One of the keys_* / values_* forms as doubles (malloc'ed), and its dtype. */
static vki_status label_list(op_ctx *c, const char *kind, double **out, int *count, vki_dtype *dtype)
{
    char ints[32], floats[32], tensor[32], strings[32];
    snprintf(ints, sizeof ints, "%s_int64s", kind);
    snprintf(floats, sizeof floats, "%s_floats", kind);
    snprintf(tensor, sizeof tensor, "%s_tensor", kind);
    snprintf(strings, sizeof strings, "%s_strings", kind);
    const ir_attr *a_ints = ir_find_attr(c->node, ints), *a_floats = ir_find_attr(c->node, floats);
    const ir_attr *a_tensor = ir_find_attr(c->node, tensor), *a_strings = ir_find_attr(c->node, strings);
    if (a_strings || (a_tensor && a_tensor->tensor && a_tensor->tensor->dtype == VKI_DTYPE_STRING))
        return op_error(c, VKI_ERROR_UNSUPPORTED, "%s: strings unsupported", a_strings ? strings : tensor);
    if (!!a_ints + !!a_floats + !!a_tensor != 1 || (a_ints && a_ints->type != ATTR_INTS) ||
        (a_floats && a_floats->type != ATTR_FLOATS))
        return op_error(c, VKI_ERROR_MODEL, "needs exactly one of %s (ints), %s (floats) and %s", ints, floats, tensor);
    const ir_tensor *t = a_tensor ? a_tensor->tensor : NULL;
    if (a_tensor && (a_tensor->type != ATTR_TENSOR || !t || t->bytes < (size_t)shape_numel(t->dims, t->rank) * vki_dtype_size(t->dtype)))
        return op_error(c, VKI_ERROR_MODEL, "%s must be a tensor", tensor);
    *count = a_ints ? a_ints->count : a_floats ? a_floats->count : (int)shape_numel(t->dims, t->rank);
    *dtype = a_ints ? VKI_DTYPE_INT64 : a_floats ? VKI_DTYPE_FLOAT : t->dtype;
    if (*dtype != VKI_DTYPE_INT64 && *dtype != VKI_DTYPE_INT32 && *dtype != VKI_DTYPE_INT16 && *dtype != VKI_DTYPE_FLOAT &&
        *dtype != VKI_DTYPE_DOUBLE)
        return op_error(c, VKI_ERROR_MODEL, "%s is %s: must be int64, int32, int16, float32 or float64", tensor,
                        vki_dtype_name(*dtype));
    *out = malloc(sizeof(double) * (size_t)(*count ? *count : 1));
    if (!*out) return op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int k = 0; k < *count; k++)
        (*out)[k] = a_ints ? (double)a_ints->ints[k] : a_floats ? a_floats->floats[k] : host_read_f64(t->dtype, t->data, (size_t)k);
    return VKI_OK;
}

/* v as the 32-bit word a value of dtype t is held in (integers as int32). */
static bool label_word(vki_dtype t, double v, uint32_t *word)
{
    if (dtype_is_float(t)) {
        float f = (float)v;
        memcpy(word, &f, 4);
        return true;
    }
    if (v < INT32_MIN || v > INT32_MAX) return false;
    int32_t i = (int32_t)v;
    memcpy(word, &i, 4);
    return true;
}

static vki_status plan_label_encoder(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *x = op_in(c, 0);
    double *keys = NULL, *values = NULL;
    int n_keys = 0, n_values = 0;
    vki_dtype key_dtype = VKI_DTYPE_FLOAT, value_dtype = VKI_DTYPE_FLOAT;
    vki_status st = label_list(c, "keys", &keys, &n_keys, &key_dtype);
    if (st == VKI_OK) st = label_list(c, "values", &values, &n_values, &value_dtype);
    bool float_keys = dtype_is_float(key_dtype);
    if (st == VKI_OK && n_keys != n_values)
        st = op_error(c, VKI_ERROR_MODEL, "%d keys and %d values", n_keys, n_values);
    if (st == VKI_OK && (float_keys != dtype_is_float(x->dtype) || x->dtype == VKI_DTYPE_BOOL))
        st = op_error(c, VKI_ERROR_MODEL, "X is %s and the keys %s: both must be integers or both floats",
                      vki_dtype_name(x->dtype), vki_dtype_name(key_dtype));
    /* the default: default_tensor, else default_int64 / default_float by the values' kind */
    double fallback = dtype_is_float(value_dtype) ? -0.0 : -1.0;
    const ir_attr *dt = ir_find_attr(c->node, "default_tensor");
    if (st == VKI_OK && dt) {
        if (dt->type != ATTR_TENSOR || !dt->tensor || shape_numel(dt->tensor->dims, dt->tensor->rank) != 1 ||
            dt->tensor->dtype == VKI_DTYPE_STRING || dt->tensor->bytes < vki_dtype_size(dt->tensor->dtype))
            st = op_error(c, VKI_ERROR_MODEL, "default_tensor must be a numeric tensor of one element");
        else
            fallback = host_read_f64(dt->tensor->dtype, dt->tensor->data, 0);
    } else if (dtype_is_float(value_dtype)) {
        fallback = ir_find_attr(c->node, "default_float") ? ir_attr_float(c->node, "default_float", 0.0f) : fallback;
    } else {
        fallback = (double)ir_attr_int(c->node, "default_int64", -1);
    }
    if (st == VKI_OK) st = op_set_output(c, 0, value_dtype, x->rank, x->dims);
    int64_t count = shape_numel(x->dims, x->rank);
    if (st == VKI_OK && count > UINT32_MAX) st = op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    label_pair *pairs = st == VKI_OK ? malloc(sizeof *pairs * (size_t)(n_keys ? n_keys : 1)) : NULL;
    if (st == VKI_OK && !pairs) st = op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
    int n = 0, nan_at = -1;
    for (int k = 0; st == VKI_OK && k < n_keys; k++) {
        uint32_t w;
        if (!label_word(value_dtype, values[k], &w))
            st = op_error(c, VKI_ERROR_UNSUPPORTED, "values[%d] = %.17g is outside int32, which %s is held in", k, values[k],
                          vki_dtype_name(value_dtype));
        else if (float_keys && isnan(keys[k]))
            nan_at = k;
        else if (float_keys || (keys[k] >= INT32_MIN && keys[k] <= INT32_MAX)) /* a larger key matches no int32 */
            pairs[n++] = (label_pair){float_keys ? (double)(float)keys[k] : keys[k], values[k], k};
    }
    uint32_t fallback_word = 0;
    if (st == VKI_OK && !label_word(value_dtype, fallback, &fallback_word))
        st = op_error(c, VKI_ERROR_UNSUPPORTED, "the default %.17g is outside int32", fallback);
    if (st == VKI_OK && count > 0) {
        qsort(pairs, (size_t)n, sizeof *pairs, compare_labels);
        int kept = 0; /* of equal keys (sorted by order), the last */
        for (int k = 0; k < n; k++)
            if (k + 1 == n || pairs[k + 1].key != pairs[k].key) pairs[kept++] = pairs[k];
        int table;
        uint32_t *t = op_temp_const(c, VKI_DTYPE_INT32, 2 * (int64_t)kept + 2, &table);
        if (!t) {
            st = op_error(c, VKI_ERROR_OUT_OF_MEMORY, "out of host memory");
        } else {
            for (int k = 0; k < kept; k++) {
                label_word(float_keys ? VKI_DTYPE_FLOAT : VKI_DTYPE_INT32, pairs[k].key, &t[k]);
                label_word(value_dtype, pairs[k].value, &t[kept + k]);
            }
            t[2 * kept] = fallback_word;
            if (nan_at >= 0) label_word(value_dtype, values[nan_at], &t[2 * kept + 1]);
            struct { uint32_t count, keys, has_nan; } push = {(uint32_t)count, (uint32_t)kept, nan_at >= 0};
            uint32_t spec[2] = {64, float_keys}, gx, gy;
            int bound[3] = {op_in_index(c, 0), table, op_out_index(c, 0)};
            op_grid_1d((uint64_t)count, 64, &gx, &gy);
            st = op_dispatch(c, "label_encoder", spec, 2, &push, sizeof push, bound, 3, gx, gy, 1);
        }
    }
    free(pairs);
    free(keys);
    free(values);
    return st;
}

const op_def op_LabelEncoder = {"LabelEncoder", "ai.onnx.ml", "int16 int32 int64 float32 float64",
                                "numeric keys and values; keys_strings, values_strings unsupported", plan_label_encoder};
