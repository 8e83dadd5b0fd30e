"""What the model tests need from onnx across its versions: Debian 12's onnx 1.12 (CI) and the
GPU machine's 1.23, which has no onnx.mapping."""
import numpy as np

try:  # onnx 1.13+
    from onnx.helper import np_dtype_to_tensor_dtype as _to_tensor_dtype
except ImportError:  # onnx 1.12
    from onnx.mapping import NP_TYPE_TO_TENSOR_TYPE

    def _to_tensor_dtype(dt):
        return NP_TYPE_TO_TENSOR_TYPE[dt]


def np_dtype_to_tensor_dtype(dt):
    """The TensorProto element type of a numpy dtype (or anything np.dtype takes)."""
    return _to_tensor_dtype(np.dtype(dt))
