#!/usr/bin/env bash
# `make install` and `make uninstall` into a staging DESTDIR, as a packager
# runs them (PREFIX=/usr, the multiarch library directory where the
# compiler names one): every file and link in its place, libhcq.so.0.N.M
# with its soname and versioned symbols and the struct layouts of every
# release (scripts/check-abi.sh), hcq.pc usable by pkg-config, the
# man page and the bash completion well formed and in step with the
# commands, the README example built against the installed tree, and
# nothing of ours left after uninstall. Uses what $B holds (no build).
set -eu
B=${1:-build}
fail() { echo "check-install: $*"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
stage=$dir/stage
vars=(B="$B" DESTDIR="$stage" PREFIX=/usr)
if [ -n "$(${CC:-cc} -print-multiarch 2>/dev/null)" ]; then vars+=(MULTIARCH=1); fi
# the parent make's settings (-j, the jobserver) are not this one's
run_make() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s "${vars[@]}" "$@"; }
run_make install-files >"$dir/install.log" 2>&1 || { cat "$dir/install.log"; fail "make install-files failed"; }

version=$(sed -n 's/.*HCQ_VERSION_STRING "\(.*\)"/\1/p' include/hcq/base.h)
major=${version%%.*}
libdir=$(cd "$stage/usr" && dirname "$(find . -name libhcq.a)")
libdir=${libdir#./}
case "$libdir" in lib|lib/*-*) ;; *) fail "libhcq.a went to /usr/$libdir" ;; esac
L=$stage/usr/$libdir

# the files, the links and nothing else
expect="usr/bin/hcq
usr/$libdir/libhcq.a
usr/$libdir/libhcq.so
usr/$libdir/libhcq.so.$major
usr/$libdir/libhcq.so.$version
usr/$libdir/libhcqmock.so
usr/$libdir/libhcqtrace.so
usr/$libdir/pkgconfig/hcq.pc
usr/share/bash-completion/completions/hcq"
for h in include/hcq/*.h; do expect+=$'\n'"usr/include/hcq/${h##*/}"; done
cmds=$(scripts/hcq-man.sh "$B/hcq" --commands)
[ -n "$cmds" ] || fail "no commands in hcq --help"
expect+=$'\n'"usr/share/man/man1/hcq.1"
for c in $cmds; do
    [ -f "$stage/usr/share/man/man1/hcq-$c.1" ] || fail "no man page hcq-$c.1 installed: add $c to HCQ_COMMANDS in the Makefile"
    expect+=$'\n'"usr/share/man/man1/hcq-$c.1"
done
got=$(cd "$stage" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort)
[ "$got" = "$(sort <<<"$expect")" ] || { diff <(sort <<<"$expect") <(echo "$got") || true; fail "installed files differ from the list above"; }
[ "$(readlink "$L/libhcq.so")" = "libhcq.so.$major" ] || fail "libhcq.so does not link to libhcq.so.$major"
[ "$(readlink "$L/libhcq.so.$major")" = "libhcq.so.$version" ] || fail "libhcq.so.$major does not link to libhcq.so.$version"
[ -f "$L/libhcq.so.$version" ] && [ ! -L "$L/libhcq.so.$version" ] || fail "libhcq.so.$version is not a file"

# soname and symbol versions: every symbol libhcq.so defines is hcq_* under a
# version node of ours
if command -v readelf >/dev/null; then
    readelf -d "$L/libhcq.so.$version" | grep -q "Library soname: \[libhcq.so.$major\]" || fail "soname is not libhcq.so.$major"
    readelf --dyn-syms -W "$L/libhcq.so.$version" | awk '$7 != "UND" && $8 != "" && NR > 3 {print $8}' > "$dir/syms"
    # @@: the version programs link against now; @: an older one kept for
    # programs built against an older header (scripts/check-abi.sh)
    bad=$(grep -vE '^(hcq_[A-Za-z0-9_]+@@?HCQ_[0-9.]+|HCQ_[0-9.]+)$' "$dir/syms" || true)
    [ -z "$bad" ] || fail "exported without a version node of ours: $(head -5 <<<"$bad" | tr '\n' ' ')"
    grep -q '^hcq_version@@HCQ_' "$dir/syms" || fail "hcq_version is not exported"
fi

# the installed headers keep every release's struct layouts, and what
# grew is versioned (include/hcq/base.h, ABI)
if command -v readelf >/dev/null; then
    scripts/check-abi.sh "$stage/usr/include" "$L/libhcq.so.$version" || fail "the ABI check failed"
fi

# hcq.pc as pkg-config reads it, and the README example built with what it
# says, against the installed library only, run from there
awk '/^```c$/{on=1; next} /^```$/{if (on) exit} on' README.md > "$dir/example.c"
if command -v pkg-config >/dev/null; then
    export PKG_CONFIG_LIBDIR="$L/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage"
    [ "$(pkg-config --modversion hcq)" = "$version" ] || fail "pkg-config --modversion hcq is not $version"
    cflags=$(echo $(pkg-config --cflags hcq)); libs=$(echo $(pkg-config --libs hcq))
else
    cflags="-I$stage/usr/include"; libs="-L$L -lhcq"
fi
[ "$cflags" = "-I$stage/usr/include" ] || fail "pkg-config --cflags: $cflags"
# shellcheck disable=SC2086 # the flags are words
${CC:-cc} -std=c11 -Wall -Wextra -Werror ${SAN:-} $cflags "$dir/example.c" $libs -Wl,-rpath,"$L" -o "$dir/example" ||
    fail "the README example does not build against the installed tree"
if command -v readelf >/dev/null; then
    readelf -d "$dir/example" | grep -q "NEEDED.*\[libhcq.so.$major\]" || fail "the example does not need libhcq.so.$major"
    readelf -V "$dir/example" | grep -q 'Name: HCQ_' || fail "the example binds no HCQ_ symbol version"
fi
out=$(HCQ_DEVICE=CPU "$dir/example")
[ "$out" = "2 3 4 5" ] || fail "the example against the installed library printed '$out'"
ldd "$dir/example" 2>/dev/null | grep -q "libhcq.so.$major => $L/" || fail "the example did not load the installed library"

# the installed command, its version and revision
v=$("$stage/usr/bin/hcq" --version) || fail "hcq --version failed"
case "$v" in "hcq $version"*) ;; *) fail "hcq --version says '$v'" ;; esac

# the man pages: well formed; hcq(1) describes every command of `hcq
# --help` and names its page, hcq-COMMAND(1)
M=$stage/usr/share/man/man1
if command -v groff >/dev/null; then
    for m in "$M"/*.1; do
        warn=$(groff -man -Tutf8 -ww -z "$m" 2>&1) || fail "groff ${m##*/}: $warn"
        [ -z "$warn" ] || fail "groff warns about ${m##*/}: $warn"
    done
fi
for c in $cmds; do
    grep -q "^\.BR $c\( \|$\)" "$M/hcq.1" || fail "hcq(1) does not describe '$c'"
    grep -qxF ".BR hcq\\-$c (1)," "$M/hcq.1" || grep -qxF ".BR hcq\\-$c (1)" "$M/hcq.1" || fail "hcq(1) does not name hcq-$c(1)"
    grep -q "^hcq\\\\-$c \\\\- " "$M/hcq-$c.1" || fail "hcq-$c.1 has no NAME line"
done

# the completion: parses, registers, completes commands, the targets `hcq
# compile` knows and the formats `hcq decode` knows
comp=$stage/usr/share/bash-completion/completions/hcq
bash -n "$comp" || fail "the completion does not parse"
complete_words() { # the words of a command line, the last being completed
    PATH="$stage/usr/bin:$PATH" bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _hcq; echo "${COMPREPLY[*]}"' _ "$comp" "$@"
}
[ "$(complete_words hcq "")" != "" ] || fail "completion offers no commands"
for c in $cmds; do
    complete_words hcq "$c" | grep -qw -- "$c" || fail "completion does not offer '$c'"
done
targets=$("$stage/usr/bin/hcq" compile --target none 2>&1 | sed -n 's/.*this build knows: \([^(]*\).*/\1/p' | tr -d ',')
[ -n "$targets" ] || fail "hcq compile named no targets"
[ "$(tr ' ' '\n' <<<"$targets" | grep . | sort)" = "$(complete_words hcq compile --target "" | tr ' ' '\n' | sort)" ] ||
    fail "completion's targets are not hcq compile's: $targets"
formats=$("$stage/usr/bin/hcq" decode --help | sed -n 's/.*Formats known: \(.*\)\./\1/p' | tr -d ',')
[ -n "$formats" ] || fail "hcq decode --help names no formats"
[ "$(tr ' ' '\n' <<<"$formats" | grep . | sort)" = "$(complete_words hcq decode --format "" | tr ' ' '\n' | sort)" ] ||
    fail "completion's formats are not hcq decode's: $formats"

# uninstall removes all of it
run_make uninstall >"$dir/uninstall.log" 2>&1 || { cat "$dir/uninstall.log"; fail "make uninstall failed"; }
left=$(cd "$stage" && find . \( -type f -o -type l \) | sed 's|^\./||')
[ -z "$left" ] || fail "uninstall left: $left"
[ ! -d "$stage/usr/include/hcq" ] || fail "uninstall left include/hcq"
echo "check-install: make install (PREFIX=/usr, LIBDIR /usr/$libdir) puts $(wc -l <<<"$expect") files; libhcq.so.$version, symbols at HCQ_$major.*; pkg-config, man pages, completion and the README example against them work; make uninstall removes them"
