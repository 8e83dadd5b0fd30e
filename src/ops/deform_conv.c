/* DeformConv (shaders/deform_conv.comp), 2-D as ONNX's reference and torchvision's
 * deform_conv2d: each kernel tap samples X bilinearly at its place plus a learned offset
 * (taps outside X read 0), optionally scaled by a mask, then the taps are summed with the
 * weights as a grouped convolution. A direct kernel: one invocation per output element. */
#include "op.h"

static vki_status plan_deform_conv(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 3, 5));
    for (int i = 0; i < 5; i++)
        if (op_has_input(c, i)) {
            VKI_TRY(op_require_float(c, i));
            if (op_in(c, i)->dtype != op_in(c, 0)->dtype)
                return op_error(c, VKI_ERROR_MODEL, "input %d is %s, X %s", i, vki_dtype_name(op_in(c, i)->dtype),
                                vki_dtype_name(op_in(c, 0)->dtype));
        }
    plan_value *x = op_in(c, 0), *w = op_in(c, 1), *off = op_in(c, 2);
    char a[256], b[256], d[256];
    if (x->rank != 4 || w->rank != 4 || off->rank != 4)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "2-D only: X %s, W %s and offset %s must be 4-D",
                        shape_str(x->dims, x->rank, a, sizeof a), shape_str(w->dims, w->rank, b, sizeof b),
                        shape_str(off->dims, off->rank, d, sizeof d));
    int64_t kernel[2], strides[2], dil[2], pads[4];
    const int64_t *ks;
    if (ir_attr_ints(c->node, "kernel_shape", &ks) >= 0) VKI_TRY(op_attr_ints_n(c, "kernel_shape", 2, 0, 0, INT32_MAX, kernel));
    else kernel[0] = w->dims[2], kernel[1] = w->dims[3];
    VKI_TRY(op_attr_ints_n(c, "strides", 2, 1, 0, INT32_MAX, strides));
    VKI_TRY(op_attr_ints_n(c, "dilations", 2, 1, 0, INT32_MAX, dil));
    VKI_TRY(op_attr_ints_n(c, "pads", 4, 0, 0, INT32_MAX, pads));
    int64_t group = ir_attr_int(c->node, "group", 1), offset_group = ir_attr_int(c->node, "offset_group", 1);
    int64_t n = x->dims[0], ic = x->dims[1], oc = w->dims[0];
    if (group < 1 || offset_group < 1 || kernel[0] < 1 || kernel[1] < 1 || strides[0] < 1 || strides[1] < 1 || dil[0] < 1 ||
        dil[1] < 1 || kernel[0] != w->dims[2] || kernel[1] != w->dims[3] || ic != w->dims[1] * group || oc % group ||
        ic % offset_group)
        return op_error(c, VKI_ERROR_SHAPE, "X %s, W %s, group %lld, offset_group %lld, kernel %lldx%lld do not fit",
                        shape_str(x->dims, 4, a, sizeof a), shape_str(w->dims, 4, b, sizeof b), (long long)group,
                        (long long)offset_group, (long long)kernel[0], (long long)kernel[1]);
    int64_t oh = (x->dims[2] + pads[0] + pads[2] - (kernel[0] - 1) * dil[0] - 1) / strides[0] + 1;
    int64_t ow = (x->dims[3] + pads[1] + pads[3] - (kernel[1] - 1) * dil[1] - 1) / strides[1] + 1;
    int64_t taps = kernel[0] * kernel[1];
    if (off->dims[0] != n || off->dims[1] != offset_group * taps * 2 || off->dims[2] != oh || off->dims[3] != ow)
        return op_error(c, VKI_ERROR_SHAPE, "offset %s must be [%lld, %lld, %lld, %lld]", shape_str(off->dims, 4, a, sizeof a),
                        (long long)n, (long long)(offset_group * taps * 2), (long long)oh, (long long)ow);
    bool bias = op_has_input(c, 3), mask = op_has_input(c, 4);
    if (bias && shape_numel(op_in(c, 3)->dims, op_in(c, 3)->rank) != oc)
        return op_error(c, VKI_ERROR_SHAPE, "B %s must have %lld entries",
                        shape_str(op_in(c, 3)->dims, op_in(c, 3)->rank, a, sizeof a), (long long)oc);
    if (mask) {
        plan_value *m = op_in(c, 4);
        if (m->rank != 4 || m->dims[0] != n || m->dims[1] != offset_group * taps || m->dims[2] != oh || m->dims[3] != ow)
            return op_error(c, VKI_ERROR_SHAPE, "mask %s must be [%lld, %lld, %lld, %lld]", shape_str(m->dims, m->rank, a, sizeof a),
                            (long long)n, (long long)(offset_group * taps), (long long)oh, (long long)ow);
    }
    int64_t dims[4] = {n, oc, oh, ow};
    VKI_TRY(op_set_output(c, 0, x->dtype, 4, dims));
    int64_t count = shape_numel(dims, 4);
    if (count == 0) return VKI_OK;
    if (count > UINT32_MAX || shape_numel(x->dims, 4) > UINT32_MAX || shape_numel(off->dims, 4) > UINT32_MAX ||
        x->dims[2] > INT32_MAX || x->dims[3] > INT32_MAX)
        return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    struct {
        uint32_t count, C, H, W, OC, OH, OW, KH, KW;
        int32_t stride_h, stride_w, dil_h, dil_w, pad_h, pad_w;
        uint32_t ic_per_group, oc_per_group, ic_per_offset_group, offset_groups, has_bias, has_mask, mask_at, bias_at;
    } push = {(uint32_t)count, (uint32_t)ic, (uint32_t)x->dims[2], (uint32_t)x->dims[3], (uint32_t)oc, (uint32_t)oh, (uint32_t)ow,
              (uint32_t)kernel[0], (uint32_t)kernel[1], (int32_t)strides[0], (int32_t)strides[1], (int32_t)dil[0], (int32_t)dil[1],
              (int32_t)pads[0], (int32_t)pads[1], (uint32_t)(ic / group), (uint32_t)(oc / group),
              (uint32_t)(ic / offset_group), (uint32_t)offset_group, bias, mask, 0, 0};
    /* offset, mask and B as one buffer: four bindings, the Android Baseline 2022 limit */
    int params, ins[3] = {2, mask ? 4 : -1, bias ? 3 : -1};
    uint32_t counts[3] = {(uint32_t)shape_numel(off->dims, 4), mask ? (uint32_t)shape_numel(op_in(c, 4)->dims, 4) : 0,
                          bias ? (uint32_t)oc : 0};
    if ((uint64_t)counts[0] + counts[1] + counts[2] > UINT32_MAX) return op_error(c, VKI_ERROR_UNSUPPORTED, "more than 2^32 elements");
    VKI_TRY(op_pack_words(c, ins, counts, &params));
    push.mask_at = mask ? counts[0] : 0;
    push.bias_at = bias ? counts[0] + counts[1] : 0;
    uint32_t spec[2] = {64, op_dtype_code(x->dtype)}, gx, gy;
    int values[4] = {op_in_index(c, 0), op_in_index(c, 1), params, op_out_index(c, 0)};
    op_grid_1d((uint64_t)count, 64, &gx, &gy);
    return op_dispatch(c, "deform_conv", spec, 2, &push, sizeof push, values, 4, gx, gy, 1);
}

const op_def op_DeformConv = {"DeformConv", "", OP_DTYPES_FLOAT, "2-D only; a direct kernel (no im2col + MatMul path)",
                              plan_deform_conv};
