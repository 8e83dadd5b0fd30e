#!/usr/bin/python3
"""Tests of the vkinfer command: .npy reading/writing, output names, input errors, bench --json.

usage: /usr/bin/python3 tests/cli/test_cli.py path/to/vkinfer
Builds tiny ONNX models with onnx.helper (only ops of src/ops/unary.c), runs the binary and
compares with numpy. Prints one line per check and 'N passed, N failed' last.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

VKINFER = None
TMP = None
results = {"passed": 0, "failed": 0}


def check(name, ok, detail=""):
    results["passed" if ok else "failed"] += 1
    print(("PASS " if ok else "FAIL ") + name + ("" if ok or not detail else "\n    " + detail.replace("\n", "\n    ")))


def vk(*args, timeout=300, cwd=None):
    p = subprocess.run([VKINFER] + [str(a) for a in args], capture_output=True, text=True, timeout=timeout, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def path(name):
    return os.path.join(TMP, name)


def save_model(graph, name, opset=13):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, path(name))
    return path(name)


def build_models():
    # x[2,3] -> Relu -> Identity -> y
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Identity", ["r"], ["y"])], "relu_identity",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    relu = save_model(g, "relu.onnx")
    # names that are not file names, a symbolic batch dim and two inputs of other dtypes
    g = helper.make_graph(
        [helper.make_node("Relu", ["in:0"], ["out/relu:0"]),
         helper.make_node("Cast", ["ids"], ["ids_f"], to=TensorProto.FLOAT),
         helper.make_node("Not", ["mask"], ["not mask"])], "names",
        [helper.make_tensor_value_info("in:0", TensorProto.FLOAT, ["batch", 4]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, [3]),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, [2, 2])],
        [helper.make_tensor_value_info("out/relu:0", TensorProto.FLOAT, ["batch", 4]),
         helper.make_tensor_value_info("ids_f", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("not mask", TensorProto.BOOL, [2, 2])])
    names = save_model(g, "names.onnx")
    # float16 in and out
    g = helper.make_graph(
        [helper.make_node("Relu", ["h"], ["hr"])], "half",
        [helper.make_tensor_value_info("h", TensorProto.FLOAT16, [5])],
        [helper.make_tensor_value_info("hr", TensorProto.FLOAT16, [5])])
    half = save_model(g, "half.onnx")
    # a bfloat16 output (written as float32) and two output names that sanitize alike
    g = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["a/b"], to=TensorProto.BFLOAT16),
         helper.make_node("Relu", ["x"], ["a:b"])], "bf16",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("a/b", TensorProto.BFLOAT16, [2, 3]),
         helper.make_tensor_value_info("a:b", TensorProto.FLOAT, [2, 3])])
    bf16 = save_model(g, "bf16.onnx")
    return relu, names, half, bf16


def expects_inputs_listed(stderr, *needles):
    return "expects" in stderr and all(n in stderr for n in needles)


def load_npy(p):
    try:
        return np.load(p)
    except Exception as e:  # noqa: BLE001 - any failure is a test failure
        return e


def main():
    global VKINFER, TMP
    if len(sys.argv) != 2:
        print("usage: test_cli.py path/to/vkinfer", file=sys.stderr)
        return 2
    VKINFER = os.path.abspath(sys.argv[1])
    if not os.access(VKINFER, os.X_OK):
        print(f"FAIL {VKINFER} is not an executable\n0 passed, 1 failed")
        return 1
    with tempfile.TemporaryDirectory(prefix="vkinfer-cli-") as tmp:
        TMP = tmp
        run_all()
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


def run_all():
    relu, names, half, bf16 = build_models()
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    np.save(path("x.npy"), x)
    want = np.maximum(x, 0)

    # ---- basic commands ----
    rc, out, err = vk("--version")
    check("--version", rc == 0 and out.startswith("vkinfer "), out + err)
    rc, out, err = vk("help")
    check("help", rc == 0 and "usage" in out, out + err)
    rc, out, err = vk()
    check("no command is a usage error (exit 2)", rc == 2 and "usage" in err, f"rc={rc}")
    rc, out, err = vk("run", relu, "--bogus")
    check("unknown option is a usage error (exit 2)", rc == 2 and "--bogus" in err, f"rc={rc} {err}")
    rc, out, err = vk("run")
    check("run without model is a usage error (exit 2)", rc == 2, f"rc={rc}")
    rc, out, err = vk("devices")
    check("devices", rc == 0 and "*" in out, out + err)
    rc, out, err = vk("ops")
    check("ops", rc == 0 and "Relu" in out, out + err)
    rc, out, err = vk("ops", "--markdown")
    lines = out.splitlines()
    check("ops --markdown", rc == 0 and lines[0].startswith("| Op") and any(l.startswith("| Relu |") for l in lines),
          out[:500] + err)
    rc, out, err = vk("options")
    check("options lists the library's options", rc == 0 and "VKINFER_NO_FUSION (test, bool)" in out
          and out.rstrip().endswith("options"), out[-300:] + err)
    rc, out, err = vk("options", "--markdown")
    check("options --markdown: docs/environment.md's tables", rc == 0 and out.startswith("### For users")
          and "| `VKINFER_SPIN_US` | int | `0-1000000` |" in out, out[:300] + err)

    # ---- run with an input file ----
    od = path("out1")
    rc, out, err = vk("run", relu, "--input", "x=" + path("x.npy"), "--output-dir", od)
    got = load_npy(os.path.join(od, "y.npy"))
    check("run Relu+Identity writes y.npy equal to numpy",
          rc == 0 and isinstance(got, np.ndarray) and got.dtype == np.float32 and got.shape == (2, 3)
          and np.array_equal(got, want), f"rc={rc}\n{out}\n{err}\n{got}")
    check("run prints name, shape, dtype, times",
          "output y" in out and "[2,3]" in out and "float32" in out and "plan" in out and "ms" in out, out)
    rc, out, err = vk("run", relu, "--input", "x=" + path("x.npy"), "--option", "VKINFER_NO_FUSION=1",
                      "--option=VKINFER_SPIN_US=0")
    check("run --option NAME=VALUE", rc == 0 and "output y" in out, f"rc={rc}\n{err}")
    rc, out, err = vk("run", relu, "--input", "x=" + path("x.npy"), "--option", "VKINFER_SPIN_US=soon")
    check("run --option with an invalid value fails naming the option", rc == 1 and "VKINFER_SPIN_US=soon" in err,
          f"rc={rc}\n{err}")
    rc, out, err = vk("run", relu, "--input", "x=" + path("x.npy"), "--option", "VKINFER_NO_SUCH=1")
    check("run --option with an unknown name fails naming it", rc == 1 and "VKINFER_NO_SUCH" in err, f"rc={rc}\n{err}")
    rc, out, err = vk("run", relu, "--option", "VKINFER_NO_FUSION")
    check("--option without '=' is a usage error (exit 2)", rc == 2 and "--option" in err, f"rc={rc} {err}")
    os.mkdir(path("cwd"))
    rc, out, err = vk("run", relu, "--input=x=" + path("x.npy"), cwd=path("cwd"))
    check("--opt=value form; no files written without --output-dir", rc == 0 and os.listdir(path("cwd")) == [],
          f"rc={rc} {os.listdir(path('cwd'))}\n{err}")

    # Fortran order, big-endian, format v2 and v3
    np.save(path("xf.npy"), np.asfortranarray(x))
    with open(path("xf.npy"), "rb") as f:
        is_fortran = b"'fortran_order': True" in f.read(128)
    od = path("out_f")
    rc, out, err = vk("run", relu, "--input", "x=" + path("xf.npy"), "--output-dir", od)
    got = load_npy(os.path.join(od, "y.npy"))
    check("Fortran-order input", is_fortran and rc == 0 and np.array_equal(got, want), f"rc={rc} {err}")
    np.save(path("xbe.npy"), x.astype(">f4"))
    od = path("out_be")
    rc, out, err = vk("run", relu, "--input", "x=" + path("xbe.npy"), "--output-dir", od)
    check("big-endian input", rc == 0 and np.array_equal(load_npy(os.path.join(od, "y.npy")), want), err)
    x3 = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    for version in [(2, 0), (3, 0)]:
        p = path(f"xv{version[0]}.npy")
        with open(p, "wb") as f:
            np.lib.format.write_array(f, x, version=version)
        od = path(f"out_v{version[0]}")
        rc, out, err = vk("run", relu, "--input", "x=" + p, "--output-dir", od)
        check(f"npy format v{version[0]}.0 input",
              rc == 0 and np.array_equal(load_npy(os.path.join(od, "y.npy")), want), err)

    # ---- output name sanitization, symbolic dims, int64 and bool ----
    xin = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    ids = np.array([1, -7, 123456], dtype=np.int64)
    mask = np.array([[True, False], [False, True]])
    np.save(path("xin.npy"), xin)
    np.save(path("ids.npy"), ids)
    np.save(path("mask.npy"), mask)
    od = path("out_names")
    rc, out, err = vk("run", names, "--input", "in:0=" + path("xin.npy"), "--input", "ids=" + path("ids.npy"),
                      "--input", "mask=" + path("mask.npy"), "--output-dir", od)
    files = sorted(os.listdir(od)) if os.path.isdir(od) else []
    check("output names sanitized (out/relu:0 -> out_relu_0.npy, 'not mask' -> not_mask.npy)",
          rc == 0 and files == ["ids_f.npy", "not_mask.npy", "out_relu_0.npy"], f"rc={rc} files={files}\n{err}")
    got = load_npy(os.path.join(od, "out_relu_0.npy"))
    check("symbolic batch dim takes the input's size",
          isinstance(got, np.ndarray) and got.shape == (3, 4) and np.array_equal(got, np.maximum(xin, 0)), str(got))
    got = load_npy(os.path.join(od, "ids_f.npy"))
    check("int64 input", isinstance(got, np.ndarray) and np.array_equal(got, ids.astype(np.float32)), str(got))
    got = load_npy(os.path.join(od, "not_mask.npy"))
    check("bool input and output", isinstance(got, np.ndarray) and got.dtype == np.bool_
          and np.array_equal(got, ~mask), str(got))

    # float16 in, float16 out
    h = np.array([-1.5, 0, 0.25, 65504, -65504], dtype=np.float16)
    np.save(path("h.npy"), h)
    od = path("out_half")
    rc, out, err = vk("run", half, "--input", "h=" + path("h.npy"), "--output-dir", od)
    got = load_npy(os.path.join(od, "hr.npy"))
    check("float16 input and output", rc == 0 and isinstance(got, np.ndarray) and got.dtype == np.float16
          and np.array_equal(got, np.maximum(h, 0)), f"rc={rc} {err} {got}")

    # float64 and uint64 in and out (float64 computed in double where the default device has
    # shaderFloat64, as `vkinfer devices` says, else in fp32; uint64 as int32); a uint64 above
    # 2^31-1 is the library's error naming the input
    g = helper.make_graph([helper.make_node("Add", ["d", "d"], ["d2"]), helper.make_node("Add", ["u", "u"], ["u2"])],
                          "wide", [helper.make_tensor_value_info("d", TensorProto.DOUBLE, [3]),
                                   helper.make_tensor_value_info("u", TensorProto.UINT64, [3])],
                          [helper.make_tensor_value_info("d2", TensorProto.DOUBLE, [3]),
                           helper.make_tensor_value_info("u2", TensorProto.UINT64, [3])])
    wide = save_model(g, "wide.onnx")
    np.save(path("d.npy"), np.array([0.5, -1.25, 1e300]))
    np.save(path("u.npy"), np.array([0, 7, 1000000000], np.uint64))
    od = path("out_wide")
    rc, out, err = vk("run", wide, "--input", "d=" + path("d.npy"), "--input", "u=" + path("u.npy"), "--output-dir", od)
    d2, u2 = load_npy(os.path.join(od, "d2.npy")), load_npy(os.path.join(od, "u2.npy"))
    default = re.search(r"^\* \d+:.*?(?=^[ *] \d+:|\Z)", vk("devices")[1], re.S | re.M)
    in_double = bool(default) and "float64: yes" in default.group(0)
    want_d2 = [1.0, -2.5, 2e300] if in_double else [1.0, -2.5, np.inf]
    check(f"float64 and uint64 .npy in and out (float64 in {'double' if in_double else 'fp32: beyond float32 inf'})",
          rc == 0 and isinstance(d2, np.ndarray) and d2.dtype == np.float64 and list(d2) == want_d2
          and isinstance(u2, np.ndarray) and u2.dtype == np.uint64 and list(u2) == [0, 14, 2000000000], f"rc={rc} {err}")
    np.save(path("u_big.npy"), np.array([0, 7, 1 << 40], np.uint64))
    rc, out, err = vk("run", wide, "--input", "d=" + path("d.npy"), "--input", "u=" + path("u_big.npy"))
    check("uint64 above 2^31-1: exit 1, the input named", rc == 1 and "'u'" in err and "1099511627776" in err,
          f"rc={rc}\n{err}")

    od = path("out_bf16")
    rc, out, err = vk("run", bf16, "--input", "x=" + path("x.npy"), "--output-dir", od)
    got = load_npy(os.path.join(od, "a_b.npy"))
    bf = (x.view(np.uint32) + 0x7FFF + ((x.view(np.uint32) >> 16) & 1)) & 0xFFFF0000  # round to nearest even
    check("bfloat16 output written as float32 and said so",
          rc == 0 and isinstance(got, np.ndarray) and got.dtype == np.float32 and np.array_equal(got, bf.view(np.float32))
          and "float32" in out and "bfloat16" in out, f"rc={rc}\n{out}\n{err}\n{got}")
    got = load_npy(os.path.join(od, "output_1.npy"))
    check("output names that sanitize alike: the second is written as output_<index>.npy, with a warning",
          isinstance(got, np.ndarray) and np.array_equal(got, want) and "output_1.npy" in err, f"{os.listdir(od)}\n{err}")

    # ---- input errors: exit 1 and the expected inputs listed ----
    rc, out, err = vk("run", names, "--input", "in:0=" + path("xin.npy"))
    check("missing input: exit 1, lists inputs",
          rc == 1 and expects_inputs_listed(err, "ids", "int64", "[3]", "mask", "bool", "[batch,4]"), f"rc={rc}\n{err}")
    rc, out, err = vk("run", relu, "--input", "x=" + path("x.npy"), "--input", "bogus=" + path("x.npy"))
    check("unknown input: exit 1, lists inputs",
          rc == 1 and "bogus" in err and expects_inputs_listed(err, "x", "float32", "[2,3]"), f"rc={rc}\n{err}")
    np.save(path("x_i32.npy"), (x * 10).astype(np.int32))
    rc, out, err = vk("run", relu, "--input", "x=" + path("x_i32.npy"))
    check("wrong dtype: exit 1, lists inputs",
          rc == 1 and "int32" in err and expects_inputs_listed(err, "x", "float32", "[2,3]"), f"rc={rc}\n{err}")
    np.save(path("x_f64.npy"), x.astype(np.float64))
    rc, out, err = vk("run", relu, "--input", "x=" + path("x_f64.npy"))
    check("float64 input: exit 1, suggests astype", rc == 1 and "float64" in err and "astype" in err, f"rc={rc}\n{err}")
    np.save(path("x_t.npy"), x.T.copy())
    rc, out, err = vk("run", relu, "--input", "x=" + path("x_t.npy"))
    check("wrong shape: exit 1, lists inputs",
          rc == 1 and "[3,2]" in err and expects_inputs_listed(err, "x", "float32", "[2,3]"), f"rc={rc}\n{err}")
    rc, out, err = vk("run", relu, "--input", "x=" + path("nonexistent.npy"))
    check("missing file: exit 1", rc == 1 and "nonexistent" in err, f"rc={rc}\n{err}")

    # ---- broken and hostile files: exit 1, never a crash ----
    raw = open(path("x.npy"), "rb").read()
    data_start = len(raw) - x.nbytes
    header = raw[10:data_start]

    def npy_with_header(text, data=b"", version=1):
        body = text.encode()
        if version == 1:
            return b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body + data
        return b"\x93NUMPY" + bytes([version, 0]) + len(body).to_bytes(4, "little") + body + data

    broken = {
        "truncated data": raw[:-5],
        "truncated header": raw[:40],
        "only magic": raw[:7],
        "empty file": b"",
        "not npy": b"hello world, this is not a numpy file at all",
        "header length beyond file": b"\x93NUMPY\x01\x00\xff\xff{'descr'",
        "v2 huge header length": b"\x93NUMPY\x02\x00\xff\xff\xff\xff{'descr'",
        "version 9": b"\x93NUMPY\x09\x00" + raw[8:],
        "huge shape": npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904), }\n"),
        "overflowing dim": npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, ), }\n"),
        "negative dim": npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }\n", raw[data_start:]),
        "rank 9": npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }\n", b"\0" * 4),
        "structured dtype": npy_with_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3), }\n", raw[data_start:]),
        "unknown dtype": npy_with_header("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }\n", raw[data_start:]),
        "missing shape": npy_with_header("{'descr': '<f4', 'fortran_order': False, }\n", raw[data_start:]),
        "unterminated string": npy_with_header("{'descr': '<f4", raw[data_start:]),
        "NUL in header": npy_with_header("{'descr': '<f4'\0, 'fortran_order': False, 'shape': (2, 3), }\n", raw[data_start:]),
        "bad fortran_order": npy_with_header("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3), }\n", raw[data_start:]),
        "unclosed shape": npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", raw[data_start:]),
        "v3 truncated": npy_with_header(header.decode(), raw[data_start:-1], version=3),
    }
    for what, blob in broken.items():
        p = path("broken.npy")
        with open(p, "wb") as f:
            f.write(blob)
        rc, out, err = vk("run", relu, "--input", "x=" + p)
        check(f"broken .npy ({what}): exit 1", rc == 1 and "broken.npy" in err, f"rc={rc}\n{err}")

    model_bytes = open(relu, "rb").read()
    for cut in [len(model_bytes) // 2, len(model_bytes) - 3, 5]:
        p = path("truncated.onnx")
        with open(p, "wb") as f:
            f.write(model_bytes[:cut])
        rc, out, err = vk("run", p, "--input", "x=" + path("x.npy"))
        check(f"truncated .onnx ({cut} of {len(model_bytes)} bytes): exit 1", rc == 1 and err.strip() != "",
              f"rc={rc}\n{err}")
    rc, out, err = vk("run", path("no_such_model.onnx"), "--random-inputs")
    check("missing model file: exit 1", rc == 1 and "no_such_model" in err, f"rc={rc}\n{err}")

    # ---- random inputs ----
    od1, od2, od3 = path("rand1"), path("rand2"), path("rand3")
    rc1, out, err1 = vk("run", names, "--random-inputs", "--seed", "7", "--output-dir", od1)
    rc2, _, err2 = vk("run", names, "--random-inputs", "--seed", "7", "--output-dir", od2)
    rc3, _, err3 = vk("run", names, "--random-inputs", "--seed", "8", "--output-dir", od3)
    a, b, c = (load_npy(os.path.join(d, "out_relu_0.npy")) for d in (od1, od2, od3))
    ids_f = load_npy(os.path.join(od1, "ids_f.npy"))
    check("--random-inputs: runs, symbolic dim = 1, floats in [0,1) after Relu, ints in [0,10)",
          rc1 == 0 and isinstance(a, np.ndarray) and a.shape == (1, 4) and a.min() >= 0 and a.max() < 1
          and isinstance(ids_f, np.ndarray) and ids_f.min() >= 0 and ids_f.max() < 10 and np.all(ids_f == np.round(ids_f)),
          f"rc={rc1}\n{err1}\n{a}\n{ids_f}")
    check("--random-inputs is seeded", rc2 == 0 and rc3 == 0 and np.array_equal(a, b) and not np.array_equal(a, c),
          f"{a}\n{b}\n{c}")
    od = path("rand_mix")
    rc, out, err = vk("run", names, "--random-inputs", "--input", "ids=" + path("ids.npy"), "--output-dir", od)
    check("--random-inputs keeps the given inputs",
          rc == 0 and np.array_equal(load_npy(os.path.join(od, "ids_f.npy")), ids.astype(np.float32)), err)

    # ---- bench ----
    rc, out, err = vk("bench", relu, "--input", "x=" + path("x.npy"), "--warmup", "2", "--runs", "5", "--json")
    fields = ["model", "device", "load_ms", "plan_ms", "first_run_ms", "median_ms", "p10_ms", "p90_ms", "runs",
              "warmup", "dispatches", "weight_bytes", "intermediate_bytes"]
    try:
        j = json.loads(out)
        ok = (all(f in j for f in fields) and j["runs"] == 5 and j["warmup"] == 2
              and j["p10_ms"] <= j["median_ms"] <= j["p90_ms"] and isinstance(j["device"], str))
    except ValueError as e:
        ok, j = False, e
    check("bench --json prints one JSON object with every field", rc == 0 and ok, f"rc={rc}\n{out}\n{err}\n{j}")
    rc, out, err = vk("bench", names, "--random-inputs", "--warmup", "1", "--runs", "3")
    check("bench (text)", rc == 0 and "median" in out and "device" in out, f"rc={rc}\n{out}\n{err}")
    rc, out, err = vk("bench", relu, "--runs", "0", "--random-inputs")
    check("bench --runs 0 is a usage error", rc == 2, f"rc={rc}")
    rc, out, err = vk("bench", relu, "--json")
    check("bench with a missing input: exit 1, lists inputs", rc == 1 and expects_inputs_listed(err, "x"), f"rc={rc}\n{err}")

    run_help_info_shape_bench(relu, names)


def run_help_info_shape_bench(relu, names):
    # ---- help: an overview, a page with an example per command, one-line errors ----
    for cmd in ["devices", "ops", "info", "run", "bench"]:
        pages = [vk("help", cmd), vk(cmd, "--help"), vk(cmd, "-h")]
        check(f"help {cmd} / {cmd} --help / {cmd} -h: the same page, with an example",
              all(rc == 0 for rc, _, _ in pages) and len({out for _, out, _ in pages}) == 1
              and f"usage: vkinfer {cmd}" in pages[0][1] and "example" in pages[0][1], pages[0])
    rc, out, err = vk("help", "inspect")
    check("help inspect is info's page", rc == 0 and "vkinfer info" in out, out)
    rc, out, err = vk("help", "nosuch")
    check("help of an unknown command: exit 2", rc == 2 and "nosuch" in err, err)
    rc, out, err = vk("run", relu, "--bogus")
    check("an error is one line pointing to --help, not the whole usage",
          rc == 2 and err.count("\n") == 1 and "--bogus" in err and "vkinfer run --help" in err, err)
    rc, out, err = vk("frobnicate")
    check("unknown command: one line, exit 2", rc == 2 and err.count("\n") == 1 and "frobnicate" in err, err)

    # ---- info ----
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Relu", ["r"], ["r2"]),
         helper.make_node("Add", ["r2", "w"], ["a"]), helper.make_node("StringNormalizer", ["a"], ["y"])], "info",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor("w", TensorProto.FLOAT, [4], [1, 2, 3, 4])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])
    model.ir_version = 8
    info_model = path("info.onnx")
    onnx.save(model, info_model)
    rc, out, err = vk("info", info_model)
    check("info: inputs with symbolic dims, opset, nodes, ops marked, weight bytes",
          rc == 0 and "x: float32 [batch,4]" in out and "y: float32 [batch,4]" in out and "opset 15" in out
          and "4 nodes" in out and "16 bytes" in out and re.search(r"Relu +2 nodes +supported", out)
          and re.search(r"StringNormalizer +1 node +NO", out), out + err)
    rc, out, err = vk("inspect", info_model, "--json")
    try:
        j = json.loads(out)
        ok = (j["opset"] == 15 and j["ir_version"] == 8 and j["node_count"] == 4 and j["weight_bytes"] == 16
              and j["initializer_count"] == 1 and j["unsupported_node_count"] == 1
              and j["inputs"] == [{"name": "x", "dtype": "float32", "shape": ["batch", 4]}]
              and {"op": "StringNormalizer", "domain": "", "nodes": 1, "supported": False} in j["ops"]
              and {"op": "Relu", "domain": "", "nodes": 2, "supported": True} in j["ops"])
    except ValueError as e:
        ok, j = False, e
    check("inspect --json", rc == 0 and ok, f"{out}\n{err}")
    # lavapipe threads: a model of under 1 MiB of weights and inputs runs each dispatch on the
    # submit thread (LP_NUM_THREADS=0) unless --cpu-threads or LP_NUM_THREADS says otherwise; a
    # larger one keeps lavapipe's default (one thread per core)
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "big_relu",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [600, 600])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [600, 600])])
    big = save_model(g, "big_relu.onnx")
    env = {k: v for k, v in os.environ.items() if k != "LP_NUM_THREADS"}

    def bench_threads(model, *extra, environ=env):
        p = subprocess.run([VKINFER, "bench", model, "--random-inputs", "--runs", "2", "--json", *extra],
                           capture_output=True, text=True, timeout=300, env=environ)
        try:
            j = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return None, p.stdout + p.stderr
        return (j.get("cpu_threads"), j.get("cpu_threads_auto")), p.stdout + p.stderr

    small_auto, text = bench_threads(relu)
    check("bench --json: a small model gets cpu_threads 0, chosen", small_auto == (0, True), text)
    got, text = bench_threads(big)
    # (two per core chosen on a machine of 2 cores, tools/cli_load.c; elsewhere nothing set)
    want = (4, True) if os.cpu_count() == 2 else (None, None)
    check(f"bench --json: a model of 1.4 MB of inputs gets {want} on {os.cpu_count()} cores", got == want, text)
    got, text = bench_threads(relu, "--cpu-threads", "2")
    check("bench --json: --cpu-threads 2 wins over the choice", got == (2, False), text)
    got, text = bench_threads(relu, environ=dict(env, LP_NUM_THREADS="1"))
    check("bench --json: LP_NUM_THREADS wins over the choice (nothing set)", got == (None, None), text)
    rc, out, err = vk("run", relu, "--random-inputs")
    _, devices, _ = vk("devices")
    if re.search(r"^\* .*\(cpu\)$", devices, re.M):  # the default device is a CPU device (lavapipe)
        check("run on lavapipe says how many threads and why", "cpu threads: " in out, out + err)
    rc, out, err = vk("info", path("nonexistent.onnx"))
    check("info of a missing file: exit 1 naming it", rc == 1 and "nonexistent.onnx" in err, err)

    # ---- --shape picks symbolic dims of random inputs ----
    od = path("out_shape")
    rc, out, err = vk("run", names, "--random-inputs", "--shape", "in:0=5x4", "--output-dir", od)
    got = load_npy(os.path.join(od, "out_relu_0.npy"))
    check("run --shape NAME=5x4 sets the symbolic batch", rc == 0 and isinstance(got, np.ndarray) and got.shape == (5, 4),
          f"rc={rc} {err} {got}")
    rc, out, err = vk("run", names, "--random-inputs")
    check("a symbolic dim left to 1 is said on stderr", rc == 0 and "--shape in:0=" in err, err)
    rc, out, err = vk("run", names, "--random-inputs", "--shape", "in:0=5x3")
    check("--shape that does not fit the model: exit 1", rc == 1 and "does not fit" in err, err)
    rc, out, err = vk("run", names, "--random-inputs", "--shape", "nope=5x4")
    check("--shape of an unknown input: exit 1", rc == 1 and "nope" in err, err)
    for bad in ["in:0=5x", "in:0=", "in:0=-1x4", "in:0=axb", "5x4"]:
        rc, out, err = vk("run", names, "--random-inputs", "--shape", bad)
        check(f"--shape {bad!r}: usage error", rc == 2, f"rc={rc} {err}")
    rc, out, err = vk("run", names, "--shape", "in:0=5x4")
    check("--shape without --random-inputs: usage error", rc == 2 and "--random-inputs" in err, err)

    # ---- run checks --output-dir before running ----
    od = path("nested/deeper/out")
    rc, out, err = vk("run", relu, "--random-inputs", "--output-dir", od)
    check("--output-dir created with its parents", rc == 0 and os.path.exists(os.path.join(od, "y.npy")), err)
    open(path("a_file"), "w").close()
    rc, out, err = vk("run", relu, "--random-inputs", "--output-dir", path("a_file/out"))
    check("--output-dir under a file: exit 1 before running (no outputs printed)",
          rc == 1 and "not a directory" in err and "output y" not in out, out + err)
    if os.geteuid() != 0:  # root may write anywhere
        os.mkdir(path("readonly"), 0o555)
        rc, out, err = vk("run", relu, "--random-inputs", "--output-dir", path("readonly"))
        check("read-only --output-dir: exit 1 before running", rc == 1 and "output y" not in out, out + err)

    # ---- bench statistics, --duration, --shape, --plot ----
    rc, out, err = vk("bench", names, "--random-inputs", "--shape", "in:0=6x4", "--warmup", "1", "--runs", "7", "--json",
                      "--profile")
    try:
        j = json.loads(out)
        stats = [j[k] for k in ["min_ms", "p10_ms", "median_ms", "p90_ms", "p99_ms", "max_ms"]]
        ok = (stats == sorted(stats) and j["min_ms"] <= j["mean_ms"] <= j["max_ms"] and j["runs"] == 7
              and len(j["times_ms"]) == 7 and j["batch"] == 6
              # mean_ms is written to 4 decimals: at a few hundredths of a ms that is 0.1% or more
              and 6e3 / (j["mean_ms"] + 6e-5) <= j["items_per_s"] <= 6e3 / max(j["mean_ms"] - 6e-5, 1e-9)
              and j["session_ms"] >= 0 and "gpu_ms_by_op" in j and "Relu" in j["gpu_ms_by_op"]
              and j["gpu_ms_by_kernel"] and sum(j["gpu_ms_by_kernel"].values()) <= j["gpu_total_ms"] + 1e-3)
    except (ValueError, KeyError) as e:
        ok, j = False, e
    check("bench --json: min <= p10 <= median <= p90 <= p99 <= max, mean, throughput of batch 6, times, profile",
          rc == 0 and ok, f"rc={rc}\n{out}\n{err}")

    # ---- bench --output-dir: the first run's outputs, the files run writes ----
    def npy_files(d):
        return {f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d))} if os.path.isdir(d) else {}
    seeded = [names, "--random-inputs", "--shape", "in:0=3x4", "--seed", "5"]
    rc1, _, err1 = vk("run", *seeded, "--output-dir", path("out_run"))
    rc2, out, err2 = vk("bench", *seeded, "--runs", "1", "--warmup", "0", "--json", "--profile", "--output-dir",
                        path("out_bench/nested"))
    want, got = npy_files(path("out_run")), npy_files(path("out_bench/nested"))
    try:
        j = json.loads(out)
    except ValueError as e:
        j = e
    check("bench --output-dir --json --profile: run's three .npy files, bitwise equal; stdout one JSON object",
          rc1 == 0 and rc2 == 0 and sorted(want) == ["ids_f.npy", "not_mask.npy", "out_relu_0.npy"] and got == want
          and isinstance(j, dict) and "gpu_ms_by_op" in j and "wrote " in err2,
          f"rc={rc1},{rc2} run {sorted(want)} bench {sorted(got)}\n{out}\n{err1}{err2}")
    rc, out, err = vk("bench", relu, "--input", "x=" + path("x.npy"), "--runs", "1", "--output-dir", path("out_bench_text"))
    got = load_npy(path("out_bench_text/y.npy"))
    check("bench --output-dir (text): y.npy is relu(x), 'wrote' said on stdout",
          rc == 0 and isinstance(got, np.ndarray) and np.array_equal(got, np.maximum(np.load(path("x.npy")), 0))
          and "wrote " in out, f"rc={rc} {got}\n{out}\n{err}")
    open(path("a_file"), "w").close()
    rc, out, err = vk("bench", relu, "--random-inputs", "--json", "--output-dir", path("a_file/out"))
    check("bench --output-dir under a file: exit 1 naming it, before loading (nothing on stdout)",
          rc == 1 and "a_file" in err and "not a directory" in err and out == "", f"rc={rc}\n{out}\n{err}")
    rc, out, err = vk("bench", relu, "--random-inputs", "--warmup", "0", "--duration", "0.3", "--json")
    try:
        j = json.loads(out)
        ok = j["runs"] >= 1 and len(j["times_ms"]) == j["runs"] and j["duration_s"] == 0.3
        ok = ok and sum(j["times_ms"]) <= 300 + 2 * j["max_ms"]
    except (ValueError, KeyError) as e:
        ok, j = False, e
    check("bench --duration 0.3: runs for about that long", rc == 0 and ok, f"{out}\n{err}")
    check("no progress line when stderr is not a terminal", "\r" not in err, repr(err))
    rc, out, err = vk("bench", relu, "--random-inputs", "--runs", "3", "--warmup", "0")
    check("bench text: every statistic and throughput",
          rc == 0 and all(w in out for w in ["min", "mean", "median", "p90", "p99", "max", "items/s"]), out)
    for bad in [["--duration", "0"], ["--duration", "abc"]]:
        rc, out, err = vk("bench", relu, "--random-inputs", *bad)
        check(f"bench {' '.join(bad)}: usage error", rc == 2, err)
    png = path("bench.png")
    env = dict(os.environ, VKINFER_PYTHON="/usr/bin/python3")
    p = subprocess.run([VKINFER, "bench", relu, "--random-inputs", "--runs", "5", "--warmup", "0", "--plot", png],
                       capture_output=True, text=True, env=env, timeout=300)
    # whether the interpreter vkinfer runs (VKINFER_PYTHON), not this one, has matplotlib
    have_mpl = subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"], capture_output=True).returncode == 0
    if have_mpl:
        with open(png, "rb") if os.path.exists(png) else open(os.devnull, "rb") as f:
            magic = f.read(8)
        check("bench --plot FILE.png draws a PNG (matplotlib)", p.returncode == 0 and magic == b"\x89PNG\r\n\x1a\n",
              p.stdout + p.stderr)
    else:
        check("bench --plot without matplotlib: exit 1 and says how to install it",
              p.returncode == 1 and "python3-matplotlib" in p.stderr, p.stderr)
    env = dict(os.environ, VKINFER_PYTHON=path("no-such-python"))
    p = subprocess.run([VKINFER, "bench", relu, "--random-inputs", "--runs", "2", "--warmup", "0", "--plot",
                        path("never.png")], capture_output=True, text=True, env=env, timeout=300)
    check("bench --plot with no python: exit 1 and a clear message", p.returncode == 1 and "--plot needs" in p.stderr,
          p.stderr)


if __name__ == "__main__":
    sys.exit(main())
