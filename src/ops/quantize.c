/* QuantizeLinear and DequantizeLinear for the 8- and 16-bit integer dtypes, int4/uint4 and
 * int2/uint2 (held as int32 on the GPU; int32 input too for DequantizeLinear), and the float8
 * and float4e2m1 formats (held as float32: x / scale rounded to the format, saturating as the
 * attribute says; the zero point of a float8 is 0 by the spec, float4e2m1's is added). */
#include "op.h"

#include <string.h>

static bool quant_dtype(vki_dtype t)
{
    return t == VKI_DTYPE_UINT8 || t == VKI_DTYPE_INT8 || t == VKI_DTYPE_UINT16 || t == VKI_DTYPE_INT16 ||
           t == VKI_DTYPE_UINT4 || t == VKI_DTYPE_INT4 || t == VKI_DTYPE_UINT2 || t == VKI_DTYPE_INT2 ||
           (dtype_is_minifloat(t) && t != VKI_DTYPE_FLOAT8E8M0 && t != VKI_DTYPE_FLOAT6E2M3 && t != VKI_DTYPE_FLOAT6E3M2);
}

static void quant_range(vki_dtype t, int32_t *lo, int32_t *hi)
{
    switch (t) {
    case VKI_DTYPE_INT8: *lo = -128, *hi = 127; break;
    case VKI_DTYPE_UINT16: *lo = 0, *hi = 65535; break;
    case VKI_DTYPE_INT16: *lo = -32768, *hi = 32767; break;
    case VKI_DTYPE_UINT4: *lo = 0, *hi = 15; break;
    case VKI_DTYPE_INT4: *lo = -8, *hi = 7; break;
    case VKI_DTYPE_UINT2: *lo = 0, *hi = 3; break;
    case VKI_DTYPE_INT2: *lo = -2, *hi = 1; break;
    default: *lo = 0, *hi = 255; break;
    }
}

static vki_status plan_quantize(op_ctx *c)
{
    bool dequant = !strcmp(c->node->op_type, "DequantizeLinear");
    VKI_TRY(op_require_inputs(c, 2, 3));
    for (int i = 0; i < 3; i++)
        if (op_has_input(c, i)) VKI_TRY(op_require_gpu_dtype(c, i));
    VKI_TRY(op_require_float(c, 1));
    plan_value *x = op_in(c, 0), *scale = op_in(c, 1), *zp = op_has_input(c, 2) ? op_in(c, 2) : NULL;
    char a[256], b[256];
    vki_dtype out;
    if (dequant) {
        if (!quant_dtype(x->dtype) && x->dtype != VKI_DTYPE_INT32)
            return op_error(c, VKI_ERROR_UNSUPPORTED, "x of %s is not supported (int8, uint8, int16, uint16, int32, "
                            "int4, uint4, int2, uint2, float8, float4e2m1)",
                            vki_dtype_name(x->dtype));
        if (zp && zp->dtype != x->dtype && !dtype_is_minifloat(x->dtype))
            return op_error(c, VKI_ERROR_MODEL, "the zero point is %s; x is %s", vki_dtype_name(zp->dtype), vki_dtype_name(x->dtype));
        out = (vki_dtype)ir_attr_int(c->node, "output_dtype", scale->dtype);
        if (!dtype_is_float(out)) return op_error(c, VKI_ERROR_UNSUPPORTED, "output_dtype %s is not supported", vki_dtype_name(out));
    } else {
        VKI_TRY(op_require_float(c, 0));
        out = zp ? zp->dtype : (vki_dtype)ir_attr_int(c->node, "output_dtype", VKI_DTYPE_UINT8);
        if (!out) out = VKI_DTYPE_UINT8;
        if (!quant_dtype(out))
            return op_error(c, VKI_ERROR_UNSUPPORTED, "quantizing to %s is not supported (int8, uint8, int16, uint16, int4, "
                            "uint4, int2, uint2, float8, float4e2m1)",
                            vki_dtype_name(out));
        int64_t want = ir_attr_int(c->node, "output_dtype", 0);
        if (zp && want && want != (int64_t)zp->dtype)
            return op_error(c, VKI_ERROR_MODEL, "output_dtype %s differs from the zero point's %s", vki_dtype_name((vki_dtype)want),
                            vki_dtype_name(zp->dtype));
    }
    /* a one-element zero point may differ in rank ([1] beside a scalar scale, as ONNX's tests have) */
    int64_t zp_count = zp ? shape_numel(zp->dims, zp->rank) : 0;
    if (zp && ((zp->rank != scale->rank && zp_count != 1) || zp_count != shape_numel(scale->dims, scale->rank)))
        return op_error(c, VKI_ERROR_SHAPE, "the zero point's shape %s differs from the scale's %s",
                        shape_str(zp->dims, zp->rank, a, sizeof a), shape_str(scale->dims, scale->rank, b, sizeof b));
    /* the granularity, from the scale's shape */
    int64_t n_scale = shape_numel(scale->dims, scale->rank), block = ir_attr_int(c->node, "block_size", 0);
    int axis = 0; /* per tensor: the axis attribute is not read (its default 1 may not exist) */
    bool per_tensor = block <= 0 && n_scale == 1 && scale->rank <= 1;
    if (x->rank && !per_tensor) VKI_TRY(op_axis(c, ir_attr_int(c->node, "axis", 1), x->rank, &axis));
    int64_t axis_len = x->rank ? x->dims[axis] : 1, inner = x->rank ? shape_numel(x->dims + axis + 1, x->rank - axis - 1) : 1;
    uint32_t kind;
    int64_t blocks = 1;
    if (block > 0) {
        bool ok = scale->rank == x->rank;
        for (int d = 0; ok && d < x->rank; d++)
            ok = d == axis ? scale->dims[d] == (x->dims[d] + block - 1) / block : scale->dims[d] == x->dims[d];
        if (!ok)
            return op_error(c, VKI_ERROR_SHAPE, "blocked (block_size %lld, axis %d): the scale's shape %s does not fit x's %s",
                            (long long)block, axis, shape_str(scale->dims, scale->rank, a, sizeof a),
                            shape_str(x->dims, x->rank, b, sizeof b));
        kind = 2;
        blocks = scale->dims[axis];
    } else if (per_tensor) {
        kind = 0;
    } else if (scale->rank == 1 && scale->dims[0] == axis_len) {
        kind = 1;
    } else {
        return op_error(c, VKI_ERROR_SHAPE, "the scale's shape %s is neither a scalar, nor [%lld] along axis %d of x %s, "
                        "nor blocked (block_size)", shape_str(scale->dims, scale->rank, a, sizeof a), (long long)axis_len, axis,
                        shape_str(x->dims, x->rank, b, sizeof b));
    }
    VKI_TRY(op_set_output(c, 0, out, x->rank, x->dims));
    int64_t count = shape_numel(x->dims, x->rank);
    if (count == 0) return VKI_OK;
    if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    int32_t lo = 0, hi = 0;
    vki_dtype q_dtype = dequant ? x->dtype : out;
    if (dtype_is_minifloat(q_dtype)) /* lo: whether overflow saturates */
        lo = (int32_t)ir_attr_int(c->node, "saturate", 1) != 0;
    else
        quant_range(out, &lo, &hi);
    struct { uint32_t count, inner, axis_len, block, blocks, has_zero_point, zero_point_offset; int32_t lo, hi; } push = {
        (uint32_t)count, (uint32_t)(inner ? inner : 1), (uint32_t)(axis_len ? axis_len : 1), (uint32_t)(block > 0 ? block : 1),
        (uint32_t)blocks, zp != NULL, 0, lo, hi};
    /* a float8's zero point is 0 by the spec (DequantizeLinear's reference ignores it) */
    if (dtype_is_minifloat(q_dtype) && q_dtype != VKI_DTYPE_FLOAT4E2M1) push.has_zero_point = 0;
    uint32_t spec[6] = {128, dequant, op_dtype_code(scale->dtype), op_dtype_code(out), kind, op_dtype_code_exact(q_dtype)}, gx, gy;
    int values[4] = {op_in_index(c, 0), op_in_index(c, 1), zp ? op_in_index(c, 2) : op_in_index(c, 0), op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    return op_dispatch(c, "quantize", spec, 6, &push, sizeof push, values, 4, gx, gy, 1);
}

static vki_status plan_dynamic_quantize(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    VKI_TRY(op_require_float(c, 0));
    plan_value *x = op_in(c, 0);
    VKI_TRY(op_set_output(c, 0, VKI_DTYPE_UINT8, x->rank, x->dims));
    VKI_TRY(op_set_output(c, 1, x->dtype, 0, NULL));
    VKI_TRY(op_set_output(c, 2, VKI_DTYPE_UINT8, 0, NULL));
    int64_t count = shape_numel(x->dims, x->rank);
    if (count > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    int params, outs[2]; /* params: the scale (fp32) and the zero point (int32) */
    VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, 2, &params));
    for (int i = 0; i < 2; i++) {
        if (op_has_output(c, i + 1)) outs[i] = op_out_index(c, i + 1);
        else VKI_TRY(op_temp(c, VKI_DTYPE_FLOAT, 1, &outs[i]));
    }
    uint32_t count32 = (uint32_t)count, sspec[2] = {128, op_dtype_code(x->dtype)};
    int svalues[4] = {op_in_index(c, 0), params, outs[0], outs[1]};
    VKI_TRY(op_dispatch(c, "dynamic_quantize_stats", sspec, 2, &count32, sizeof count32, svalues, 4, 1, 1, 1));
    if (count == 0 || !op_has_output(c, 0)) return VKI_OK;
    struct { uint32_t count, inner, axis_len, block, blocks, has_zero_point, zero_point_offset; int32_t lo, hi; } push = {
        count32, 1, 1, 1, 1, 1, 1, 0, 255};
    uint32_t spec[6] = {128, false, op_dtype_code(VKI_DTYPE_FLOAT), op_dtype_code(VKI_DTYPE_UINT8), 0,
                        op_dtype_code(VKI_DTYPE_UINT8)}, gx, gy;
    int values[4] = {op_in_index(c, 0), params, params, op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 128, &gx, &gy);
    return op_dispatch(c, "quantize", spec, 6, &push, sizeof push, values, 4, gx, gy, 1);
}

#define QUANT_SMALL "float8e4m3fn float8e4m3fnuz float8e5m2 float8e5m2fnuz float4e2m1 int4 uint4 int2 uint2"
const op_def op_QuantizeLinear = {"QuantizeLinear", "", OP_DTYPES_FLOAT " int8 uint8 int16 uint16 " QUANT_SMALL,
                                  "to int8, uint8, int16 or uint16; per tensor, per axis or blocked", plan_quantize};
const op_def op_DequantizeLinear = {"DequantizeLinear", "", OP_DTYPES_FLOAT " int8 uint8 int16 uint16 int32 " QUANT_SMALL,
                                    "from int8, uint8, int16, uint16 or int32; per tensor, per axis or blocked", plan_quantize};
const op_def op_DynamicQuantizeLinear = {"DynamicQuantizeLinear", "", OP_DTYPES_FLOAT, "to uint8, as the spec", plan_dynamic_quantize};
