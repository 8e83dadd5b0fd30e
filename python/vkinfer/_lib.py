"""Finding and loading libvkinfer, and the ctypes mirror of include/vkinfer.h.

The structs below must match the header field for field; tests/python/test_python.py compiles
a C program that prints their sizes and offsets and compares them with these.
"""
import ctypes
import os
from pathlib import Path

# ---- the header's structs ------------------------------------------------------------------

MAX_RANK = 8


class DeviceInfo(ctypes.Structure):
    _fields_ = [
        ("index", ctypes.c_uint32),
        ("name", ctypes.c_char * 256),
        ("type", ctypes.c_char_p),
        ("driver_name", ctypes.c_char * 256),
        ("driver_info", ctypes.c_char * 256),
        ("vendor_id", ctypes.c_uint32),
        ("device_id", ctypes.c_uint32),
        ("api_version", ctypes.c_uint32),
        ("device_local_bytes", ctypes.c_uint64),
        ("max_storage_buffer_range", ctypes.c_uint64),
        ("max_workgroup_invocations", ctypes.c_uint32),
        ("max_shared_memory_bytes", ctypes.c_uint32),
        ("subgroup_size", ctypes.c_uint32),
        ("fp16_arithmetic", ctypes.c_int),
        ("storage_16bit", ctypes.c_int),
        ("storage_8bit", ctypes.c_int),
        ("cooperative_matrix", ctypes.c_int),
        ("is_default", ctypes.c_int),
        ("shader_float64", ctypes.c_int),
    ]


class ContextOptions(ctypes.Structure):
    _fields_ = [("device", ctypes.c_char_p), ("validation", ctypes.c_int), ("cache_dir", ctypes.c_char_p)]


class TensorInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_int),
        ("rank", ctypes.c_int32),
        ("dims", ctypes.c_int64 * MAX_RANK),
        ("dim_names", ctypes.c_char_p * MAX_RANK),
        ("kind", ctypes.c_int32),  # vki_value_kind
    ]


class SessionStats(ctypes.Structure):
    _fields_ = [
        ("plan_ms", ctypes.c_double),
        ("last_run_ms", ctypes.c_double),
        ("dispatch_count", ctypes.c_uint32),
        ("gpu_node_count", ctypes.c_uint32),
        ("folded_node_count", ctypes.c_uint32),
        ("aliased_node_count", ctypes.c_uint32),
        ("fused_node_count", ctypes.c_uint32),
        ("weight_bytes", ctypes.c_uint64),
        ("intermediate_bytes", ctypes.c_uint64),
        ("intermediate_unshared_bytes", ctypes.c_uint64),
        ("plans_cached", ctypes.c_uint32),
    ]


class DispatchProfile(ctypes.Structure):
    _fields_ = [("node", ctypes.c_char_p), ("op", ctypes.c_char_p), ("shader", ctypes.c_char_p),
                ("gpu_ms", ctypes.c_double), ("flops", ctypes.c_double), ("bytes", ctypes.c_double)]


class OpInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("domain", ctypes.c_char_p), ("dtypes", ctypes.c_char_p),
                ("notes", ctypes.c_char_p)]


class ModelSummary(ctypes.Structure):
    _fields_ = [
        ("ir_version", ctypes.c_int64),
        ("opset", ctypes.c_int64),
        ("input_count", ctypes.c_uint32),
        ("output_count", ctypes.c_uint32),
        ("node_count", ctypes.c_uint32),
        ("initializer_count", ctypes.c_uint32),
        ("weight_bytes", ctypes.c_uint64),
        ("op_type_count", ctypes.c_uint32),
        ("unsupported_node_count", ctypes.c_uint32),
    ]


class ModelOpUse(ctypes.Structure):
    _fields_ = [("op", ctypes.c_char_p), ("domain", ctypes.c_char_p), ("node_count", ctypes.c_uint32),
                ("supported", ctypes.c_int)]


class OptionInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_char_p), ("values", ctypes.c_char_p),
                ("default_value", ctypes.c_char_p), ("category", ctypes.c_char_p), ("doc", ctypes.c_char_p)]


class SessionOptions(ctypes.Structure):
    _fields_ = [("precision", ctypes.c_int)]  # vki_precision


VALUE_KINDS = {0: "tensor", 1: "sequence", 2: "optional", 3: "optional_sequence"}  # vki_value_kind

PRECISION_DEFAULT = 0
PRECISION_FP16 = 1

# ---- the header's functions ------------------------------------------------------------------

_p = ctypes.c_void_p
_pp = ctypes.POINTER(ctypes.c_void_p)
_u32 = ctypes.c_uint32
_st = ctypes.c_int  # vki_status

# name: (restype, argtypes). Every function of include/vkinfer.h, and those the library may
# export in a newer version (marked optional in COUNTERPARTS of vkinfer/__init__.py).
PROTOTYPES = {
    "vki_last_error": (ctypes.c_char_p, []),
    "vki_version": (ctypes.c_char_p, []),
    "vki_dtype_name": (ctypes.c_char_p, [ctypes.c_int]),
    "vki_dtype_size": (ctypes.c_size_t, [ctypes.c_int]),
    "vki_vulkan_available": (ctypes.c_int, []),
    "vki_device_list": (_st, [ctypes.POINTER(DeviceInfo), _u32, ctypes.POINTER(_u32)]),
    "vki_context_create": (_st, [ctypes.POINTER(ContextOptions), _pp]),
    "vki_context_create_with_options": (_st, [ctypes.POINTER(ContextOptions), ctypes.POINTER(ctypes.c_char_p),
                                              ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, _pp]),
    "vki_context_destroy": (None, [_p]),
    "vki_context_device_info": (_st, [_p, ctypes.POINTER(DeviceInfo)]),
    "vki_model_load": (_st, [_p, ctypes.c_char_p, _pp]),
    "vki_model_destroy": (None, [_p]),
    "vki_model_input_count": (_u32, [_p]),
    "vki_model_output_count": (_u32, [_p]),
    "vki_model_input_info": (_st, [_p, _u32, ctypes.POINTER(TensorInfo)]),
    "vki_model_output_info": (_st, [_p, _u32, ctypes.POINTER(TensorInfo)]),
    "vki_model_inspect": (_st, [ctypes.c_char_p, _pp]),
    "vki_model_report_destroy": (None, [_p]),
    "vki_model_report_summary": (_st, [_p, ctypes.POINTER(ModelSummary)]),
    "vki_model_report_op": (_st, [_p, _u32, ctypes.POINTER(ModelOpUse)]),
    "vki_model_report_input": (_st, [_p, _u32, ctypes.POINTER(TensorInfo)]),
    "vki_model_report_output": (_st, [_p, _u32, ctypes.POINTER(TensorInfo)]),
    "vki_session_create": (_st, [_p, _pp]),
    "vki_session_create_with_options": (_st, [_p, _p, _pp]),
    "vki_session_destroy": (None, [_p]),
    "vki_session_set_input": (_st, [_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int64),
                                    ctypes.c_int32, _p, ctypes.c_size_t]),
    "vki_session_set_sequence_input": (_st, [_p, ctypes.c_char_p, _u32, ctypes.c_int, ctypes.POINTER(ctypes.c_int32),
                                             ctypes.POINTER(ctypes.c_int64), _pp, ctypes.POINTER(ctypes.c_size_t)]),
    "vki_session_set_input_none": (_st, [_p, ctypes.c_char_p]),
    "vki_session_get_output_count": (_st, [_p, _u32, ctypes.POINTER(ctypes.c_int32)]),
    "vki_session_get_output_element": (_st, [_p, _u32, _u32, ctypes.POINTER(TensorInfo), _pp,
                                             ctypes.POINTER(ctypes.c_size_t)]),
    "vki_session_run": (_st, [_p]),
    "vki_session_get_output": (_st, [_p, _u32, ctypes.POINTER(TensorInfo), _pp, ctypes.POINTER(ctypes.c_size_t)]),
    "vki_session_stats_get": (_st, [_p, ctypes.POINTER(SessionStats)]),
    "vki_session_set_profiling": (_st, [_p, ctypes.c_int]),
    "vki_session_profile": (_st, [_p, ctypes.POINTER(DispatchProfile), _u32, ctypes.POINTER(_u32)]),
    "vki_session_prepare": (_st, [_p]),
    "vki_session_output_info": (_st, [_p, _u32, ctypes.POINTER(TensorInfo)]),
    "vki_tensor_create": (_st, [_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.c_int32, _pp]),
    "vki_tensor_destroy": (None, [_p]),
    "vki_tensor_get_info": (_st, [_p, ctypes.POINTER(TensorInfo)]),
    "vki_tensor_write": (_st, [_p, _p, ctypes.c_size_t]),
    "vki_tensor_read": (_st, [_p, _p, ctypes.c_size_t]),
    "vki_session_bind_input": (_st, [_p, ctypes.c_char_p, _p]),
    "vki_session_bind_output": (_st, [_p, _u32, _p]),
    "vki_op_count": (_u32, []),
    "vki_op_get": (_st, [_u32, ctypes.POINTER(OpInfo)]),
    "vki_option_count": (_u32, []),
    "vki_option_get": (_st, [_u32, ctypes.POINTER(OptionInfo)]),
}

STATUS_NAMES = {
    0: "VKI_OK", 1: "VKI_ERROR_INVALID_ARGUMENT", 2: "VKI_ERROR_NO_VULKAN", 3: "VKI_ERROR_IO",
    4: "VKI_ERROR_MODEL", 5: "VKI_ERROR_UNSUPPORTED", 6: "VKI_ERROR_SHAPE", 7: "VKI_ERROR_OUT_OF_MEMORY",
    8: "VKI_ERROR_VULKAN", 9: "VKI_ERROR_VALIDATION", 10: "VKI_ERROR_DEVICE_LOST",
}


class VkinferError(RuntimeError):
    """A failed library call. str() is vki_last_error()'s message; .status is the vki_status
    number and .status_name its name (VKI_ERROR_SHAPE...)."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status
        self.status_name = STATUS_NAMES.get(status, f"status {status}")


class LibraryNotFound(VkinferError, OSError):
    """libvkinfer could not be loaded (see candidate_paths() for where it was looked for)."""


# ---- loading -------------------------------------------------------------------------------

SONAME = "libvkinfer.so.0"


def candidate_paths():
    """Where the library is looked for, in order: $VKINFER_LIBRARY; a copy inside the package;
    the build/ folder of the source checkout this package sits in (use in place); the system
    loader's search (a `make install`ed libvkinfer.so.0)."""
    env = os.environ.get("VKINFER_LIBRARY")
    if env:
        return [env]
    here = Path(__file__).resolve().parent
    return [str(here / SONAME), str(here.parent.parent / "build" / SONAME), SONAME]


_lib = None


def lib():
    """The loaded library, with every prototype it exports declared. Raises LibraryNotFound."""
    global _lib
    if _lib is not None:
        return _lib
    errors = []
    for path in candidate_paths():
        if os.sep in path and not os.path.exists(path):
            errors.append(f"{path}: no such file")
            continue
        try:
            handle = ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
            continue
        for name, (restype, argtypes) in PROTOTYPES.items():
            fn = getattr(handle, name, None)
            if fn is not None:
                fn.restype, fn.argtypes = restype, argtypes
        _lib = handle
        _lib.vkinfer_path = path
        return _lib
    raise LibraryNotFound("cannot load libvkinfer (build it with cmake, `make install` it, or set VKINFER_LIBRARY "
                          "to its path): " + "; ".join(errors), 2)


def has(name):
    """Whether the loaded library exports `name` (an older or newer library may not)."""
    return hasattr(lib(), name)


def check(status):
    """Raises VkinferError with the library's message when status is not VKI_OK."""
    if status != 0:
        msg = lib().vki_last_error()
        raise VkinferError(msg.decode("utf-8", "replace") if msg else STATUS_NAMES.get(status, "error"), status)


def text(b):
    return b.decode("utf-8", "replace") if b is not None else None
