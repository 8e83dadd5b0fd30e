#!/usr/bin/env python3
"""Rewrites tests/conformance/onnx123_passing.txt and onnx123_failing.txt from a ctest run's
results (BUILD/conformance-results and BUILD/conformance-results-reasons):

    cd build && ctest -L onnx123 -j2 ; python3 ../tests/conformance/onnx123_lists.py .

The passing list only grows (a test once on it stays). Every test that did not pass goes on
the failing list with a one-line reason made from the runner's message (an op not
implemented, a dtype vkinfer refuses, ...), so that reasons group."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PASSING = os.path.join(HERE, "onnx123_passing.txt")
FAILING = os.path.join(HERE, "onnx123_failing.txt")

HEADER_PASSING = """# ONNX 1.23 node tests (generated from the onnx 1.23.2 wheel, tests/conformance/onnx123.cmake)
# that must pass. The list only grows. tests/conformance/onnx123_lists.py updates it.
"""
HEADER_FAILING = """# ONNX 1.23 node tests that do not pass yet, one a line: the test, then why (one line).
# They may fail in ctest (shown as skipped); a test on neither list must pass.
# tests/conformance/onnx123_lists.py rewrites this from a ctest run's results.
"""


def reason(why):
    m = re.search(r"use ops vkinfer does not implement: node '[^']*' \(([\w.]+)\)", why)
    if m:
        return f"op {m.group(1)} not implemented"
    m = re.search(r"has dtype (\w+), which vkinfer does not run", why)
    if m:
        return f"dtype {m.group(1)} unsupported (a graph input or output)"
    m = re.search(r"\((\w+), inputs [^)]*\): (\w+) to (\w+) is not supported", why)
    if m:
        return f"{m.group(2)} to {m.group(3)}: dtype unsupported"
    if "is a sequence, map or optional" in why:
        return "sequence, map and optional values unsupported"
    m = re.search(r"\((\w+), inputs [^)]*\): input \d+ \('[^']*'\) must be known at plan time", why)
    if m:
        return f"{m.group(1)}: an input computed at run time sets a shape (data-dependent shapes unsupported)"
    m = re.search(r"\((\w+), inputs [^)]*\): (.*)", why)
    if m:
        return f"{m.group(1)}: {m.group(2)}"
    m = re.match(r"set \d+ output '[^']*': (.*)", why)
    if m:
        return f"wrong result: {m.group(1)}"
    return why


def read_list(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.split()[0] for line in f if line.startswith("test_")]


def read_reasons(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return dict(line.rstrip("\n").split(" ", 1) for line in f if line.startswith("test_"))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    results = os.path.join(build, "conformance-results")
    reasons = results + "-reasons"
    passed, failed = set(), {}
    for f in os.listdir(results):
        if not f.startswith("onnx123."):
            continue
        name, result = open(os.path.join(results, f)).read().split()[:2]
        test = name.split("/", 1)[1]
        if result == "pass":
            passed.add(test)
        else:
            line = open(os.path.join(reasons, f)).read().strip()
            why = line.split(" ", 1)[1] if " " in line else ""
            failed[test] = " ".join(reason(why).split())
    # a wrong result's reason is written by hand (the message names only an element): kept
    old = read_reasons(FAILING)
    for t in failed:
        if failed[t].startswith("wrong result") and t in old:
            failed[t] = old[t]
    keep = set(read_list(PASSING))
    lost = sorted(keep & set(failed))
    if lost:
        print("on onnx123_passing.txt but failed (the list only grows; fix them):", " ".join(lost))
    with open(PASSING, "w") as f:
        f.write(HEADER_PASSING)
        for t in sorted(keep | passed):
            f.write(t + "\n")
    with open(FAILING, "w") as f:
        f.write(HEADER_FAILING)
        for t in sorted(set(failed) - keep):
            f.write(f"{t} {failed[t]}\n")
    print(f"{len(passed)} passed, {len(failed)} failed of {len(passed) + len(failed)}")


if __name__ == "__main__":
    main()
