#!/usr/bin/python3
"""Checks that the documentation cites only what the tree has: every Markdown link of README.md
and docs/ (file and #anchor), every repository path a reference page names (`src/ops/conv.c`,
`bench/*.py`), and every `docs/<page>.md, "Section"` or `docs/<page>.md, session N` that a source
file or page cites. docs/history/ describes past trees, so its paths are not checked (its links
are).

usage: /usr/bin/python3 tests/docs/check_links.py [SOURCE_DIR]
"""
import glob
import os
import re
import subprocess
import sys

# top-level folders of the tree; a path starting with one of them is a citation to check
TREE_DIRS = (".ci", "bench", "cmake", "docs", "examples", "include", "python", "scripts", "shaders",
             "src", "tests", "tools")
PATH_RE = re.compile(r"(?<![\w./-])((?:%s)/[A-Za-z0-9_./*+-]*[A-Za-z0-9_*/])"
                     % "|".join(re.escape(d) for d in TREE_DIRS))
LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
DOC_SECTION_RE = re.compile(r"(docs/[\w/.-]+\.md)[,:]?\s+(?:section\s+)?\"([^\"]+)\"")
DOC_SESSION_RE = re.compile(r"(docs/[\w/.-]+\.md)[,:]?\s+sessions?\s+(\d+)")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|__", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    found, seen, fenced = set(), {}, False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fenced = not fenced
        if fenced:
            continue
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else "%s-%d" % (base, n))
        for a in re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", line):
            found.add(a)
    return found


def exists(root, rel):
    if "*" in rel:
        return bool(glob.glob(os.path.join(root, rel)))
    return os.path.exists(os.path.join(root, rel))


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True, check=True).stdout
        return [f for f in out.splitlines() if os.path.isfile(os.path.join(root, f))]
    except (OSError, subprocess.CalledProcessError):  # a source tree without git: walk it
        files = []
        for d, subdirs, names in os.walk(root):
            subdirs[:] = [s for s in subdirs if not s.startswith(".git") and not s.startswith("build")]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
        return files


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    files = tracked_files(root)
    pages = sorted(f for f in files if f == "README.md" or (f.startswith("docs/") and f.endswith(".md")))
    problems = []
    anchor_cache = {}

    for page in pages:
        text = open(os.path.join(root, page), encoding="utf-8").read()
        history = page.startswith("docs/history/")
        for lineno, line in enumerate(text.splitlines(), 1):
            where = "%s:%d" % (page, lineno)
            for target in LINK_RE.findall(line):
                if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                rel = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                if rel.startswith(".."):
                    problems.append("%s: link %s leaves the repository" % (where, target))
                    continue
                if not exists(root, rel):
                    problems.append("%s: link %s: no such file" % (where, target))
                    continue
                if anchor and rel.endswith(".md"):
                    if rel not in anchor_cache:
                        anchor_cache[rel] = anchors(os.path.join(root, rel))
                    if anchor not in anchor_cache[rel]:
                        problems.append("%s: link %s: %s has no heading with that anchor" % (where, target, rel))
            if history:
                continue
            for m in PATH_RE.finditer(line):
                rel = m.group(1)
                if "ctest" in line[max(0, m.start() - 8):m.start()]:  # a ctest name (`python/package`)
                    continue
                if not exists(root, rel):
                    problems.append("%s: cites %s, which is not in the tree" % (where, rel))

    # sections and sessions of the docs that any tracked text file cites
    for f in files:
        if not f.endswith((".md", ".c", ".h", ".py", ".sh", ".txt", ".comp", ".glsl", ".cmake")) \
                or f.startswith("docs/history/"):
            continue
        try:
            text = open(os.path.join(root, f), encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        flat = re.sub(r"\s*\n\s*(?:\*|//|#)?\s*", " ", text)  # citations wrap across comment lines
        for doc, section in DOC_SECTION_RE.findall(flat):
            target = os.path.join(root, doc)
            if os.path.exists(target) and section not in re.sub(r"\s+", " ", open(target, encoding="utf-8").read()):
                problems.append('%s: cites %s, "%s", which that page does not contain' % (f, doc, section))
        for doc, number in DOC_SESSION_RE.findall(flat):
            target = os.path.join(root, doc)
            if os.path.exists(target) and not re.search(r"[Ss]essions? (?:\d+ and )?%s\b" % number,
                                                        open(target, encoding="utf-8").read()):
                problems.append("%s: cites %s, session %s, which that page does not describe" % (f, doc, number))
        if f not in pages:  # pages were checked above; other files only for the docs they name
            for rel in re.findall(r"(?<![\w./-])(docs/[\w/.-]*\w)", text):
                if not exists(root, rel):
                    problems.append("%s: cites %s, which is not in the tree" % (f, rel))

    for p in problems:
        print("FAIL " + p)
    print("%d pages checked, %d problems" % (len(pages), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
