#!/usr/bin/env bash
# Prints the layout of every public struct of the headers in INCLUDE_DIR
# (default include/), as clang lays them out for this machine's ABI, one
# line a field and one a struct:
#   STRUCT OFFSET TYPE NAME          (top-level fields, in order)
#   STRUCT sizeof=N align=A
# scripts/check-install.sh compares it with the layouts each release
# shipped (scripts/abi/hcq-VERSION.layout, made by this script from that
# release's headers). Exits 3 when no clang is found (the caller skips).
#   scripts/abi/layout.sh [INCLUDE_DIR]
set -eu
inc=${1:-include}
clang=${HCQ_CLANG:-}
[ -n "$clang" ] && command -v "$clang" >/dev/null || clang=$(command -v clang-22 || command -v clang || true)
[ -n "$clang" ] || { echo "abi/layout.sh: no clang to lay the structs out" >&2; exit 3; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# clang dumps a record only where it is used: name each one in a sizeof
{
    echo '#include <hcq/hcq.h>'
    grep -ho 'typedef struct hcq_[a-z0-9_]* {' "$inc"/hcq/*.h | awk '{ print "typedef char force_" $3 "[sizeof(struct " $3 ")];" }'
} > "$tmp/l.c"
"$clang" -I"$inc" -fsyntax-only -Xclang -fdump-record-layouts "$tmp/l.c" | awk '
    /^\*\*\* Dumping AST Record Layout/ { getline; split($0, h, "|"); name = h[2]; sub(/^ *struct /, "", name); next }
    name == "" { next }
    /\[sizeof=/ { s = $0; sub(/.*\[/, "", s); sub(/\].*/, "", s); gsub(/, /, " ", s); print name, s; name = ""; next }
    {
        split($0, f, "|"); off = f[1]; gsub(/ /, "", off); rest = f[2]
        if (rest !~ /^   [^ ]/) next               # a nested member: its struct has its own lines
        sub(/^   /, "", rest)
        print name, off, rest
    }' | awk '!seen[$0]++'
