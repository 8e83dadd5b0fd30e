"""vki_dtype numbers <-> NumPy, and bfloat16 without a NumPy bfloat16.

bfloat16 (NumPy has none): with ml_dtypes installed, bfloat16 outputs are ml_dtypes.bfloat16
arrays and such arrays are taken as inputs as they are. Without it, bfloat16 outputs are
float32 arrays (exact: every bfloat16 is a float32) and bfloat16 inputs take any float array,
rounded to nearest even as PyTorch's .to(torch.bfloat16) does. Either way float arrays are
accepted for bfloat16 inputs, so code written for one case runs in the other.
"""
import numpy as np

try:  # optional: a real bfloat16 NumPy dtype
    import ml_dtypes as _ml_dtypes

    BFLOAT16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:
    BFLOAT16 = None

FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL, FLOAT16, DOUBLE, UINT32, UINT64 = range(1, 14)
BF16 = 16

TO_NUMPY = {
    FLOAT: np.dtype(np.float32), UINT8: np.dtype(np.uint8), INT8: np.dtype(np.int8),
    UINT16: np.dtype(np.uint16), INT16: np.dtype(np.int16), INT32: np.dtype(np.int32),
    INT64: np.dtype(np.int64), BOOL: np.dtype(np.bool_), FLOAT16: np.dtype(np.float16),
    DOUBLE: np.dtype(np.float64), UINT32: np.dtype(np.uint32), UINT64: np.dtype(np.uint64),
}


def code_of(np_dtype):
    """The vki_dtype number of a NumPy dtype (ml_dtypes.bfloat16 included); TypeError if none."""
    np_dtype = np.dtype(np_dtype)
    if BFLOAT16 is not None and np_dtype == BFLOAT16:
        return BF16
    for code, d in TO_NUMPY.items():
        if d == np_dtype:
            return code
    raise TypeError(f"vkinfer holds no tensor of NumPy dtype {np_dtype}")


def numpy_dtype(code):
    """The NumPy dtype Session.run returns for a vki_dtype (bfloat16: see the module doc)."""
    if code == BF16:
        return BFLOAT16 if BFLOAT16 is not None else np.dtype(np.float32)
    return TO_NUMPY.get(code)


def float32_to_bf16_bits(a):
    """Round float32 values to bfloat16 bits, nearest even; NaNs stay NaNs (quiet)."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, ((bits >> 16) | 0x40).astype(np.uint16), rounded)


def bf16_bits_to_float32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def to_host_bytes(name, array, code):
    """The contiguous array in the layout the library takes for dtype `code`. Conversions allowed
    are NumPy's 'same_kind' casts (float64 -> float32, int64 -> int32...); others raise TypeError."""
    a = np.asarray(array)
    if code == BF16:
        if BFLOAT16 is not None and a.dtype == BFLOAT16:
            return np.ascontiguousarray(a).view(np.uint16)
        if a.dtype.kind not in "fiub":
            raise TypeError(f"input '{name}' is bfloat16; got {a.dtype} (give a float array)")
        return float32_to_bf16_bits(a.astype(np.float32))
    want = TO_NUMPY.get(code)
    if want is None:
        raise TypeError(f"input '{name}' has a dtype vkinfer cannot take (vki_dtype {code})")
    if a.dtype != want and not np.can_cast(a.dtype, want, casting="same_kind"):
        raise TypeError(f"input '{name}' is {want}; got {a.dtype}, which does not convert safely "
                        f"(use .astype(np.{want}))")
    return np.ascontiguousarray(a, dtype=want)


def from_host_bytes(raw, code, shape):
    """A NumPy array (owning its memory) from the library's output bytes."""
    if code == BF16:
        bits = np.frombuffer(raw, dtype=np.uint16).reshape(shape)
        if BFLOAT16 is not None:
            return bits.copy().view(BFLOAT16)
        return bf16_bits_to_float32(bits)
    return np.frombuffer(raw, dtype=TO_NUMPY[code]).reshape(shape).copy()
