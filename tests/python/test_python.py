#!/usr/bin/python3
"""Tests of the Python package (python/vkinfer): API, dtypes, errors, from_torch, the header's
every function having a counterpart, ctypes structs matching the C ones, `pip install ./python`.

usage: /usr/bin/python3 tests/python/test_python.py path/to/libvkinfer.so
Prints one line per check and 'N passed, N failed' last.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
results = {"passed": 0, "failed": 0}
TMP = None


def check(name, ok, detail=""):
    results["passed" if ok else "failed"] += 1
    print(("PASS " if ok else "FAIL ") + name + ("" if ok or not detail else "\n    " + str(detail).replace("\n", "\n    ")))


def raises(fn, exc):
    """The exception fn raises if it is an `exc`, else None (and a wrong exception is kept as text)."""
    try:
        fn()
    except exc as e:  # noqa: BLE001
        return e
    except Exception as e:  # noqa: BLE001
        return None if exc is None else f"wrong exception {type(e).__name__}: {e}"
    return None


def save(graph, name, opset=13):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    p = os.path.join(TMP, name)
    onnx.save(model, p)
    return p


def header_functions():
    text = open(os.path.join(ROOT, "include", "vkinfer.h")).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return sorted(set(re.findall(r"\b(vki_\w+)\s*\(", text)))


def test_api(vkinfer, libpath):
    check("is_available() on this machine (lavapipe at least)", vkinfer.is_available() is True)
    devs = vkinfer.devices()
    check("devices(): dicts, one is the default", len(devs) >= 1 and sum(d["is_default"] for d in devs) == 1
          and all(isinstance(d["name"], str) and d["name"] for d in devs), devs)
    check("__version__ is the library's version", vkinfer.__version__ == vkinfer.library_version(),
          (vkinfer.__version__, vkinfer.library_version()))
    hdr = open(os.path.join(ROOT, "include", "vkinfer.h")).read()
    major = re.search(r"VKI_VERSION_MAJOR (\d+)", hdr).group(1)
    minor = re.search(r"VKI_VERSION_MINOR (\d+)", hdr).group(1)
    check("library version matches the header's macros", vkinfer.library_version().startswith(f"{major}.{minor}."))
    ops = vkinfer.ops()
    check("ops(): the registry", any(o["name"] == "Conv" and "float32" in o["dtypes"] for o in ops), len(ops))
    check("dtype_name / dtype_size", vkinfer.dtype_name(16) == "bfloat16" and vkinfer.dtype_size(7) == 8)

    # every C function of the header has a Python counterpart that calls it
    from vkinfer import _lib
    import vkinfer as pkg
    src = "".join(open(os.path.join(ROOT, "python", "vkinfer", f)).read()
                  for f in os.listdir(os.path.join(ROOT, "python", "vkinfer")) if f.endswith(".py"))
    funcs = header_functions()
    check("header parsed (30+ functions)", len(funcs) >= 30, funcs)
    for name in funcs:
        where = pkg.COUNTERPARTS.get(name)
        obj = pkg
        for part in (where or "?").split("."):
            obj = getattr(obj, part, None)
        called = re.search(r"\." + name + r"\(", src) is not None
        exported = hasattr(_lib.lib(), name)
        check(f"{name}: counterpart {where}, declared in PROTOTYPES, called, exported by the library",
              where is not None and obj is not None and name in _lib.PROTOTYPES and called and exported,
              f"counterpart={where} resolves={obj is not None} prototype={name in _lib.PROTOTYPES} called={called} "
              f"exported={exported}")
    # every status of the header's enum has its name in STATUS_NAMES, and nothing else does
    enum = re.search(r"typedef enum vki_status \{(.*?)\} vki_status;", hdr, flags=re.S).group(1)
    statuses = {int(v): n for n, v in re.findall(r"\b(VKI_\w+)\s*=\s*(\d+)", re.sub(r"/\*.*?\*/", "", enum, flags=re.S))}
    check("STATUS_NAMES mirrors the header's vki_status enum", len(statuses) >= 11 and statuses == _lib.STATUS_NAMES,
          (statuses, _lib.STATUS_NAMES))
    # names listed for a future library may be missing from it, but not from the header if it has them
    extra = sorted(set(pkg.COUNTERPARTS) - set(funcs))
    check("counterparts not in this header are only the announced ones",
          extra in ([], ["vki_session_create_with_options"]), extra)


STRUCTS = ["vki_device_info", "vki_context_options", "vki_tensor_info", "vki_session_stats", "vki_dispatch_profile",
           "vki_op_info", "vki_model_summary", "vki_model_op_use", "vki_session_options", "vki_option_info"]


def test_struct_layout(vkinfer):
    from vkinfer import _lib
    classes = {"vki_device_info": _lib.DeviceInfo, "vki_context_options": _lib.ContextOptions,
               "vki_tensor_info": _lib.TensorInfo, "vki_session_stats": _lib.SessionStats,
               "vki_dispatch_profile": _lib.DispatchProfile, "vki_op_info": _lib.OpInfo,
               "vki_model_summary": _lib.ModelSummary, "vki_model_op_use": _lib.ModelOpUse,
               "vki_session_options": _lib.SessionOptions, "vki_option_info": _lib.OptionInfo}
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "vkinfer.h"', "int main(void) {"]
    for s in STRUCTS:
        lines.append(f'printf("{s} size %zu\\n", sizeof({s}));')
        for field, _ in classes[s]._fields_:
            lines.append(f'printf("{s} {field} %zu\\n", offsetof({s}, {field}));')
    lines.append("return 0; }")
    c = os.path.join(TMP, "layout.c")
    open(c, "w").write("\n".join(lines))
    exe = os.path.join(TMP, "layout")
    p = subprocess.run(["cc", "-I", os.path.join(ROOT, "include"), c, "-o", exe], capture_output=True, text=True)
    if p.returncode:
        check("layout program compiles (every ctypes field exists in the C struct)", False, p.stderr)
        return
    for line in subprocess.run([exe], capture_output=True, text=True).stdout.splitlines():
        s, field, value = line.split()
        got = ctypes_size_or_offset(classes[s], field)
        check(f"ctypes {s}.{field} matches C ({value})", got == int(value), got)


def ctypes_size_or_offset(cls, field):
    import ctypes
    return ctypes.sizeof(cls) if field == "size" else getattr(cls, field).offset


def test_sessions(vkinfer):
    # Relu with a symbolic batch dimension
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])])
    relu = save(g, "relu.onnx")
    with vkinfer.Session(relu) as s:
        check("inputs: names, symbolic dims named, dtypes", s.inputs == [("x", ("batch", 3), "float32")], s.inputs)
        check("outputs", s.outputs == [("y", ("batch", 3), "float32")], s.outputs)
        x = np.random.default_rng(0).uniform(-1, 1, (4, 3)).astype(np.float32)
        out = s.run({"x": x})
        check("run returns {name: array} equal to numpy", list(out) == ["y"] and np.array_equal(out["y"], np.maximum(x, 0)),
              out)
        out2 = s.run({"x": x[:2].astype(np.float64)})
        check("another batch; float64 converted to float32", out2["y"].shape == (2, 3)
              and np.array_equal(out2["y"], np.maximum(x[:2], 0)), out2)
        check("results own their memory (a later run does not change them)", np.array_equal(out["y"], np.maximum(x, 0)))
        check("s(x=...) calls run", np.array_equal(s(x=x)["y"], np.maximum(x, 0)))
        e = raises(lambda: s.run({"x": np.zeros((2, 4), np.float32)}), vkinfer.VkinferError)
        check("wrong shape: VkinferError with the library's message and status",
              isinstance(e, vkinfer.VkinferError) and "expects" in str(e) and e.status_name == "VKI_ERROR_SHAPE", e)
        e = raises(lambda: s.run({}), vkinfer.VkinferError)
        check("missing input named", isinstance(e, vkinfer.VkinferError) and "'x'" in str(e), e)
        e = raises(lambda: s.run({"x": x, "z": x}), vkinfer.VkinferError)
        check("unknown input named", isinstance(e, vkinfer.VkinferError) and "'z'" in str(e), e)
        e = raises(lambda: s.run({"x": np.array([["a", "b", "c"]])}), TypeError)
        check("a string array is refused with TypeError", isinstance(e, TypeError), e)
        st = s.stats()
        check("stats()", st["dispatch_count"] >= 1 and st["last_run_ms"] > 0, st)
        check("device", s.device["is_default"] is True, s.device)
        s.set_profiling(True)
        s.run({"x": x})
        prof = s.profile()
        check("profile(): time per dispatch", len(prof) >= 1 and prof[0]["op"] == "Relu" and prof[0]["gpu_ms"] >= 0, prof)
        check("profile(): an element-wise op counts no flops, binds x and y (4 x 3 floats each)",
              prof[0]["flops"] == 0 and prof[0]["bytes"] == 2 * 4 * 3 * 4, prof)
    # a product's profile entry counts 2 M N K flops
    w = np.random.default_rng(1).uniform(-1, 1, (64, 48)).astype(np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["a", "w"], ["y"])], "mm",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, [32, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 48])],
                          [numpy_helper.from_array(w, "w")])
    with vkinfer.Session(save(g, "mm.onnx")) as s:
        s.set_profiling(True)
        s.run({"a": np.ones((32, 64), np.float32)})
        flops = sum(d["flops"] for d in s.profile() if d["op"] == "MatMul")
        check("profile(): MatMul [32,64] x [64,48] counts 2 M N K flops", flops == 2 * 32 * 64 * 48, s.profile())
    e = raises(lambda: s.run({"x": x}), vkinfer.VkinferError)
    check("a closed session raises", isinstance(e, vkinfer.VkinferError) and "closed" in str(e), e)

    # cpu_threads: LP_NUM_THREADS for the context's creation only; on lavapipe, 0 starts no
    # compute threads of its own and the results are the same
    before = os.environ.get("LP_NUM_THREADS")
    e = raises(lambda: vkinfer.Context(cpu_threads=-1), ValueError)
    check("cpu_threads=-1: ValueError", isinstance(e, ValueError), e)
    ctx = vkinfer.Context()
    e = raises(lambda: vkinfer.Session(relu, context=ctx, cpu_threads=0), ValueError)
    check("cpu_threads with a context given: ValueError (it applies when a context is made)", isinstance(e, ValueError), e)
    ctx.close()

    def threads_with(n):
        with vkinfer.Session(relu, cpu_threads=n) as s:
            return len(os.listdir("/proc/self/task")), s.run({"x": x})["y"], s.device["type"]

    inline, y0, kind = threads_with(0)
    pooled, y2, _ = threads_with(2)
    check("cpu_threads leaves LP_NUM_THREADS as it was", os.environ.get("LP_NUM_THREADS") == before,
          os.environ.get("LP_NUM_THREADS"))
    check("cpu_threads=0 and 2 give the same results", np.array_equal(y0, y2) and np.array_equal(y0, np.maximum(x, 0)))
    if kind == "cpu":
        check("on lavapipe cpu_threads=2 runs 2 more threads than 0", pooled - inline >= 2, (inline, pooled))

    # cpu_threads None with LP_NUM_THREADS unset: 0 for a model of under 1 MiB of weights and
    # inputs (the relu), for a larger one 4 on a machine of 2 cores (two per core) and nothing
    # set elsewhere, nothing where LP_NUM_THREADS is set
    big = save(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "big_relu",
                                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [600, 600])],
                                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [600, 600])]), "big_relu.onnx")
    saved = os.environ.pop("LP_NUM_THREADS", None)
    try:
        with vkinfer.Session(relu) as s:
            auto_small, tasks_small = s.cpu_threads, len(os.listdir("/proc/self/task"))
        with vkinfer.Session(big) as s:
            auto_big = s.cpu_threads
        os.environ["LP_NUM_THREADS"] = "2"
        with vkinfer.Session(relu) as s:
            auto_env = s.cpu_threads
    finally:
        os.environ.pop("LP_NUM_THREADS", None)
        if saved is not None:
            os.environ["LP_NUM_THREADS"] = saved
    big_want = 4 if os.cpu_count() == 2 else None
    check(f"cpu_threads None: 0 for a small model, {big_want} for a 1.4 MB one on {os.cpu_count()} cores, None where "
          "LP_NUM_THREADS is set", (auto_small, auto_big, auto_env) == (0, big_want, None), (auto_small, auto_big, auto_env))
    if kind == "cpu":
        check("on lavapipe the small model's chosen 0 starts no compute threads", tasks_small <= inline, (tasks_small, inline))

    # dtypes: int64 and bool in, float16 in/out, bfloat16 out in the documented form
    g = helper.make_graph(
        [helper.make_node("Cast", ["ids"], ["ids_f"], to=TensorProto.FLOAT), helper.make_node("Not", ["m"], ["nm"]),
         helper.make_node("Relu", ["h"], ["hr"]), helper.make_node("Cast", ["ids_f"], ["b"], to=TensorProto.BFLOAT16)],
        "dtypes",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [3]),
         helper.make_tensor_value_info("m", TensorProto.BOOL, [2]),
         helper.make_tensor_value_info("h", TensorProto.FLOAT16, [3])],
        [helper.make_tensor_value_info("ids_f", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("nm", TensorProto.BOOL, [2]),
         helper.make_tensor_value_info("hr", TensorProto.FLOAT16, [3]),
         helper.make_tensor_value_info("b", TensorProto.BFLOAT16, [3])])
    dt = save(g, "dtypes.onnx")
    s = vkinfer.Session(dt)
    ids = np.array([1, -7, 257], np.int64)
    out = s.run({"ids": ids, "m": np.array([True, False]), "h": np.array([-1, 0.5, 2], np.float16)})
    check("int64 in; bool in/out; float16 in/out",
          np.array_equal(out["ids_f"], ids.astype(np.float32)) and out["nm"].dtype == np.bool_
          and np.array_equal(out["nm"], [False, True]) and out["hr"].dtype == np.float16
          and np.array_equal(out["hr"], np.array([0, 0.5, 2], np.float16)), out)
    from vkinfer import _dtypes
    want_dtype = _dtypes.BFLOAT16 if _dtypes.BFLOAT16 is not None else np.float32
    # 257 is not a bfloat16: it rounds to 256 (nearest even)
    check(f"bfloat16 output as {np.dtype(want_dtype)} (documented form)",
          out["b"].dtype == want_dtype and np.array_equal(out["b"].astype(np.float32), [1, -7, 256]), out["b"])
    e = raises(lambda: s.run({"ids": ids.astype(np.float32), "m": [True, False], "h": [1, 2, 3]}), TypeError)
    check("float -> int64 input refused (not a same_kind cast)", isinstance(e, TypeError) and "ids" in str(e), e)
    s.close()
    bits = _dtypes.float32_to_bf16_bits(np.array([1.00390625, 1.01171875, -3.0, np.inf, np.nan], np.float32))
    check("float32 -> bfloat16 rounds to nearest even (as torch)",
          list(bits[:4]) == [0x3F80, 0x3F82, 0xC040, 0x7F80] and (bits[4] & 0x7FC0) == 0x7FC0, [hex(b) for b in bits])

    # float64 and uint64 (held as float32 / int32 on the GPU): in and out in their own dtypes;
    # a uint64 beyond int32 is the library's error naming the input
    g = helper.make_graph([helper.make_node("Add", ["d", "d"], ["d2"]), helper.make_node("Add", ["u", "u"], ["u2"])],
                          "wide", [helper.make_tensor_value_info("d", TensorProto.DOUBLE, [2]),
                                   helper.make_tensor_value_info("u", TensorProto.UINT64, [2])],
                          [helper.make_tensor_value_info("d2", TensorProto.DOUBLE, [2]),
                           helper.make_tensor_value_info("u2", TensorProto.UINT64, [2])])
    with vkinfer.Session(save(g, "wide.onnx")) as s:
        out = s.run({"d": np.array([0.5, -1.25]), "u": np.array([3, 1000000000], np.uint64)})
        check("float64 and uint64 in and out", out["d2"].dtype == np.float64 and list(out["d2"]) == [1.0, -2.5]
              and out["u2"].dtype == np.uint64 and list(out["u2"]) == [6, 2000000000], out)
        e = raises(lambda: s.run({"d": np.zeros(2), "u": np.array([1, 1 << 40], np.uint64)}), vkinfer.VkinferError)
        check("uint64 beyond int32: the library's error", isinstance(e, vkinfer.VkinferError) and "'u'" in str(e)
              and "1099511627776" in str(e), e)
    # the small formats' host bytes (one per element) without a model: int4 values, float8 codes
    check("int4 input bytes: values, range checked",
          _dtypes.to_host_bytes("x", np.array([-8, 7, 0]), _dtypes.INT4).tolist() == [-8, 7, 0]
          and isinstance(raises(lambda: _dtypes.to_host_bytes("x", np.array([8]), _dtypes.INT4), TypeError), TypeError))
    y = _dtypes.from_host_bytes(bytes([0x00, 0x38, 0xFE, 0x7F]), _dtypes.FLOAT8E4M3FN, (4,))
    check("float8e4m3fn output: 0, 1, -448, NaN", np.array_equal(y.astype(np.float32)[:3], [0, 1, -448])
          and np.isnan(y.astype(np.float32)[3]), y)
    y = _dtypes.from_host_bytes(bytes([0x01, 0x0F, 0x07]), _dtypes.FLOAT4E2M1, (3,))
    check("float4e2m1 output: 0.5, -6, 6", np.array_equal(y.astype(np.float32), [0.5, -6, 6]), y)

    # a bfloat16 input takes float arrays
    g = helper.make_graph([helper.make_node("Cast", ["b"], ["f"], to=TensorProto.FLOAT)], "bf16in",
                          [helper.make_tensor_value_info("b", TensorProto.BFLOAT16, [2])],
                          [helper.make_tensor_value_info("f", TensorProto.FLOAT, [2])])
    with vkinfer.Session(save(g, "bf16in.onnx")) as s:
        check("bfloat16 input from float64, rounded", np.array_equal(s.run({"b": [1.00390625, 3.0]})["f"], [1.0, 3.0]))
        check("inputs report bfloat16", s.inputs[0].dtype == "bfloat16")

    # errors carry the library's message; unsupported ops are named, inspect() says which
    e = raises(lambda: vkinfer.Session(os.path.join(TMP, "missing.onnx")), vkinfer.VkinferError)
    check("missing file: VKI_ERROR_IO naming it", isinstance(e, vkinfer.VkinferError) and e.status_name == "VKI_ERROR_IO"
          and "missing.onnx" in str(e), e)
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("StringNormalizer", ["r"], ["y"])],
                          "unsupported", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    bad = os.path.join(TMP, "unsupported.onnx")
    onnx.save(model, bad)
    e = raises(lambda: vkinfer.Session(bad), vkinfer.VkinferError)
    check("unsupported op: VKI_ERROR_UNSUPPORTED naming it", isinstance(e, vkinfer.VkinferError)
          and e.status_name == "VKI_ERROR_UNSUPPORTED" and "StringNormalizer" in str(e), e)
    info = vkinfer.inspect(bad)
    check("inspect(): opset, nodes, ops with supported flags, no device needed",
          info["opset"] == 13 and info["node_count"] == 2 and info["unsupported_node_count"] == 1
          and info["ops"] == [{"name": "Relu", "domain": "", "nodes": 1, "supported": True},
                              {"name": "StringNormalizer", "domain": "", "nodes": 1, "supported": False}]
          and info["inputs"] == [("x", (2,), "float32")], info)
    e = raises(lambda: vkinfer.Session(relu, precision="int4"), ValueError)
    check("precision other than fp32/fp16: ValueError", isinstance(e, ValueError), e)

    # fp16: through vki_session_create_with_options when the library has it, else a clear error
    from vkinfer import _lib
    if _lib.has("vki_session_create_with_options"):
        with vkinfer.Session(relu, precision="fp16") as s:
            x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
            y = s.run({"x": x})["y"]
            check("precision='fp16' runs (vki_session_create_with_options)", np.allclose(y, np.maximum(x, 0), atol=1e-3), y)
    else:
        e = raises(lambda: vkinfer.Session(relu, precision="fp16"), vkinfer.VkinferError)
        check("precision='fp16' without vki_session_create_with_options: a clear error",
              isinstance(e, vkinfer.VkinferError) and "vki_session_create_with_options" in str(e), e)


def test_options(vkinfer):
    """The library's options set through Context/Session(options=...) over the environment's."""
    table = vkinfer.options()
    by_name = {o["name"]: o for o in table}
    check("options(): the table, VKINFER_NO_FUSION a bool for tests, VKINFER_MATMUL_KERNELS's values",
          len(table) >= 50 and by_name.get("VKINFER_NO_FUSION", {}).get("type") == "bool"
          and by_name["VKINFER_NO_FUSION"]["category"] == "test"
          and by_name.get("VKINFER_MATMUL_KERNELS", {}).get("values", "").startswith("gpu|cpu"), table[:3])
    # MatMul + Relu: one dispatch with the Relu fused, two without fusion
    g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Relu", ["p"], ["y"])], "mm",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, [4, 8]),
                           helper.make_tensor_value_info("b", TensorProto.FLOAT, [8, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])])
    path = save(g, "mm_relu.onnx")
    rng = np.random.default_rng(3)
    feeds = {"a": rng.uniform(-1, 1, (4, 8)).astype(np.float32), "b": rng.uniform(-1, 1, (8, 4)).astype(np.float32)}
    want = np.maximum(feeds["a"] @ feeds["b"], 0)

    def dispatches(**kw):
        with vkinfer.Session(path, **kw) as s:
            y = s.run(feeds)["y"]
            return s.stats()["dispatch_count"], np.allclose(y, want, rtol=1e-5, atol=1e-6)

    saved = os.environ.pop("VKINFER_NO_FUSION", None)
    try:
        fused, ok1 = dispatches()
        unfused, ok2 = dispatches(options={"VKINFER_NO_FUSION": "1"})
        as_bool, _ = dispatches(options={"VKINFER_NO_FUSION": True})
        check("Session(options={'VKINFER_NO_FUSION': '1'}) plans more dispatches (True as 1), same results",
              unfused > fused >= 1 and as_bool == unfused and ok1 and ok2, (fused, unfused, as_bool, ok1, ok2))
        os.environ["VKINFER_NO_FUSION"] = "1"
        from_env, _ = dispatches()
        program, _ = dispatches(options={"VKINFER_NO_FUSION": "0"})
        default, _ = dispatches(options={"VKINFER_NO_FUSION": None})
        check("the environment's VKINFER_NO_FUSION=1 takes effect; options= wins over it; None is the default",
              (from_env, program, default) == (unfused, fused, fused), (from_env, program, default))
        os.environ["VKINFER_NO_FUSION"] = "perhaps"
        e = raises(lambda: vkinfer.Session(path), vkinfer.VkinferError)
        check("an invalid VKINFER_NO_FUSION in the environment raises VkinferError naming it",
              isinstance(e, vkinfer.VkinferError) and e.status_name == "VKI_ERROR_INVALID_ARGUMENT"
              and "VKINFER_NO_FUSION=perhaps" in str(e), e)
    finally:
        os.environ.pop("VKINFER_NO_FUSION", None)
        if saved is not None:
            os.environ["VKINFER_NO_FUSION"] = saved
    for opts, name in [({"VKINFER_SPIN_US": "soon"}, "VKINFER_SPIN_US"), ({"VKINFER_NOPE": "1"}, "VKINFER_NOPE"),
                       ({"VKINFER_MATMUL_KERNELS": "fast"}, "VKINFER_MATMUL_KERNELS")]:
        e = raises(lambda: vkinfer.Context(options=opts), vkinfer.VkinferError)
        check(f"Context(options={opts}) raises VkinferError naming {name}",
              isinstance(e, vkinfer.VkinferError) and e.status_name == "VKI_ERROR_INVALID_ARGUMENT" and name in str(e), e)
    e = raises(lambda: vkinfer.Context(options=[("VKINFER_NO_FUSION", "1")]), TypeError)
    check("options must be a dict", isinstance(e, TypeError), e)
    ctx = vkinfer.Context(options={"VKINFER_NO_FUSION": 1})
    try:
        with vkinfer.Session(path, context=ctx) as s:
            s.run(feeds)
            shared = s.stats()["dispatch_count"]
        check("a Context's options apply to its sessions", shared == unfused, (shared, unfused))
        e = raises(lambda: vkinfer.Session(path, context=ctx, options={"VKINFER_NO_FUSION": "1"}), ValueError)
        check("Session(context=..., options=...) is a ValueError (options belong to the Context)", isinstance(e, ValueError), e)
    finally:
        ctx.close()


def test_sequences(vkinfer):
    # a sequence input through SequenceAt and ConcatFromSequence, an optional one, a sequence output
    seq_t = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, ["n"])
    opt_t = helper.make_value_info("o", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, ["m"])))
    g = helper.make_graph([helper.make_node("SequenceAt", ["s", "pos"], ["at"]),
                           helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=0),
                           helper.make_node("OptionalHasElement", ["o"], ["has"]),
                           helper.make_node("SplitToSequence", ["cat"], ["parts"], axis=0)],
                          "seq", [seq_t, opt_t],
                          [helper.make_tensor_value_info("at", TensorProto.FLOAT, ["k"]),
                           helper.make_tensor_value_info("cat", TensorProto.FLOAT, ["t"]),
                           helper.make_tensor_value_info("has", TensorProto.BOOL, []),
                           helper.make_tensor_sequence_value_info("parts", TensorProto.FLOAT, ["u"])],
                          [helper.make_tensor("pos", TensorProto.INT64, [], [-1])])
    path = save(g, "seq.onnx", opset=17)
    with vkinfer.Session(path) as s:
        check("sequence and optional inputs: kind", [i.kind for i in s.inputs] == ["sequence", "optional"]
              and s.inputs[0] == ("s", ("n",), "float32") and "kind='sequence'" in repr(s.inputs[0]), s.inputs)
        check("sequence output: kind", s.outputs[3].kind == "sequence", s.outputs)
        a, b = np.array([1, 2], np.float32), np.array([3, 4, 5], np.float32)
        out = s.run({"s": [a, b]})
        check("SequenceAt(-1), ConcatFromSequence; an omitted optional is none",
              np.array_equal(out["at"], b) and np.array_equal(out["cat"], np.concatenate([a, b])) and not out["has"], out)
        check("sequence output: a list of arrays", isinstance(out["parts"], list) and len(out["parts"]) == 5
              and all(np.array_equal(p, [v]) for p, v in zip(out["parts"], [1, 2, 3, 4, 5])), out["parts"])
        out = s.run({"s": [b], "o": np.zeros(2, np.float32)})
        check("optional set", bool(out["has"]) and np.array_equal(out["at"], b), out)
        e = raises(lambda: s.run({"s": a}), vkinfer.VkinferError)
        check("an array for a sequence input: error", e is not None and "list of arrays" in str(e), e)
        e = raises(lambda: s.run({"s": []}), vkinfer.VkinferError)
        check("an empty sequence: the node's error", e is not None and "SequenceAt" in str(e), e)
        e = raises(lambda: s.run({"s": [a]}, outputs_on_device=True), vkinfer.VkinferError)
        check("outputs_on_device refuses a sequence output", e is not None and "'parts'" in str(e), e)


def test_torch(vkinfer):
    try:
        import torch
    except ImportError:
        check("torch is installed (python3-torch) for from_torch", False)
        return
    torch.manual_seed(0)

    class TwoHeads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.GELU())
            self.a, self.b = torch.nn.Linear(16, 3), torch.nn.Linear(16, 1)

        def forward(self, obs, goal):
            h = self.body(obs + goal)
            return torch.tanh(self.a(h)), self.b(h)

    m = TwoHeads().eval()
    obs, goal = torch.randn(4, 6), torch.randn(4, 6)
    ts = vkinfer.from_torch(m, (obs, goal), input_names=["obs", "goal"], output_names=["action", "value"],
                            dynamic_axes={"obs": {0: "batch"}, "goal": {0: "batch"}, "action": {0: "batch"},
                                          "value": {0: "batch"}}, opset_version=17)
    with torch.no_grad():
        want = m(obs, goal)
    got = ts(obs, goal)
    check("from_torch: tuple of torch tensors matching eager",
          isinstance(got, tuple) and len(got) == 2 and all(isinstance(t, torch.Tensor) for t in got)
          and all(torch.allclose(g, w, atol=1e-5) for g, w in zip(got, want)), got)
    check("from_torch: names and symbolic batch", [i.name for i in ts.inputs] == ["obs", "goal"]
          and ts.outputs[0].name == "action" and ts.inputs[0].shape == ("batch", 6), ts.inputs)
    got = ts(obs[:1], goal[:1])
    check("from_torch: another batch size", got[0].shape == (1, 3))
    e = raises(lambda: ts(obs), TypeError)
    check("from_torch: wrong number of inputs is a TypeError", isinstance(e, TypeError) and "2 input" in str(e), e)
    folder = os.path.dirname(ts.onnx_path)
    ts.close()
    check("close() removes the exported file's folder", not os.path.exists(folder))

    lin = torch.nn.Linear(8, 4).to(torch.bfloat16)
    xb = torch.randn(2, 8).to(torch.bfloat16)
    tb = vkinfer.from_torch(lin, xb)
    y = tb(xb)
    with torch.no_grad():
        ref = lin(xb)
    # bf16 Linear: both sides round the result once to bfloat16 but accumulate differently
    check("from_torch: bfloat16 module in and out", y.dtype == torch.bfloat16 and y.shape == ref.shape
          and torch.allclose(y.float(), ref.float(), atol=0.05, rtol=0.02), (y, ref))
    tb.close()


def test_pip_install(libpath):
    """`pip install ./python` into a venv (system site packages for numpy; no network: no build
    isolation, no dependency resolution), then import from outside the source tree."""
    venv = os.path.join(TMP, "venv")
    p = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], capture_output=True, text=True)
    if p.returncode:
        check("python3 -m venv (Debian: python3-venv)", False, p.stderr)
        return
    src = os.path.join(TMP, "python-src")  # a copy: pip's build writes egg-info into the source folder
    subprocess.run(["cp", "-r", os.path.join(ROOT, "python"), src], check=True)
    py = os.path.join(venv, "bin", "python")
    p = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index", "-q", src],
                       capture_output=True, text=True)
    check("pip install ./python", p.returncode == 0, p.stdout + p.stderr)
    env = dict(os.environ, VKINFER_LIBRARY=libpath)
    code = ("import vkinfer, numpy as np, sys; s = vkinfer.Session(sys.argv[1]); "
            "print(vkinfer.__file__); print(s.run({'x': np.array([[-1, 2, -3]], np.float32)})['y'].tolist())")
    p = subprocess.run([py, "-c", code, os.path.join(TMP, "relu.onnx")], capture_output=True, text=True, cwd=TMP, env=env)
    lines = p.stdout.splitlines()
    check("the installed package runs a model", p.returncode == 0 and len(lines) == 2 and lines[0].startswith(venv)
          and lines[1] == "[[0.0, 2.0, 0.0]]", p.stdout + p.stderr)
    env = dict(os.environ, VKINFER_LIBRARY=os.path.join(TMP, "no-such-libvkinfer.so"))
    code = ("import vkinfer; print(vkinfer.is_available())\n"
            "try:\n    vkinfer.Session('x.onnx')\nexcept vkinfer.LibraryNotFound as e:\n    print('not found:', e)")
    p = subprocess.run([py, "-c", code], capture_output=True, text=True, cwd=TMP, env=env)
    check("no library: is_available() is False, Session raises LibraryNotFound naming where it looked",
          p.returncode == 0 and p.stdout.startswith("False\nnot found:") and "no-such-libvkinfer.so" in p.stdout,
          p.stdout + p.stderr)


def main():
    global TMP
    if len(sys.argv) != 2:
        print("usage: test_python.py path/to/libvkinfer.so", file=sys.stderr)
        return 2
    libpath = os.path.abspath(sys.argv[1])
    os.environ["VKINFER_LIBRARY"] = libpath
    import vkinfer
    with tempfile.TemporaryDirectory(prefix="vkinfer-python-") as tmp:
        TMP = tmp
        test_api(vkinfer, libpath)
        test_struct_layout(vkinfer)
        test_sessions(vkinfer)
        test_options(vkinfer)
        test_sequences(vkinfer)
        test_torch(vkinfer)
        test_pip_install(libpath)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
