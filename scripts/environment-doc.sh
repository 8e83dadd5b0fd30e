#!/bin/sh
# Keeps docs/environment.md's tables of options equal to `vkinfer options --markdown`, which
# prints the library's table of options (src/util/options.c).
#   scripts/environment-doc.sh VKINFER          rewrite the tables in docs/environment.md
#   scripts/environment-doc.sh VKINFER --check  exit 1 if they differ (a ctest case)
set -e
vkinfer=$1
doc=$(dirname "$0")/../docs/environment.md
table=$(mktemp)
"$vkinfer" options --markdown > "$table"
new=$(mktemp)
awk -v table="$table" '
    /<!-- options:begin -->/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
    /<!-- options:end -->/ { skip = 0 }
    !skip { print }' "$doc" > "$new"
rm -f "$table"
if [ "${2:-}" = "--check" ]; then
    if ! cmp -s "$doc" "$new"; then
        echo "docs/environment.md's options differ from 'vkinfer options --markdown'; run scripts/environment-doc.sh $vkinfer"
        diff "$doc" "$new" | head -20
        rm -f "$new"
        exit 1
    fi
    rm -f "$new"
    echo "docs/environment.md's options match the library's table"
    exit 0
fi
mv "$new" "$doc"
