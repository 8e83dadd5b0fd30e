#!/usr/bin/python3
"""Draws the dependencies between the folders of src/ and fails if they form a circle.

A folder depends on another when one of its files includes a header of the other
(`#include "../plan/plan.h"`), or when one of its object files uses a symbol that an object file
of the other defines (`nm`: a function called, a table read). The layers must stay one-way:
util, vk, graph, onnx, plan, ops, runtime, each using only folders below it.

usage: /usr/bin/python3 scripts/layers.py SOURCE_DIR OBJECTS... [--dot] [--files]
  OBJECTS: the library's object files (each argument may hold several separated by ';', as
           $<TARGET_OBJECTS:vkinfer_objects> does), or the folder that holds them
           (build/CMakeFiles/vkinfer_objects.dir)
  --dot:   print the folder graph as Graphviz instead of text
  --files: also list the circles between source files that call each other (by symbols; not a
           failure: files of one folder may)
"""
import os
import re
import subprocess
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path, src):
    """The folder of src/ that path lies in, or None."""
    rel = os.path.relpath(os.path.realpath(path), src)
    parts = rel.split(os.sep)
    return parts[0] if len(parts) > 1 and parts[0] != ".." else None


def include_edges(src, edges):
    for folder in sorted(os.listdir(src)):
        base = os.path.join(src, folder)
        if not os.path.isdir(base):
            continue
        for name in sorted(os.listdir(base)):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(base, name)
            for inc in INCLUDE_RE.findall(open(path, encoding="utf-8").read()):
                # the file's own folder first, then src/ (the library's include path)
                for root in (base, src):
                    target = os.path.join(root, inc)
                    if os.path.exists(target):
                        break
                else:
                    continue
                other = folder_of(target, src)
                if other and other != folder:
                    edges.setdefault((folder, other), set()).add("%s includes %s" % (name, inc))


def object_files(args):
    found = []
    for arg in args:
        for path in (p for p in arg.split(";") if p):
            if os.path.isdir(path):
                found += sorted(os.path.join(d, f) for d, _, files in os.walk(path) for f in files if f.endswith(".o"))
            else:
                found.append(path)
    return found


def symbol_edges(objects, edges, file_edges):
    """Edges from each folder's undefined symbols to the folder that defines them (and the same
    between object files, in file_edges)."""
    defined, used = {}, []
    for obj in object_files(objects):
        m = re.search(r"[/\\]src[/\\]([^/\\]+)[/\\]([^/\\]+)\.o$", obj)
        if not m:
            continue  # the generated shader table
        folder, name = m.group(1), m.group(1) + "/" + m.group(2)
        out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            fields = line.split()
            if len(fields) < 2:
                continue
            sym, kind = fields[0], fields[1]
            if kind in ("U", "w", "v"):
                used.append((name, sym))
            elif kind.isupper():
                defined[sym] = name
    if not defined:
        sys.exit("layers: no object files of src/ in %s (build the library first)" % objects)
    for name, sym in used:
        other = defined.get(sym)
        if not other or other == name:
            continue
        file_edges.setdefault((name, other), set()).add(sym)
        a, b = name.split("/")[0], other.split("/")[0]
        if a != b:
            edges.setdefault((a, b), set()).add("%s uses %s" % (name.split("/")[1], sym))


def cycles(nodes, edges):
    """Strongly connected components of more than one folder (Tarjan)."""
    succ = {n: sorted(b for (a, b) in edges if a == n) for n in nodes}
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for n in nodes:
        if n not in index:
            visit(n)
    return out


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) < 2:
        sys.exit(__doc__)
    src = os.path.join(os.path.realpath(args[0]), "src")
    edges, file_edges = {}, {}
    include_edges(src, edges)
    symbol_edges(args[1:], edges, file_edges)
    nodes = sorted({n for e in edges for n in e} | {d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))})
    circles = cycles(nodes, edges)
    if "--dot" in argv:
        print("digraph src {")
        for (a, b) in sorted(edges):
            print('    "%s" -> "%s" [label=%d];' % (a, b, len(edges[(a, b)])))
        print("}")
    else:
        for n in nodes:
            print("%-8s -> %s" % (n, " ".join(sorted(b for (a, b) in edges if a == n)) or "(nothing)"))
    if "--files" in argv:
        files = sorted({n for e in file_edges for n in e})
        for comp in cycles(files, file_edges):
            print("files calling each other in a circle: %s" % " ".join(comp))
    if not circles:
        print("layers: no circle between the folders of src/")
        return 0
    for comp in circles:
        print("\nlayers: circle between %s:" % ", ".join(comp))
        for (a, b) in sorted(edges):
            if a in comp and b in comp:
                why = sorted(edges[(a, b)])
                print("  %s -> %s: %s%s" % (a, b, "; ".join(why[:8]), " (+%d more)" % (len(why) - 8) if len(why) > 8 else ""))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
