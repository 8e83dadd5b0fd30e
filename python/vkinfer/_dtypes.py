"""vki_dtype numbers <-> NumPy, and bfloat16 without a NumPy bfloat16.

bfloat16 (NumPy has none): with ml_dtypes installed, bfloat16 outputs are ml_dtypes.bfloat16
arrays and such arrays are taken as inputs as they are. Without it, bfloat16 outputs are
float32 arrays (exact: every bfloat16 is a float32) and bfloat16 inputs take any float array,
rounded to nearest even as PyTorch's .to(torch.bfloat16) does. Either way float arrays are
accepted for bfloat16 inputs, so code written for one case runs in the other.

The float8, float6 and float4 formats and the 4- and 2-bit integers (vki_dtype 17-28): with
ml_dtypes, outputs are arrays of its dtypes (float8_e4m3fn, int4...) and such arrays are taken
as inputs. Without it, float8/float6/float4 outputs are float32 arrays (exact) and their inputs
need ml_dtypes; int4/int2 outputs are int8 arrays, uint4/uint2 uint8, and integer arrays are taken
as inputs when their values fit.
"""
import numpy as np

try:  # optional: a real bfloat16 NumPy dtype
    import ml_dtypes as _ml_dtypes

    BFLOAT16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:
    _ml_dtypes = None
    BFLOAT16 = None

FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL, FLOAT16, DOUBLE, UINT32, UINT64 = range(1, 14)
BF16 = 16
FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, UINT4, INT4, FLOAT4E2M1 = range(17, 24)
FLOAT8E8M0, UINT2, INT2, FLOAT6E2M3, FLOAT6E3M2 = 24, 25, 26, 27, 28

# the small formats: (ml_dtypes name, exponent bits, mantissa bits, bias, kind) where kind is
# "ieee" (infinity and NaNs), "fn" (NaN all ones), "fnuz" (NaN 0x80, no -0), "none"
_MINIFLOATS = {
    FLOAT8E4M3FN: ("float8_e4m3fn", 4, 3, 7, "fn"), FLOAT8E4M3FNUZ: ("float8_e4m3fnuz", 4, 3, 8, "fnuz"),
    FLOAT8E5M2: ("float8_e5m2", 5, 2, 15, "ieee"), FLOAT8E5M2FNUZ: ("float8_e5m2fnuz", 5, 2, 16, "fnuz"),
    FLOAT4E2M1: ("float4_e2m1fn", 2, 1, 1, "none"), FLOAT8E8M0: ("float8_e8m0fnu", 8, 0, 127, "e8m0"),
    FLOAT6E2M3: ("float6_e2m3fn", 2, 3, 1, "none"), FLOAT6E3M2: ("float6_e3m2fn", 3, 2, 3, "none"),
}
# the small integers: (ml_dtypes name, bits, signed)
_SMALL_INTS = {UINT4: ("uint4", 4, False), INT4: ("int4", 4, True), UINT2: ("uint2", 2, False), INT2: ("int2", 2, True)}


def _ml_dtype(name):
    return np.dtype(getattr(_ml_dtypes, name)) if _ml_dtypes is not None and hasattr(_ml_dtypes, name) else None


def _minifloat_table(code):
    """float32 value of each byte code of a small float format (codes past the format's width unused)."""
    _, ebits, mbits, bias, kind = _MINIFLOATS[code]
    bits = 1 + ebits + mbits
    table = np.zeros(256, np.float32)
    if kind == "e8m0":  # 2^(code-127), 255 NaN, no sign
        table[:255] = np.ldexp(np.float32(1), np.arange(255) - 127)
        table[255] = np.nan
        return table
    for c in range(1 << bits):
        sign, e, m = c >> (bits - 1), (c >> mbits) & ((1 << ebits) - 1), c & ((1 << mbits) - 1)
        if (kind == "fnuz" and c == 0x80) or (kind == "fn" and c & 0x7F == 0x7F) or (kind == "ieee" and e == (1 << ebits) - 1 and m):
            v = float("nan")
        elif kind == "ieee" and e == (1 << ebits) - 1:
            v = float("inf")
        else:
            v = (1 + m / (1 << mbits)) * 2.0 ** (e - bias) if e else m * 2.0 ** (1 - bias - mbits)
        table[c] = -v if sign else v
    return table

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
    for code, (ml_name, *_) in list(_MINIFLOATS.items()) + list(_SMALL_INTS.items()):
        if _ml_dtype(ml_name) is not None and np_dtype == _ml_dtype(ml_name):
            return code
    for code, d in TO_NUMPY.items():
        if d == np_dtype:
            return code
    raise TypeError(f"vkinfer holds no tensor of NumPy dtype {np_dtype}")


def numpy_dtype(code):
    """The NumPy dtype Session.run returns for a vki_dtype (bfloat16, float8...: see the module doc)."""
    if code == BF16:
        return BFLOAT16 if BFLOAT16 is not None else np.dtype(np.float32)
    if code in _MINIFLOATS:
        return _ml_dtype(_MINIFLOATS[code][0]) or np.dtype(np.float32)
    if code in _SMALL_INTS:
        return _ml_dtype(_SMALL_INTS[code][0]) or np.dtype(np.int8 if _SMALL_INTS[code][2] else np.uint8)
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
    if code in _MINIFLOATS:  # one byte per element: the format's code
        ml = _ml_dtype(_MINIFLOATS[code][0])
        if ml is None:
            raise TypeError(f"input '{name}' is {_MINIFLOATS[code][0]}: install ml_dtypes to give it")
        if a.dtype != ml:
            if a.dtype.kind not in "fiub":
                raise TypeError(f"input '{name}' is {ml}; got {a.dtype} (give a float array)")
            a = a.astype(ml)
        return np.ascontiguousarray(a).view(np.uint8)
    if code in _SMALL_INTS:  # one byte per element: the value (sign-extended for int4/int2)
        ml_name, bits, signed = _SMALL_INTS[code]
        ml = _ml_dtype(ml_name)
        if ml is not None and a.dtype == ml:
            return np.ascontiguousarray(a.astype(np.int8 if signed else np.uint8))
        if a.dtype.kind not in "iub":
            raise TypeError(f"input '{name}' is {ml_name}; got {a.dtype} (give an integer array)")
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        if a.size and (a.min() < lo or a.max() > hi):
            raise TypeError(f"input '{name}' is {ml_name}; its values must lie in {lo}..{hi}")
        return np.ascontiguousarray(a, dtype=np.int8 if signed else np.uint8)
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
    if code in _MINIFLOATS:
        codes = np.frombuffer(raw, dtype=np.uint8).reshape(shape)
        ml = _ml_dtype(_MINIFLOATS[code][0])
        return codes.copy().view(ml) if ml is not None else _minifloat_table(code)[codes]
    if code in _SMALL_INTS:
        ml_name, _, signed = _SMALL_INTS[code]
        values = np.frombuffer(raw, dtype=np.int8 if signed else np.uint8).reshape(shape).copy()
        ml = _ml_dtype(ml_name)
        return values.astype(ml) if ml is not None else values
    return np.frombuffer(raw, dtype=TO_NUMPY[code]).reshape(shape).copy()
