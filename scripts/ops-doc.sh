#!/bin/sh
# Keeps docs/ops.md's op table equal to `vkinfer ops --markdown`.
#   scripts/ops-doc.sh VKINFER          rewrite the table in docs/ops.md
#   scripts/ops-doc.sh VKINFER --check  exit 1 if docs/ops.md's table differs (a ctest case)
set -e
vkinfer=$1
page=$(dirname "$0")/../docs/ops.md
if ! grep -q '<!-- ops:begin -->' "$page" || ! grep -q '<!-- ops:end -->' "$page"; then
    echo "docs/ops.md has no <!-- ops:begin --> ... <!-- ops:end --> block for the table"
    exit 1
fi
table=$(mktemp)
"$vkinfer" ops --markdown > "$table"
new=$(mktemp)
awk -v table="$table" '
    /<!-- ops:begin -->/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
    /<!-- ops:end -->/ { skip = 0 }
    !skip { print }' "$page" > "$new"
rm -f "$table"
if [ "${2:-}" = "--check" ]; then
    if ! cmp -s "$page" "$new"; then
        echo "docs/ops.md's op table differs from 'vkinfer ops --markdown'; run scripts/ops-doc.sh $vkinfer"
        diff "$page" "$new" | head -20
        rm -f "$new"
        exit 1
    fi
    rm -f "$new"
    echo "docs/ops.md's op table matches the registry"
    exit 0
fi
mv "$new" "$page"
