"""vkinfer: run ONNX models on GPUs through Vulkan compute, from NumPy or PyTorch.

    import vkinfer
    s = vkinfer.Session("model.onnx")
    y = s.run({"x": x})["y"]

ctypes bindings of libvkinfer (found as vkinfer._lib.candidate_paths() says). Errors are
VkinferError carrying the library's message. See docs/python.md.
"""
from ._lib import LibraryNotFound, VkinferError
from ._session import (Context, Session, Tensor, TensorSpec, devices, dtype_name, dtype_size, inspect, is_available,
                       library_version, ops, options)
from ._torch import TorchSession, from_torch

__version__ = "0.1.0"

__all__ = ["Context", "Session", "Tensor", "TensorSpec", "TorchSession", "VkinferError", "LibraryNotFound", "devices", "dtype_name",
           "dtype_size", "from_torch", "inspect", "is_available", "library_version", "ops", "options", "__version__"]

# The Python counterpart of every C function (tests/python/test_python.py checks that each
# function of include/vkinfer.h is here and that each counterpart exists). Names the header
# does not have yet (vki_session_create_with_options) are used when the library exports them.
COUNTERPARTS = {
    "vki_last_error": "VkinferError",
    "vki_version": "library_version",
    "vki_dtype_name": "dtype_name",
    "vki_dtype_size": "dtype_size",
    "vki_vulkan_available": "is_available",
    "vki_device_list": "devices",
    "vki_context_create": "Context.__init__",
    "vki_context_create_with_options": "Context.__init__",
    "vki_context_destroy": "Context.close",
    "vki_context_device_info": "Context.device",
    "vki_model_load": "Session.__init__",
    "vki_model_destroy": "Session.close",
    "vki_model_input_count": "Session.inputs",
    "vki_model_input_info": "Session.inputs",
    "vki_model_output_count": "Session.outputs",
    "vki_model_output_info": "Session.outputs",
    "vki_model_inspect": "inspect",
    "vki_model_report_destroy": "inspect",
    "vki_model_report_summary": "inspect",
    "vki_model_report_op": "inspect",
    "vki_model_report_input": "inspect",
    "vki_model_report_output": "inspect",
    "vki_session_create": "Session.__init__",
    "vki_session_create_with_options": "Session.__init__",
    "vki_session_destroy": "Session.close",
    "vki_session_set_input": "Session.run",
    "vki_session_run": "Session.run",
    "vki_session_set_sequence_input": "Session.run",
    "vki_session_set_input_none": "Session.run",
    "vki_session_get_output_count": "Session.run",
    "vki_session_get_output_element": "Session.run",
    "vki_session_get_output": "Session.run",
    "vki_session_stats_get": "Session.stats",
    "vki_session_set_profiling": "Session.set_profiling",
    "vki_session_profile": "Session.profile",
    "vki_session_prepare": "Session.run",
    "vki_session_output_info": "Session.run",
    "vki_tensor_create": "Tensor.__init__",
    "vki_tensor_destroy": "Tensor.close",
    "vki_tensor_get_info": "Tensor.__init__",
    "vki_tensor_write": "Tensor.__init__",
    "vki_tensor_read": "Tensor.numpy",
    "vki_session_bind_input": "Session.run",
    "vki_session_bind_output": "Session.run",
    "vki_op_count": "ops",
    "vki_op_get": "ops",
    "vki_option_count": "options",
    "vki_option_get": "options",
}
