"""Session: one model on one Vulkan device, NumPy arrays in and out."""
import ctypes
import os
from collections import namedtuple

import numpy as np

from . import _dtypes
from ._lib import (MAX_RANK, ContextOptions, DeviceInfo, DispatchProfile, ModelOpUse, ModelSummary, OpInfo,
                   OptionInfo, PRECISION_DEFAULT, PRECISION_FP16, SessionOptions, SessionStats, TensorInfo,
                   VALUE_KINDS, VkinferError, check, lib, text)


class TensorSpec(namedtuple("TensorSpec", "name shape dtype")):
    kind = "tensor"

    def __repr__(self):
        base = super().__repr__()
        return base if self.kind == "tensor" else base[:-1] + f", kind={self.kind!r})"


TensorSpec.__doc__ = """An input or output as the model declares it. shape: a tuple of ints, with
the symbol's name (a str, e.g. "batch") for a symbolic dimension and None for an unnamed one; None
for the whole shape when the model declares none. dtype: the library's name ("float32",
"bfloat16"...); TensorSpec.numpy_dtype is the dtype run() returns. .kind (an attribute, not a
tuple field): "tensor", "sequence"
(a list of tensors of that dtype, each of that shape), "optional" (a tensor or None) or
"optional_sequence" (a list or None); shape and dtype are then the elements'."""
TensorSpec.numpy_dtype = property(lambda t: _dtypes.numpy_dtype(_DTYPE_CODES[t.dtype]))

_DTYPE_CODES = {}  # "float32" -> 1, filled from vki_dtype_name


def dtype_name(code):
    """vki_dtype_name: the name of a vki_dtype (ONNX TensorProto.DataType) number."""
    return text(lib().vki_dtype_name(int(code)))


def _dtype_number(name):
    """The vki_dtype number of a library dtype name ("float16"...)."""
    for code in range(1, 29):
        if dtype_name(code) == name:
            return code
    raise ValueError(f"unknown dtype {name!r}")


def dtype_size(code):
    """vki_dtype_size: bytes per element as the library stores it on the host."""
    return int(lib().vki_dtype_size(int(code)))


def _spec(info):
    name, dtype = text(info.name), dtype_name(info.dtype)
    _DTYPE_CODES[dtype] = info.dtype
    shape = None
    if info.rank >= 0:
        shape = tuple(int(info.dims[d]) if info.dims[d] >= 0 else text(info.dim_names[d]) for d in range(info.rank))
    spec = TensorSpec(name, shape, dtype)
    spec.kind = VALUE_KINDS.get(info.kind, "tensor")  # an attribute: specs still compare as (name, shape, dtype)
    return spec


def _device_dict(d):
    return {
        "index": d.index, "name": text(d.name), "type": text(d.type), "driver_name": text(d.driver_name),
        "driver_info": text(d.driver_info), "vendor_id": d.vendor_id, "device_id": d.device_id,
        "api_version": "%d.%d.%d" % (d.api_version >> 22, (d.api_version >> 12) & 0x3FF, d.api_version & 0xFFF),
        "device_local_bytes": d.device_local_bytes, "max_storage_buffer_range": d.max_storage_buffer_range,
        "max_workgroup_invocations": d.max_workgroup_invocations,
        "max_shared_memory_bytes": d.max_shared_memory_bytes, "subgroup_size": d.subgroup_size,
        "fp16_arithmetic": bool(d.fp16_arithmetic), "storage_16bit": bool(d.storage_16bit),
        "storage_8bit": bool(d.storage_8bit), "cooperative_matrix": bool(d.cooperative_matrix),
        "is_default": bool(d.is_default), "shader_float64": bool(d.shader_float64),
    }


def is_available():
    """True when the library loads and a Vulkan device answers (vki_vulkan_available). Never raises."""
    try:
        return bool(lib().vki_vulkan_available())
    except (OSError, VkinferError):
        return False


def devices():
    """The Vulkan devices (vki_device_list) as dicts; 'is_default' marks the one used by default."""
    n = ctypes.c_uint32(0)
    check(lib().vki_device_list(None, 0, ctypes.byref(n)))
    infos = (DeviceInfo * max(n.value, 1))()
    check(lib().vki_device_list(infos, n.value, ctypes.byref(n)))
    return [_device_dict(infos[i]) for i in range(n.value)]


def ops():
    """The operators vkinfer runs (vki_op_count, vki_op_get): dicts of name, domain, dtypes, notes."""
    out = []
    for i in range(lib().vki_op_count()):
        info = OpInfo()
        check(lib().vki_op_get(i, ctypes.byref(info)))
        out.append({"name": text(info.name), "domain": text(info.domain) or "",
                    "dtypes": (text(info.dtypes) or "").split(), "notes": text(info.notes) or ""})
    return out


def options():
    """The library's options, the VKINFER_* variables (vki_option_count, vki_option_get): dicts of
    name, type, values, default, category and doc, as docs/environment.md lists them."""
    out = []
    for i in range(lib().vki_option_count()):
        info = OptionInfo()
        check(lib().vki_option_get(i, ctypes.byref(info)))
        out.append({"name": text(info.name), "type": text(info.type), "values": text(info.values),
                    "default": text(info.default_value), "category": text(info.category), "doc": text(info.doc)})
    return out


def _option_arrays(options):
    """names and values (char * arrays) of an options dict: True/False as 1/0, None as NULL (the
    option's default whatever the environment says), anything else as str()."""
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict of option name to value, not {type(options).__name__}")
    names = (ctypes.c_char_p * max(len(options), 1))()
    values = (ctypes.c_char_p * max(len(options), 1))()
    for i, (name, value) in enumerate(options.items()):
        if not isinstance(name, str):
            raise TypeError(f"option names are strings ('VKINFER_NO_FUSION'), not {name!r}")
        names[i] = name.encode()
        if value is None:
            values[i] = None
        elif isinstance(value, bool):
            values[i] = b"1" if value else b"0"
        else:
            values[i] = str(value).encode()
    return names, values


def library_version():
    """vki_version: the loaded library's version (vkinfer.__version__ is this package's)."""
    return text(lib().vki_version())


def inspect(path):
    """What a model file holds, without a device (vki_model_inspect): a dict with ir_version,
    opset, node_count, initializer_count, weight_bytes, inputs, outputs (TensorSpecs) and ops
    (name, domain, nodes, supported), including ops vkinfer does not run."""
    r = ctypes.c_void_p()
    check(lib().vki_model_inspect(os.fsencode(path), ctypes.byref(r)))
    try:
        s = ModelSummary()
        check(lib().vki_model_report_summary(r, ctypes.byref(s)))
        info = TensorInfo()
        inputs, outputs, used = [], [], []
        for i in range(s.input_count):
            check(lib().vki_model_report_input(r, i, ctypes.byref(info)))
            inputs.append(_spec(info))
        for i in range(s.output_count):
            check(lib().vki_model_report_output(r, i, ctypes.byref(info)))
            outputs.append(_spec(info))
        for i in range(s.op_type_count):
            u = ModelOpUse()
            check(lib().vki_model_report_op(r, i, ctypes.byref(u)))
            used.append({"name": text(u.op), "domain": text(u.domain), "nodes": u.node_count,
                         "supported": bool(u.supported)})
        return {"ir_version": s.ir_version, "opset": s.opset, "node_count": s.node_count,
                "initializer_count": s.initializer_count, "weight_bytes": s.weight_bytes,
                "unsupported_node_count": s.unsupported_node_count, "inputs": inputs, "outputs": outputs,
                "ops": used}
    finally:
        lib().vki_model_report_destroy(r)


AUTO_INLINE_BYTES = 1 << 20


def _auto_inline(path):
    """True where a model's weights and declared inputs (symbolic dims as 1) come to less than 1
    MiB: on lavapipe such a model runs each dispatch on the submit thread (LP_NUM_THREADS=0), as
    `vkinfer run` chooses (tools/cli_load.c auto_inline says why: 50-70 us of thread wake-ups a
    dispatch otherwise)."""
    try:
        if os.path.getsize(path) >= AUTO_INLINE_BYTES or os.path.getsize(os.fspath(path) + ".data") >= AUTO_INLINE_BYTES:
            return False
    except OSError:
        pass  # no .data file (or the model is missing: the load says so)
    try:
        info = inspect(path)
    except VkinferError:
        return False
    total = info["weight_bytes"]
    for spec in info["inputs"]:
        n = dtype_size(_DTYPE_CODES[spec.dtype]) or 1  # as tools/cli_load.c counts them
        for d in spec.shape or ():
            n *= d if isinstance(d, int) and d > 0 else 1
        total += n
    return total < AUTO_INLINE_BYTES


class Context:
    """A Vulkan device opened for running models (vki_context). Sessions made with the same
    Context share the device, and device tensors (Tensor) move between them without copies.

    Context(device=None, validation=None, cache_dir=None, cpu_threads=None, options=None)
      device: index or name substring as `vkinfer devices` lists (None: VKINFER_DEVICE, else the
        best device); validation: True/False for the Khronos validation layer (None:
        VKINFER_VALIDATION decides); cache_dir: the pipeline cache folder ("" for none);
        cpu_threads: on lavapipe (the CPU device), its compute threads (None: LP_NUM_THREADS,
        else one per core). 0 runs each dispatch on lavapipe's submit thread without waking
        others, which small networks (robot policies) run 2.5-4.5x faster and large ones slower
        (docs/troubleshooting.md). lavapipe reads LP_NUM_THREADS when the context is created,
        so it is set for that call and restored after: do not create contexts on other threads
        meanwhile.
        options: the library's options by name over the environment's, {"VKINFER_NO_FUSION": "1"}
        (vkinfer.options() and docs/environment.md list them; values as str, True/False as 1/0,
        None for the default whatever the environment says); an unknown name or an invalid
        value raises VkinferError naming it (so does an invalid VKINFER_* variable).
    It stays open while a Session or Tensor made on it is alive.
    """

    def __init__(self, device=None, validation=None, cache_dir=None, cpu_threads=None, options=None):
        self._ctx = ctypes.c_void_p()
        opts = ContextOptions(device=None if device is None else str(device).encode(),
                              validation=-1 if validation is None else int(bool(validation)),
                              cache_dir=None if cache_dir is None else os.fsencode(cache_dir))
        if cpu_threads is not None and (isinstance(cpu_threads, bool) or not isinstance(cpu_threads, int)
                                        or not 0 <= cpu_threads <= 64):
            raise ValueError(f"cpu_threads must be an integer from 0 to 64 or None, not {cpu_threads!r}")
        L = lib()
        if options and not hasattr(L, "vki_context_create_with_options"):
            raise VkinferError(f"options= needs vki_context_create_with_options, which the library at {L.vkinfer_path} "
                               f"(version {library_version()}) does not have", 5)
        names, values = _option_arrays(options) if options else (None, None)
        saved = os.environ.get("LP_NUM_THREADS")
        if cpu_threads is not None:
            os.environ["LP_NUM_THREADS"] = str(cpu_threads)
        try:
            if options:
                check(L.vki_context_create_with_options(ctypes.byref(opts), names, values, len(options),
                                                        ctypes.byref(self._ctx)))
            else:
                check(L.vki_context_create(ctypes.byref(opts), ctypes.byref(self._ctx)))
        finally:
            if cpu_threads is not None:
                if saved is None:
                    del os.environ["LP_NUM_THREADS"]
                else:
                    os.environ["LP_NUM_THREADS"] = saved

    @property
    def device(self):
        """The device (vki_context_device_info), as devices() lists it."""
        if not self._ctx:
            raise VkinferError("the context is closed", 1)
        d = DeviceInfo()
        check(lib().vki_context_device_info(self._ctx, ctypes.byref(d)))
        return _device_dict(d)

    def close(self):
        """Frees the context (vki_context_destroy). Close its sessions and tensors first."""
        if self._ctx:
            lib().vki_context_destroy(self._ctx)
            self._ctx = ctypes.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Tensor:
    """A tensor in device memory (vki_tensor): given to Session.run as an input it is read on
    the GPU, and run(..., outputs_on_device=True) returns outputs as Tensors, so a loop of runs
    (a diffusion policy's denoising steps) never copies its sample through the host.

    Tensor(context, array): a device copy of a NumPy array (any dtype vkinfer runs; bfloat16
    as for Session.run inputs needs a `dtype="bfloat16"` argument). .numpy() copies it back;
    .shape and .dtype describe it.
    """

    def __init__(self, context, array=None, *, shape=None, dtype=None):
        self._t = ctypes.c_void_p()
        self.context = context  # keeps the device open while this tensor lives
        if array is not None:
            code = _dtypes.BF16 if dtype == "bfloat16" else _dtypes.code_of(np.asarray(array).dtype)
            a = _dtypes.to_host_bytes("tensor", array, code)
            shape = np.asarray(array).shape
        else:
            code = _dtype_number(dtype)
        dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        check(lib().vki_tensor_create(context._ctx, code, dims, len(shape), ctypes.byref(self._t)))
        info = TensorInfo()
        check(lib().vki_tensor_get_info(self._t, ctypes.byref(info)))
        self.shape = tuple(info.dims[d] for d in range(info.rank))
        self._code = info.dtype
        self.dtype = dtype_name(info.dtype)
        if array is not None:
            check(lib().vki_tensor_write(self._t, a.ctypes.data_as(ctypes.c_void_p), a.nbytes))

    def numpy(self):
        """A host copy (bfloat16: as Session.run returns it, see docs/python.md)."""
        if not self._t:
            raise VkinferError("the tensor is closed", 1)
        n = int(np.prod(self.shape, dtype=np.int64)) * dtype_size(self._code)
        raw = ctypes.create_string_buffer(max(n, 1))
        check(lib().vki_tensor_read(self._t, raw, n))
        return _dtypes.from_host_bytes(raw.raw[:n], self._code, self.shape)

    def close(self):
        if self._t:
            lib().vki_tensor_destroy(self._t)
            self._t = ctypes.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return f"vkinfer.Tensor({self.dtype}{list(self.shape)})"


class Session:
    """A model loaded on a Vulkan device, ready to run.

    Session(path, device=None, precision="fp32", validation=None, cache_dir=None, context=None,
            cpu_threads=None, options=None)
      device, validation, cache_dir, cpu_threads, options: as for Context (used when no context is
      given; options={"VKINFER_NO_FUSION": "1"} sets the library's options by name;
      cpu_threads None with LP_NUM_THREADS unset: 0 for a model of under 1 MiB of weights and
      inputs, whose dispatches on lavapipe cost more in thread wake-ups than in work, else 4 on a
      machine of 2 cores (two per core: steadier there, as tools/cli_load.c chooses), else one
      thread per core; .cpu_threads says what was set, None for nothing);
      precision: "fp32" (the model's own dtypes) or "fp16" (the fp16 execution mode: float32
      weights and activations held as float16 on the GPU, fp32 accumulation); context: a
      Context to share with other sessions (device tensors move between its sessions).
    Use it as a context manager or call close(); the handles are freed when it is collected too.
    """

    def __init__(self, path, device=None, precision="fp32", validation=None, cache_dir=None, context=None,
                 cpu_threads=None, options=None):
        self._model = ctypes.c_void_p()
        self._session = ctypes.c_void_p()
        self.context = None
        if precision not in ("fp32", "fp16"):
            raise ValueError(f"precision must be 'fp32' or 'fp16', not {precision!r}")
        self.precision = precision
        L = lib()
        if precision == "fp16" and not hasattr(L, "vki_session_create_with_options"):
            raise VkinferError(f"precision='fp16' needs vki_session_create_with_options, which the library at "
                               f"{L.vkinfer_path} (version {library_version()}) does not have", 5)
        if context is not None and cpu_threads is not None:
            raise ValueError("cpu_threads applies when a context is created: give it to the Context instead")
        if context is not None and options:
            raise ValueError("options apply when a context is created: give them to the Context instead")
        if context is None and cpu_threads is None and "LP_NUM_THREADS" not in os.environ:
            cpu_threads = 0 if _auto_inline(path) else 4 if os.cpu_count() == 2 else None
        self.cpu_threads = cpu_threads if context is None else None
        try:
            if context is None:
                context = Context(device, validation, cache_dir, cpu_threads, options)
            self.context = context
            self._ctx = self.context._ctx
            check(L.vki_model_load(self._ctx, os.fsencode(path), ctypes.byref(self._model)))
            if precision == "fp32":
                check(L.vki_session_create(self._model, ctypes.byref(self._session)))
            else:
                sopts = SessionOptions(precision=PRECISION_FP16)
                check(L.vki_session_create_with_options(self._model, ctypes.byref(sopts), ctypes.byref(self._session)))
        except BaseException:
            self.close()
            raise
        self.path = os.fspath(path)
        info = TensorInfo()
        self._inputs, self._codes = [], {}
        for i in range(L.vki_model_input_count(self._model)):
            check(L.vki_model_input_info(self._model, i, ctypes.byref(info)))
            self._inputs.append(_spec(info))
            self._codes[text(info.name)] = info.dtype
        self._outputs = []
        for i in range(L.vki_model_output_count(self._model)):
            check(L.vki_model_output_info(self._model, i, ctypes.byref(info)))
            self._outputs.append(_spec(info))

    @property
    def inputs(self):
        """The model's inputs (TensorSpec: name, shape with symbolic dims named, dtype)."""
        return list(self._inputs)

    @property
    def outputs(self):
        """The model's outputs as declared (a run's arrays carry the actual shapes)."""
        return list(self._outputs)

    def run(self, inputs, output_names=None, outputs_on_device=False):
        """Runs the model. inputs: {name: array-like or Tensor}, every model input (see .inputs).
        Arrays are converted with NumPy 'same_kind' casts (float64 -> float32 is fine, float ->
        int is not); bfloat16 inputs take float arrays (see docs/python.md); a Tensor (of this
        session's Context) is read on the GPU. Returns {output name: NumPy array} (arrays own
        their memory), or with outputs_on_device=True {output name: Tensor}, written on the GPU
        (new device tensors each run), only those in output_names if given.
        Sequences and optionals (TensorSpec.kind): a sequence input takes a list of arrays, an
        optional one an array (or a list: optional_sequence) or None, and may be left out (None);
        a sequence output is a list of arrays, an optional one None when it is none. They cannot
        be Tensors (outputs_on_device refuses them)."""
        L = lib()
        self._check_open()
        unknown = set(inputs) - set(self._codes)
        if unknown:
            raise VkinferError(f"the model has no input {sorted(unknown)[0]!r}; it expects "
                               + ", ".join(f"{s.name}: {s.dtype} {list(s.shape) if s.shape else '?'}"
                                           for s in self.inputs), 1)
        for spec in self.inputs:
            optional = spec.kind in ("optional", "optional_sequence")
            if spec.name not in inputs and not optional:
                raise VkinferError(f"input {spec.name!r} was not given ({spec.dtype} "
                                   f"{list(spec.shape) if spec.shape else 'any shape'})", 1)
            value = inputs.get(spec.name)
            if value is None and optional:
                check(L.vki_session_set_input_none(self._session, spec.name.encode()))
                continue
            if spec.kind in ("sequence", "optional_sequence"):
                self._set_sequence(spec, value)
                continue
            if isinstance(value, Tensor):
                if value.context is not self.context:
                    raise VkinferError(f"input {spec.name!r}: the Tensor belongs to another Context (make the sessions "
                                       f"with context=...)", 1)
                check(L.vki_session_bind_input(self._session, spec.name.encode(), value._t))
                continue
            a = _dtypes.to_host_bytes(spec.name, value, self._codes[spec.name])
            dims = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
            check(L.vki_session_set_input(self._session, spec.name.encode(), self._codes[spec.name], dims, a.ndim,
                                          a.ctypes.data_as(ctypes.c_void_p), a.nbytes))
        info = TensorInfo()
        if outputs_on_device:
            lists = [o for o in self.outputs if o.kind != "tensor"]
            if lists:
                raise VkinferError(f"output {lists[0].name!r} is a {lists[0].kind.replace('_', ' ')}: outputs_on_device "
                                   f"takes tensor outputs only", 5)
            check(L.vki_session_prepare(self._session))
            tensors = {}
            try:
                for i in range(len(self.outputs)):
                    check(L.vki_session_output_info(self._session, i, ctypes.byref(info)))
                    t = Tensor(self.context, shape=tuple(info.dims[d] for d in range(info.rank)),
                               dtype=dtype_name(info.dtype))
                    tensors[text(info.name)] = t
                    check(L.vki_session_bind_output(self._session, i, t._t))
                check(L.vki_session_run(self._session))
            finally:  # the session must not keep pointers to tensors Python may free
                for i in range(len(self.outputs)):
                    L.vki_session_bind_output(self._session, i, None)
            return {n: t for n, t in tensors.items() if output_names is None or n in output_names}
        check(L.vki_session_run(self._session))
        out = {}
        data, nbytes, count = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_int32()
        for i, spec in enumerate(self.outputs):
            if output_names is not None and spec.name not in output_names:
                continue
            if spec.kind == "tensor":
                check(L.vki_session_get_output(self._session, i, ctypes.byref(info), ctypes.byref(data),
                                               ctypes.byref(nbytes)))
                raw = ctypes.string_at(data, nbytes.value) if nbytes.value else b""
                out[spec.name] = _dtypes.from_host_bytes(raw, info.dtype, tuple(info.dims[d] for d in range(info.rank)))
                continue
            check(L.vki_session_get_output_count(self._session, i, ctypes.byref(count)))
            arrays = []
            for k in range(max(count.value, 0)):
                check(L.vki_session_get_output_element(self._session, i, k, ctypes.byref(info), ctypes.byref(data),
                                                       ctypes.byref(nbytes)))
                raw = ctypes.string_at(data, nbytes.value) if nbytes.value else b""
                arrays.append(_dtypes.from_host_bytes(raw, info.dtype, tuple(info.dims[d] for d in range(info.rank))))
            if count.value < 0:
                out[spec.name] = None
            elif spec.kind in ("sequence", "optional_sequence"):
                out[spec.name] = arrays
            else:
                out[spec.name] = arrays[0]
        return out

    def _set_sequence(self, spec, value):
        """vki_session_set_sequence_input from a list of arrays."""
        if isinstance(value, (Tensor, np.ndarray)) or not hasattr(value, "__iter__"):
            raise VkinferError(f"input {spec.name!r} is a sequence: give a list of arrays", 1)
        code = self._codes[spec.name]
        arrays = [_dtypes.to_host_bytes(spec.name, v, code) for v in value]
        n = len(arrays)
        ranks = (ctypes.c_int32 * max(n, 1))(*[a.ndim for a in arrays])
        dims = (ctypes.c_int64 * (max(n, 1) * MAX_RANK))()
        for k, a in enumerate(arrays):
            for d, extent in enumerate(a.shape):
                dims[k * MAX_RANK + d] = extent
        data = (ctypes.c_void_p * max(n, 1))(*[a.ctypes.data_as(ctypes.c_void_p) for a in arrays])
        sizes = (ctypes.c_size_t * max(n, 1))(*[a.nbytes for a in arrays])
        check(lib().vki_session_set_sequence_input(self._session, spec.name.encode(), n, code, ranks, dims, data,
                                                   sizes))

    def __call__(self, **inputs):
        """s(x=array) is s.run({"x": array})."""
        return self.run(inputs)

    @property
    def device(self):
        """The device this session runs on (vki_context_device_info), as devices() lists it."""
        self._check_open()
        return self.context.device

    def stats(self):
        """vki_session_stats of the last run: plan_ms, last_run_ms, dispatch_count, weight_bytes..."""
        self._check_open()
        s = SessionStats()
        check(lib().vki_session_stats_get(self._session, ctypes.byref(s)))
        return {name: getattr(s, name) for name, _ in SessionStats._fields_}

    def set_profiling(self, enabled):
        """Per-dispatch GPU timestamps for runs after this call (vki_session_set_profiling)."""
        self._check_open()
        check(lib().vki_session_set_profiling(self._session, int(bool(enabled))))

    def profile(self):
        """GPU time per dispatch of the last run (profiling on): dicts of node, op, shader, gpu_ms,
        flops (2 per multiply-add of products and convolutions, else 0) and bytes (of the buffer
        ranges the dispatch binds)."""
        self._check_open()
        n = ctypes.c_uint32(0)
        check(lib().vki_session_profile(self._session, None, 0, ctypes.byref(n)))
        rows = (DispatchProfile * max(n.value, 1))()
        check(lib().vki_session_profile(self._session, rows, n.value, ctypes.byref(n)))
        return [{"node": text(r.node), "op": text(r.op), "shader": text(r.shader), "gpu_ms": r.gpu_ms,
                 "flops": r.flops, "bytes": r.bytes} for r in rows[:n.value]]

    def close(self):
        """Frees the session, model and device context (vki_*_destroy); later calls raise."""
        L = lib()
        if self._session:
            L.vki_session_destroy(self._session)
            self._session = ctypes.c_void_p()
        if self._model:
            L.vki_model_destroy(self._model)
            self._model = ctypes.c_void_p()
        self.context = None  # a Context of its own closes when collected

    def _check_open(self):
        if not self._session:
            raise VkinferError("the session is closed", 1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown may have unloaded modules
            pass

    def __repr__(self):
        return f"vkinfer.Session({self.path!r}, inputs={self.inputs}, outputs={self.outputs})"
