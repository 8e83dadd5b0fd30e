/* BitCast: the input's bits read as another dtype of the same size. The GPU holds both dtypes
 * of each supported pair alike (float32 and int32 as 32-bit words of their own bits; int8,
 * uint8 and bool as bytes; int16 and uint16 as 16-bit words), so the output is a view of the
 * input. uint32 is held as int32 words of its bits, so it pairs with them too (its values from
 * the host must be below 2^31; a word read back is exact). Pairs involving 16-bit floats (held
 * as fp32 words on some paths), 64-bit dtypes (float64 is held as its 8 bytes, but int64 and
 * uint64 narrowed to int32: no 8-byte integer shares its bits) and to bool (which holds only 0
 * and 1) are refused. */
#include "op.h"

/* the class of dtypes that share bits in GPU storage; 0: none */
static int bit_class(vki_dtype t, bool as_output)
{
    switch (t) {
    case VKI_DTYPE_FLOAT: case VKI_DTYPE_INT32: case VKI_DTYPE_UINT32: return 32;
    case VKI_DTYPE_INT16: case VKI_DTYPE_UINT16: return 16;
    case VKI_DTYPE_INT8: case VKI_DTYPE_UINT8: return 8;
    case VKI_DTYPE_BOOL: return as_output ? 0 : 8;
    default: return 0;
    }
}

static vki_status plan_bitcast(op_ctx *c)
{
    VKI_TRY(op_require_inputs(c, 1, 1));
    plan_value *x = op_in(c, 0);
    const ir_attr *to = ir_find_attr(c->node, "to");
    if (!to || to->type != ATTR_INT) return op_error(c, VKI_ERROR_MODEL, "BitCast needs the 'to' attribute");
    vki_dtype out = (vki_dtype)to->i;
    if (vki_dtype_size(out) != vki_dtype_size(x->dtype) || !vki_dtype_size(out))
        return op_error(c, VKI_ERROR_MODEL, "BitCast from %s to %s: the dtypes differ in size", vki_dtype_name(x->dtype),
                        vki_dtype_name(out));
    int from_class = bit_class(x->dtype, false), to_class = bit_class(out, true);
    if (!from_class || from_class != to_class)
        return op_error(c, VKI_ERROR_UNSUPPORTED,
                        "BitCast from %s to %s is not supported (supported: between float32, "
                        "int32 and uint32, int16 and uint16, int8 and uint8, and bool to int8 or uint8%s)",
                        vki_dtype_name(x->dtype), vki_dtype_name(out),
                        out == VKI_DTYPE_DOUBLE || x->dtype == VKI_DTYPE_DOUBLE
                            ? "; int64 and uint64 are held narrowed to int32, so float64's bits have "
                              "no 64-bit integer to go to"
                            : "");
    VKI_TRY(op_set_output(c, 0, out, x->rank, x->dims));
    return op_output_alias(c, 0, 0);
}

const op_def op_BitCast = {"BitCast", "", "float32 int32 uint32 int8 uint8 int16 uint16 bool",
                           "between float32, int32 and uint32, int16 and uint16, int8 and uint8; bool to int8 or uint8",
                           plan_bitcast};
