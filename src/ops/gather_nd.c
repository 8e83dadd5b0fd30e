/* GatherND with batch_dims (shaders/gather_nd.glsl), folded on the host when the inputs are
 * small constants. Constant indices out of range are errors at plan time; the kernel clamps
 * the others into their dimension, so nothing is read outside the data. */
#include "movement.h"

#include <string.h>

typedef struct gather_nd_shape {
    int k;                 /* length of an index tuple */
    int64_t batches;       /* data.shape[:b] */
    int64_t tuples;        /* index tuples per batch: indices.shape[b:-1] */
    int64_t slice;         /* elements per gathered slice: data.shape[b+k:] */
    int64_t batch_elems;   /* data.shape[b:b+k], in slices */
    int64_t strides[VKI_MAX_RANK]; /* of data.shape[b:b+k], in slices */
} gather_nd_shape;

static vki_status gather_nd_shape_of(op_ctx *c, gather_nd_shape *g)
{
    plan_value *x = op_in(c, 0), *ind = op_in(c, 1);
    int64_t b = ir_attr_int(c->node, "batch_dims", 0);
    if (x->rank < 1 || ind->rank < 1) return op_error(c, VKI_ERROR_SHAPE, "data and indices must have rank >= 1");
    if (b < 0 || b >= x->rank || b >= ind->rank)
        return op_error(c, VKI_ERROR_SHAPE, "batch_dims %lld must be below both ranks", (long long)b);
    int64_t k = ind->dims[ind->rank - 1];
    if (k < 1 || b + k > x->rank)
        return op_error(c, VKI_ERROR_SHAPE, "index tuples of length %lld with batch_dims %lld for data of rank %d", (long long)k,
                        (long long)b, x->rank);
    for (int d = 0; d < b; d++)
        if (ind->dims[d] != x->dims[d])
            return op_error(c, VKI_ERROR_SHAPE, "batch dimension %d differs between data and indices", d);
    int rank = ind->rank - 1 + x->rank - (int)(b + k);
    if (rank > VKI_MAX_RANK) return op_error(c, VKI_ERROR_UNSUPPORTED, "the output would have rank %d", rank);
    int64_t dims[VKI_MAX_RANK];
    memcpy(dims, ind->dims, (size_t)(ind->rank - 1) * sizeof *dims);
    memcpy(dims + ind->rank - 1, x->dims + b + k, (size_t)(x->rank - b - k) * sizeof *dims);
    VKI_TRY(op_set_output(c, 0, x->dtype, rank, dims));
    g->k = (int)k;
    g->batches = shape_numel(x->dims, (int)b);
    g->tuples = shape_numel(ind->dims + b, ind->rank - 1 - (int)b);
    g->slice = shape_numel(x->dims + b + k, x->rank - (int)(b + k));
    g->batch_elems = shape_numel(x->dims + b, (int)k);
    contiguous_strides(x->dims + b, (int)k, g->strides);
    if (ind->host)
        for (int64_t i = 0; i < g->batches * g->tuples * k; i++) {
            int64_t v = host_read_i64(ind->dtype, ind->host, (size_t)i), n = x->dims[b + i % k];
            if (v < -n || v >= n)
                return op_error(c, VKI_ERROR_SHAPE, "index %lld is out of range for a dimension of size %lld", (long long)v, (long long)n);
        }
    return VKI_OK;
}

static vki_status plan_gather_nd(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 2, 2));
    plan_value *x = op_in(c, 0), *ind = op_in(c, 1);
    if (ind->dtype != VKI_DTYPE_INT32 && ind->dtype != VKI_DTYPE_INT64)
        return op_error(c, VKI_ERROR_MODEL, "indices must be int32 or int64, not %s", vki_dtype_name(ind->dtype));
    gather_nd_shape g;
    VKI_TRY(gather_nd_shape_of(c, &g));
    int64_t b = ir_attr_int(c->node, "batch_dims", 0), count = g.batches * g.tuples * g.slice;
    if (movement_folds(c)) {
        movement_alloc_host_outputs(c);
        size_t elem = vki_dtype_size(x->dtype);
        char *out = count ? op_output_host(c, 0) : NULL;
        for (int64_t m = 0; count && m < g.batches * g.tuples; m++) {
            int64_t at = m / g.tuples * g.batch_elems;
            for (int t = 0; t < g.k; t++) {
                int64_t v = host_read_i64(ind->dtype, ind->host, (size_t)(m * g.k + t));
                at += (v < 0 ? v + x->dims[b + t] : v) * g.strides[t];
            }
            memcpy(out + m * g.slice * (int64_t)elem, (const char *)x->host + at * g.slice * (int64_t)elem, (size_t)g.slice * elem);
        }
        return VKI_OK;
    }
    if (count == 0) return VKI_OK;
    VKI_TRY(op_require_gpu_dtype(c, 0));
    if (shape_numel(x->dims, x->rank) > INT32_MAX || count > INT32_MAX || shape_numel(ind->dims, ind->rank) > INT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^31 elements");
    struct {
        uint32_t count, tuples, slice, batch_elems;
        int32_t dims[8], strides[8];
    } push = {(uint32_t)count, (uint32_t)g.tuples, (uint32_t)g.slice, (uint32_t)g.batch_elems, {0}, {0}};
    for (int t = 0; t < g.k; t++) {
        push.dims[t] = (int32_t)x->dims[b + t];
        push.strides[t] = (int32_t)g.strides[t];
    }
    uint32_t spec[2] = {128, (uint32_t)g.k}, gx, gy;
    int values[3] = {op_in_index(c, 0), op_in_index(c, 1), op_out_index(c, 0)};
    /* float data held as halves moves as halves; the indices stay int32 words */
    int data[2] = {values[0], values[2]};
    gpu_storage st = op_move_storage(c, data, 2), stores[3] = {st, GPU_W32, st};
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    return op_dispatch_stored(c, op_variant(c, "gather_nd", st), spec, 2, &push, sizeof push, values, NULL, stores, 3, gx, gy, 1);
}

const op_def op_GatherND = {"GatherND", "", OP_DTYPES_ALL, "out-of-range indices are clamped on the GPU", plan_gather_nd};
