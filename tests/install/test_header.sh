#!/bin/sh
# The public header compiles alone, with no warning, as C99, C11 and C++ (gcc, g++, and clang
# and clang++ when installed): -Wall -Wextra -pedantic -Werror.
# usage: tests/install/test_header.sh SOURCE_DIR
set -e
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include "vkinfer.h"\nint main(void) { vki_status s = VKI_OK; return (int)s + (int)vki_dtype_size(VKI_DTYPE_FLOAT) * 0; }\n' > "$tmp/h.c"
cp "$tmp/h.c" "$tmp/h.cpp"
fails=0
try() {
    if "$@" -Wall -Wextra -pedantic -Werror -fsyntax-only -I "$src/include" 2>"$tmp/err"; then
        echo "PASS $*"
    else
        echo "FAIL $*"; sed 's/^/    /' "$tmp/err"; fails=$((fails + 1))
    fi
}
for cc in gcc clang; do
    command -v $cc >/dev/null || { echo "FAIL $cc not installed (make test installs it)"; fails=$((fails + 1)); continue; }
    for std in c99 c11 c17; do try $cc -std=$std "$tmp/h.c"; done
done
for cxx in g++ clang++; do
    command -v $cxx >/dev/null || { echo "FAIL $cxx not installed (make test installs it)"; fails=$((fails + 1)); continue; }
    for std in c++98 c++11 c++17 c++20; do try $cxx -std=$std "$tmp/h.cpp"; done
done
[ $fails -eq 0 ] && echo "all passed" || { echo "$fails failed"; exit 1; }
