#!/usr/bin/env bash
# libhcq.so.0 keeps the layouts it shipped with (include/hcq/base.h, ABI):
# against every release's layout in scripts/abi/hcq-VERSION.ARCH.layout,
#   - each struct of that release still exists, its fields at the same
#     offsets with the same types and names, its alignment the same, and
#     any new field past the release's sizeof (grown at the end only);
#   - a struct that grew is not frozen (scripts/abi/structs), and every
#     function that passes it is exported at a newer default version and
#     still at HCQ_VERSION, the one programs of that release bind;
# every struct of the headers has its line in scripts/abi/structs; every
# function of a release (scripts/abi/hcq-VERSION.symbols) is still
# exported at its node, which holds no later function; and a program that
# binds the old version of a function runs.
#   scripts/check-abi.sh INCLUDE_DIR LIBHCQ_SO     (run by check-install.sh)
set -eu
inc=$1 lib=$2
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "check-abi: $*"; exit 1; }
arch=$(uname -m)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
"$here/abi/layout.sh" "$inc" >"$tmp/now" || rc=$?
if [ "$rc" -eq 3 ]; then echo "check-abi: skipped: no clang to lay the structs out"; exit 0; fi
[ "$rc" -eq 0 ] || fail "scripts/abi/layout.sh failed"
table=$here/abi/structs
grep -v '^#' "$table" | awk 'NF' >"$tmp/table"

# every struct is classified
for s in $(awk '/sizeof=/ { print $1 }' "$tmp/now"); do
    grep -q "^$s " "$tmp/table" || fail "$s has no line in scripts/abi/structs (say whether it is owned, caller or frozen)"
done

readelf --dyn-syms -W "$lib" | awk '$7 != "UND" && NR > 3 { print $8 }' >"$tmp/syms"
refs=$(ls "$here"/abi/hcq-*."$arch".layout 2>/dev/null || true)
[ -n "$refs" ] || { echo "check-abi: skipped: no release layouts for $arch"; exit 0; }
grown=0
for ref in $refs; do
    ver=$(basename "$ref" ".$arch.layout")
    ver=${ver#hcq-}
    grep -v '^#' "$ref" >"$tmp/ref"
    for s in $(awk '/sizeof=/ { print $1 }' "$tmp/ref"); do
        grep -q "^$s sizeof=" "$tmp/now" || fail "$s of $ver is gone"
        awk -v s="$s" '$1 == s && $2 !~ /sizeof=/' "$tmp/ref" >"$tmp/rf"
        awk -v s="$s" '$1 == s && $2 !~ /sizeof=/' "$tmp/now" >"$tmp/nf"
        while IFS= read -r line; do
            grep -qxF -- "$line" "$tmp/nf" ||
                fail "$s changed since $ver: '${line#"$s "}' is not there any more (fields stay where they were; new ones go at the end)"
        done <"$tmp/rf"
        read -r rsize ralign < <(awk -v s="$s" '$1 == s && $2 ~ /sizeof=/ { sub(/sizeof=/, "", $2); sub(/align=/, "", $3); print $2, $3 }' "$tmp/ref")
        read -r nsize nalign < <(awk -v s="$s" '$1 == s && $2 ~ /sizeof=/ { sub(/sizeof=/, "", $2); sub(/align=/, "", $3); print $2, $3 }' "$tmp/now")
        [ "$nalign" = "$ralign" ] || fail "$s's alignment changed since $ver ($ralign -> $nalign)"
        [ "$nsize" -ge "$rsize" ] || fail "$s shrank since $ver ($rsize -> $nsize bytes)"
        while IFS= read -r line; do
            grep -qxF -- "$line" "$tmp/rf" && continue
            off=$(awk '{ print $2 }' <<<"$line")
            [ "$off" -ge "$rsize" ] || fail "$s: '${line#"$s "}' was inserted at offset $off, inside $ver's $rsize bytes: add fields at the end"
        done <"$tmp/nf"
        [ "$nsize" -gt "$rsize" ] || continue
        grown=$((grown + 1))
        read -r _ kind fns < <(grep "^$s " "$tmp/table")
        [ "$kind" != frozen ] || fail "$s is frozen (scripts/abi/structs) but grew since $ver ($rsize -> $nsize bytes)"
        old=$([ "$kind" = owned ] && echo "the same function" || echo "a wrapper that reads or writes only $ver's $rsize bytes")
        for f in $fns; do
            grep -q "^$f@@HCQ_" "$tmp/syms" && ! grep -qxF "$f@@HCQ_$ver" "$tmp/syms" ||
                fail "$s grew since $ver ($rsize -> $nsize bytes): $f needs a newer default version than HCQ_$ver" \
                     "(scripts/libhcq.map, BASE_SYMVER) and, at HCQ_$ver, $old (BASE_SYMVER_OLD)"
            grep -qxF "$f@HCQ_$ver" "$tmp/syms" ||
                fail "$s grew since $ver, but $f is not exported at HCQ_$ver any more: programs of $ver bind it there" \
                     "($old, BASE_SYMVER_OLD)"
        done
    done
done

# the functions: each release's are still exported at its node, and a node
# holds only its release's (a function added later goes in a newer node,
# scripts/libhcq.map: an older library then refuses a program that uses it
# by the version it lacks, not by a missing name found at the first call)
for list in "$here"/abi/hcq-*.symbols; do
    [ -e "$list" ] || continue
    ver=$(basename "$list" .symbols)
    ver=${ver#hcq-}
    grep -v '^#' "$list" >"$tmp/rel"
    while read -r f; do
        grep -qE "^$f@@?HCQ_$ver\$" "$tmp/syms" || fail "$f of $ver is not exported at HCQ_$ver any more"
    done <"$tmp/rel"
    sed -n "s/@@HCQ_$ver\$//p" "$tmp/syms" | while read -r f; do
        grep -qxF "$f" "$tmp/rel" ||
            fail "$f is exported at HCQ_$ver but $ver did not have it: put it in a newer node (scripts/libhcq.map)"
    done
done

# a program built against 0.1's hcq_device_get_props (bound at HCQ_0.1)
# loads and reads the fields it knows
cat >"$tmp/old.c" <<'EOF2'
#include <hcq/hcq.h>
#include <stdio.h>
#include <string.h>
__asm__(".symver hcq_device_get_props, hcq_device_get_props@HCQ_0.1");
int main(void)
{
    hcq_device *d = hcq_device_open("CPU");
    const hcq_device_props *p = d ? hcq_device_get_props(d) : NULL;
    if (!p || strcmp(p->id, "CPU") || !p->max_local_bytes) return 1;
    printf("%s\n", p->id);
    return hcq_device_close(d) != HCQ_OK;
}
EOF2
L=$(dirname "$lib")
# shellcheck disable=SC2086 # SAN holds flags (make asan's, as for the README example)
${CC:-cc} -std=c11 ${SAN:-} -I"$inc" "$tmp/old.c" -L"$L" -l:"$(basename "$lib")" -Wl,-rpath,"$L" -o "$tmp/old" ||
    fail "a program binding hcq_device_get_props@HCQ_0.1 does not link"
readelf -V "$tmp/old" | grep -q 'Name: HCQ_0.1' || fail "the old program does not bind HCQ_0.1"
[ "$(HCQ_DEVICE=CPU "$tmp/old")" = CPU ] || fail "a program bound to hcq_device_get_props@HCQ_0.1 does not run"
echo "check-abi: the layouts of $(echo "$refs" | wc -w) release(s) kept ($grown struct(s) grew at the end, their functions versioned); a 0.1 binding runs"
