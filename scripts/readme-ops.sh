#!/bin/sh
# Keeps README.md's op table equal to `vkinfer ops --markdown`.
#   scripts/readme-ops.sh VKINFER          rewrite the table in README.md
#   scripts/readme-ops.sh VKINFER --check  exit 1 if README.md's table differs (a ctest case)
set -e
vkinfer=$1
readme=$(dirname "$0")/../README.md
table=$(mktemp)
"$vkinfer" ops --markdown > "$table"
new=$(mktemp)
awk -v table="$table" '
    /<!-- ops:begin -->/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
    /<!-- ops:end -->/ { skip = 0 }
    !skip { print }' "$readme" > "$new"
rm -f "$table"
if [ "${2:-}" = "--check" ]; then
    if ! cmp -s "$readme" "$new"; then
        echo "README.md's op table differs from 'vkinfer ops --markdown'; run scripts/readme-ops.sh $vkinfer"
        diff "$readme" "$new" | head -20
        rm -f "$new"
        exit 1
    fi
    rm -f "$new"
    echo "README.md's op table matches the registry"
    exit 0
fi
mv "$new" "$readme"
