#!/usr/bin/python3
"""`cmake --install` into a temporary prefix, then build README.md's C example against the
installed copy four ways (pkg-config shared/static, CMake vkinfer::vkinfer/vkinfer::vkinfer_static)
and run each; check the shared library's SONAME and that it exports exactly the header's
functions.

usage: /usr/bin/python3 tests/install/test_install.py BUILD_DIR SOURCE_DIR
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np  # noqa: F401 - onnx needs it
import onnx
from onnx import TensorProto, helper

results = {"passed": 0, "failed": 0}


def check(name, ok, detail=""):
    results["passed" if ok else "failed"] += 1
    print(("PASS " if ok else "FAIL ") + name + ("" if ok or not detail else "\n    " + str(detail).replace("\n", "\n    ")))
    return ok


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return p.returncode, p.stdout + p.stderr


def readme_c_example(src):
    text = open(os.path.join(src, "README.md")).read()
    m = re.search(r"<!-- c-example:begin -->\s*```c\n(.*?)```", text, re.S)
    return m.group(1) if m else None


def header_functions(src):
    text = re.sub(r"/\*.*?\*/", "", open(os.path.join(src, "include", "vkinfer.h")).read(), flags=re.S)
    return set(re.findall(r"\b(vki_\w+)\s*\(", text))


def main():
    build, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tmp = tempfile.mkdtemp(prefix="vkinfer-install-")
    try:
        run_all(build, src, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


def run_all(build, src, tmp):
    prefix = os.path.join(tmp, "prefix")
    rc, out = sh(["cmake", "--install", build, "--prefix", prefix])
    if not check("cmake --install", rc == 0, out):
        return
    pcs = glob.glob(os.path.join(prefix, "**", "pkgconfig", "vkinfer.pc"), recursive=True)
    if not check("vkinfer.pc installed", len(pcs) == 1, pcs):
        return
    libdir = os.path.dirname(os.path.dirname(pcs[0]))
    for rel in ["include/vkinfer.h", "bin/vkinfer"]:
        check(f"{rel} installed", os.path.exists(os.path.join(prefix, rel)))
    for name in ["libvkinfer.a", "libvkinfer.so", "libvkinfer.so.0", "cmake/vkinfer/vkinferConfig.cmake",
                 "cmake/vkinfer/vkinferConfigVersion.cmake", "cmake/vkinfer/vkinferTargets.cmake"]:
        check(f"{name} installed", os.path.exists(os.path.join(libdir, name)))
    rc, out = sh([os.path.join(prefix, "bin", "vkinfer"), "--version"])
    check("installed vkinfer --version", rc == 0 and out.startswith("vkinfer "), out)

    so = os.path.join(libdir, "libvkinfer.so")
    rc, out = sh(["readelf", "-d", so])
    check("SONAME libvkinfer.so.0", "Library soname: [libvkinfer.so.0]" in out, out)
    rc, out = sh(["nm", "-D", "--defined-only", so])
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    want = header_functions(src)
    check("the shared library exports exactly the header's functions", exported == want,
          f"not declared: {sorted(exported - want)}\nnot exported: {sorted(want - exported)}")

    # a model for the README example: input 'input' [1,3,224,224] -> mean per channel (+1)
    g = helper.make_graph([helper.make_node("GlobalAveragePool", ["input"], ["p"]),
                           helper.make_node("Add", ["p", "one"], ["logits"])], "gap",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 3, 1, 1])],
                          [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx_path = os.path.join(tmp, "model.onnx")
    onnx.save(model, onnx_path)

    code = readme_c_example(src)
    if not check("README.md has a C example between <!-- c-example:begin --> and a ``` block", code is not None):
        return
    c = os.path.join(tmp, "hello.c")
    open(c, "w").write(code)
    expect = "logits: 3 values, first 1"

    def build_and_run(name, cmd, static):
        exe = cmd[cmd.index("-o") + 1] if "-o" in cmd else None
        rc, out = sh(cmd, env=dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs_for[static])))
        if not check(f"{name}: builds", rc == 0, " ".join(cmd) + "\n" + out):
            return
        run(name, exe, static)

    def run(name, exe, static):
        rc, needed = sh(["readelf", "-d", exe])
        check(f"{name}: {'no' if static else 'a'} libvkinfer.so dependency", ("libvkinfer.so" in needed) != static,
              needed)
        rc, out = sh([exe, onnx_path])
        check(f"{name}: runs the model", rc == 0 and out.strip() == expect, out)

    # static: a copy of the prefix without the shared library, so -lvkinfer can only be the .a;
    # the link needs no flag beyond pkg-config's (Libs.private carries -lm -ldl)
    static_prefix = os.path.join(tmp, "static-prefix")
    shutil.copytree(prefix, static_prefix, symlinks=True)
    for f in glob.glob(os.path.join(static_prefix, os.path.relpath(libdir, prefix), "libvkinfer.so*")):
        os.remove(f)
    pcs_for = {False: pcs[0], True: os.path.join(static_prefix, os.path.relpath(pcs[0], prefix))}
    flags = sh(["pkg-config", "--cflags", "--libs", "vkinfer"], env=dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0])))[1].split()
    check("pkg-config --cflags --libs vkinfer", any(f.startswith("-I") for f in flags) and "-lvkinfer" in flags, flags)
    exe = os.path.join(tmp, "hello_pc_shared")
    build_and_run("pkg-config, shared", ["cc", c, "-o", exe] + flags + [f"-Wl,-rpath,{libdir}"], False)
    sflags = sh(["pkg-config", "--static", "--cflags", "--libs", "vkinfer"],
                env=dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs_for[True])))[1].split()
    check("pkg-config --static adds -lm", "-lm" in sflags, sflags)
    exe = os.path.join(tmp, "hello_pc_static")
    build_and_run("pkg-config, static", ["cc", c, "-o", exe] + sflags, True)

    # CMake: find_package(vkinfer) in a consumer project
    proj = os.path.join(tmp, "consumer")
    os.mkdir(proj)
    shutil.copy(c, proj)
    open(os.path.join(proj, "CMakeLists.txt"), "w").write(
        "cmake_minimum_required(VERSION 3.20)\nproject(consumer C)\nfind_package(vkinfer 0.1 REQUIRED)\n"
        "add_executable(hello_shared hello.c)\ntarget_link_libraries(hello_shared vkinfer::vkinfer)\n"
        "add_executable(hello_static hello.c)\ntarget_link_libraries(hello_static vkinfer::vkinfer_static)\n")
    rc, out = sh(["cmake", "-S", proj, "-B", os.path.join(proj, "build"), f"-DCMAKE_PREFIX_PATH={prefix}"])
    if check("CMake consumer configures (find_package(vkinfer 0.1))", rc == 0, out):
        rc, out = sh(["cmake", "--build", os.path.join(proj, "build")])
        if check("CMake consumer builds", rc == 0, out):
            run("CMake vkinfer::vkinfer", os.path.join(proj, "build", "hello_shared"), False)
            run("CMake vkinfer::vkinfer_static", os.path.join(proj, "build", "hello_static"), True)


if __name__ == "__main__":
    sys.exit(main())
