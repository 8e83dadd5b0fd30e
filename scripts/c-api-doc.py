#!/usr/bin/python3
"""Writes docs/c-api.md from include/vkinfer.h: its sections, each declaration with the comment
above it. `--check` exits 1 when docs/c-api.md differs (a ctest), so the reference follows the
header.  usage: scripts/c-api-doc.py [--check]
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def render(header):
    text = open(header).read()
    body = text[text.index('extern "C" {') + len('extern "C" {'):text.rindex("#ifdef __cplusplus")]
    intro = re.match(r"/\*(.*?)\*/", text, re.S).group(1)
    intro = "\n".join(line.strip().lstrip("*").strip() if not line.strip().startswith("* ") else line.strip()[2:]
                      for line in intro.strip().splitlines())
    out = ["# vkinfer C API reference", "",
           "Generated from `include/vkinfer.h` by `scripts/c-api-doc.py` (a test checks it is current); the",
           "header is the source. Link with `pkg-config --cflags --libs vkinfer` or CMake's",
           "`find_package(vkinfer)` + `vkinfer::vkinfer` (README.md has a complete example).", "", "```c"]
    out += intro.splitlines()
    out += ["```", ""]
    # split into blocks at blank lines; a `/* ---- Title ---- */` line starts a section
    for block in re.split(r"\n\s*\n", body):
        block = block.strip("\n")
        if not block.strip():
            continue
        m = re.match(r"/\* -+ (.*?) -+ \*/\s*(.*)", block, re.S)
        if m:
            out += [f"## {m.group(1).strip()}", ""]
            block = m.group(2).strip("\n")
            if not block:
                continue
        if block.startswith(("#if", "#endif")) or block.startswith("/* Marks the library"):
            continue  # the export macro's plumbing
        out += ["```c", block.replace("VKI_API ", ""), "```", ""]
    return "\n".join(out).rstrip() + "\n"


def main():
    doc = render(os.path.join(ROOT, "include", "vkinfer.h"))
    path = os.path.join(ROOT, "docs", "c-api.md")
    if "--check" in sys.argv:
        current = open(path).read() if os.path.exists(path) else ""
        if current != doc:
            print("docs/c-api.md is not include/vkinfer.h's: run scripts/c-api-doc.py")
            return 1
        print("docs/c-api.md matches include/vkinfer.h")
        return 0
    open(path, "w").write(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
