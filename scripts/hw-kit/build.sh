#!/usr/bin/env bash
# Assembles the hardware kit (`make hw-kit`; docs/hardware.md) in KIT from
# the binaries make linked there:
#   bin/hcq, lib/ (libhcqtrace.so and every shared library the binaries
#   load but glibc's own), tests/ (tests/hw and the API suites), cache/ (the
#   kernel cache for the real GPU targets), run.sh, src/vadd.cu,
#   src/torch_bench.py, MANIFEST,
# then KIT.tar.gz. Usage: build.sh BUILD_DIR KIT_DIR
set -euo pipefail
B=$1 KIT=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$KIT/lib" "$KIT/src"
rm -rf "$KIT/cache" && mkdir -p "$KIT/cache"
cp "$B/libhcqtrace.so" "$KIT/lib/"
cp "$here/run.sh" "$KIT/run.sh" && chmod +x "$KIT/run.sh"
cp "$here/vadd.cu" "$here/torch_bench.py" "$KIT/src/"
mapfile -t elves < <(find "$KIT/bin" "$KIT/tests" "$KIT/lib" -type f \( -perm -u+x -o -name '*.so*' \) | sort)

# glibc (and the loader) come from the server: copying them would pin
# this machine's versions onto its kernel and its nss; the rest travels
glibc_lib() {
    case "$1" in
    linux-vdso.so* | ld-linux*.so* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | \
        libresolv.so.* | libutil.so.* | libanl.so.*) return 0 ;;
    esac
    return 1
}
for f in "${elves[@]}"; do
    while read -r name _ path _; do
        glibc_lib "$name" && continue
        [ "$path" = "not" ] && { echo "hw-kit: $f needs $name, which is not found here" >&2; exit 1; }
        [ -e "$KIT/lib/$name" ] || cp -L "$path" "$KIT/lib/$name"
    done < <(ldd "$f" | awk '$2 == "=>" {print $1, $2, $3, $4}')
done
# every non-glibc library the executables load (theirs and their
# libraries', through the executables' RPATH) now resolves inside the kit
kitlib=$(cd "$KIT/lib" && pwd -P)
for f in "$KIT"/bin/* "$KIT"/tests/*/*; do
    while read -r name path; do
        glibc_lib "$name" || [ "$(dirname "$(realpath "$path")")" = "$kitlib" ] ||
            { echo "hw-kit: $f loads $name from outside the kit ($path)" >&2; exit 1; }
    done < <(ldd "$f" | awk '$2 == "=>" {print $1, $3}')
done

# the kit travels as a tarball under 64 MiB (a lent machine's carry):
# the binaries lose their DWARF (three quarters of each, static libhcq's
# debug info) and keep their symbols, so a crash's backtrace still names
# functions
strip --strip-debug "$KIT"/bin/* "$KIT"/tests/*/*

# HW_KIT_SEED_CACHE=DIR (CI: make test's build/kernel-cache, filled for the
# same mock models): the fill below takes DIR's entries where they serve
# instead of compiling them again, and the kit keeps only those it read.
# Reads show in access times: each seeded entry gets an old one (1970), a
# read makes it new, and the entries still old afterwards go. Where the
# filesystem keeps no access times (noatime) the seed is not used. The
# SASS executor's decoded cubins (.sass, beside the .bin) are seeded too:
# without them the fill on the NV mock ran nvdisasm again for every kernel
# make test had decoded (258 of the fill's 314 s in CI, 2026-11-28).
entries() { find "$KIT/cache" -maxdepth 1 -name '*.bin' | wc -l; }
seeded=0
if [ -n "${HW_KIT_SEED_CACHE:-}" ] && [ -d "$HW_KIT_SEED_CACHE" ]; then
    find "$HW_KIT_SEED_CACHE" -maxdepth 1 \( -name '*.bin' -o -name '*.sass' \) -type f -exec cp -t "$KIT/cache" {} +
    find "$KIT/cache" -maxdepth 1 \( -name '*.bin' -o -name '*.sass' \) -exec touch -a -d @1 {} +
    probe=$(find "$KIT/cache" -maxdepth 1 -name '*.bin' -print -quit)
    if [ -n "$probe" ] && cat "$probe" >/dev/null && [ "$(stat -c %X "$probe")" -gt 1 ]; then
        touch -a -d @1 "$probe"
        seeded=$(entries)
        echo "hw-kit: seeded the cache with $seeded entries of $HW_KIT_SEED_CACHE; the kit keeps those the fill reads"
    else
        echo "hw-kit: $KIT/cache keeps no access times: not seeding it from $HW_KIT_SEED_CACHE"
        find "$KIT/cache" -maxdepth 1 -name '*.bin' -delete
    fi
fi

# the kernel cache: every kernel the API suites and `hcq bench` compile, for
# each real target. `hcq compile` covers the fixed kernels; the tensor
# suites' kernels are lowered per device (its SM count shapes the tiling),
# so the suites run on the mock models of those GPUs, which compile for
# the real targets and fill the cache as they go.
export HCQ_CACHE_DIR
HCQ_CACHE_DIR=$(cd "$KIT/cache" && pwd)
TARGETS=${HW_KIT_TARGETS:-"sm_80 sm_86 sm_89 sm_90 gfx1100 gfx90a gfx942"}
MODELS=${HW_KIT_MODELS:-"nv=A100 nv=RTX3090 nv=RTX4090 nv=H100 nv=H100PCIe amd=gfx1100 amd=gfx90a amd=gfx942"}
# This takes many minutes: a line at least every few seconds says where it
# is (the latest of the lines read, at most one per PROGRESS_S; the first
# and the last always), with the time spent so far.
PROGRESS_S=3
progress() { # prefix
    local line last=-999 held=""
    while IFS= read -r line; do
        held=$line
        if ((SECONDS - last >= PROGRESS_S)); then
            echo "$1$line  [$((SECONDS - start)) s]"
            last=$SECONDS held=""
        fi
    done
    [ -z "$held" ] || echo "$1$held  [$((SECONDS - start)) s]"
}
start=$SECONDS
for t in $TARGETS; do
    timeout 900 "$KIT/bin/hcq" compile --target "$t" | progress "hw-kit: compile $t: "
done
fails=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
nsuites=$(ls "$KIT"/tests/mock/test_api_* | wc -l)
for m in $MODELS; do
    dev=$([ "${m%%=*}" = nv ] && echo NV:0 || echo AMD:0)
    i=0
    for s in "$KIT"/tests/mock/test_api_*; do
        i=$((i + 1))
        # --verbose: a line per test as it ends, for the progress lines
        set +e
        HCQ_MOCK=1 HCQ_MOCK_CONFIG="$m" HCQ_TEST_DEVICE=$dev timeout 900 "$s" --jobs=2 --verbose 2>&1 |
            tee "$log" | progress "hw-kit: $m: $(basename "$s") ($i/$nsuites): "
        rc=${PIPESTATUS[0]}
        set -e
        if [ "$rc" -ne 0 ]; then
            echo "hw-kit: $(basename "$s") failed on the mock ($m); its kernels may be missing from the cache:" >&2
            grep -v '^\[RUN \]\|^\[PASS\]' "$log" | tail -20 >&2
            fails=$((fails + 1))
        fi
    done
    echo "hw-kit: API suites on the mock $m: $(ls "$HCQ_CACHE_DIR" | grep -c '\.bin$') cache entries so far"
done
[ "$fails" -eq 0 ] || { echo "hw-kit: $fails suite runs failed while filling the cache" >&2; exit 1; }
# hcq bench's tensor matmuls at the mock's size (run.sh --mock runs them)
for m in $MODELS; do
    dev=$([ "${m%%=*}" = nv ] && echo NV:0 || echo AMD:0)
    if ! out=$(HCQ_MOCK=1 HCQ_MOCK_CONFIG="$m" timeout 300 "$KIT/bin/hcq" bench --device "$dev" --only matmul --quick 2>&1); then
        echo "hw-kit: hcq bench --only matmul failed on the mock ($m):" >&2
        printf '%s\n' "$out" | tail -20 >&2
        exit 1
    fi
done
echo "hw-kit: hcq bench's matmuls on the mock models: $(entries) cache entries"
# ... and at the sizes run.sh measures on a GPU (HW_KIT_MATMUL_SIZES),
# built for each model's real target without being run
# (HCQ_MOCK_SHADER=none: no emulator runs an 8192-cube matmul in time,
# and a GPU server has no clang to build them)
MM_SIZES=${HW_KIT_MATMUL_SIZES-1024,2048,4096,8192}
if [ -n "$MM_SIZES" ]; then
    for m in $MODELS; do
        dev=$([ "${m%%=*}" = nv ] && echo NV:0 || echo AMD:0)
        if ! out=$(HCQ_MOCK=1 HCQ_MOCK_CONFIG="$m" HCQ_MOCK_SHADER=none timeout 600 "$KIT/bin/hcq" bench --device "$dev" \
            --only matmul --matmul-sizes "$MM_SIZES" 2>&1); then
            echo "hw-kit: building hcq bench's matmuls at $MM_SIZES failed on the mock ($m):" >&2
            printf '%s\n' "$out" | tail -20 >&2
            exit 1
        fi
    done
    echo "hw-kit: hcq bench's matmuls at $MM_SIZES built for the models' targets: $(entries) cache entries"
fi
if [ "$seeded" -gt 0 ]; then
    unread=$(find "$KIT/cache" -maxdepth 1 -name '*.bin' -atime +3650 | wc -l)
    find "$KIT/cache" -maxdepth 1 \( -name '*.bin' -o -name '*.sass' \) -atime +3650 -delete
    echo "hw-kit: of the $seeded seeded entries the fill read $((seeded - unread)); $(entries) in the kit's cache"
fi

# what the kit is, for the report
glibc=$(for f in "${elves[@]}" "$KIT"/lib/*.so*; do objdump -T "$f" 2>/dev/null; done |
    grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
{
    echo "commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo +changes)"
    echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "built_on=$(uname -srm)"
    echo "glibc_needed=${glibc#GLIBC_}"
    echo "targets=$TARGETS"
    echo "mock_models=$MODELS"
    echo "matmul_sizes=$MM_SIZES"
    echo "cache_entries=$(ls "$HCQ_CACHE_DIR" | grep -c '\.bin$')"
    # what run.sh must find: a suite lost in transit is an error, not a shorter report
    echo "suites=$(cd "$KIT" && ls tests/hw/test_hw_* tests/mock/test_api_* | tr '\n' ' ')"
} > "$KIT/MANIFEST"
tar -C "$(dirname "$KIT")" -czf "$KIT.tar.gz" "$(basename "$KIT")"
echo "hw-kit: $KIT ($(du -sh "$KIT" | cut -f1)), $KIT.tar.gz ($(du -h "$KIT.tar.gz" | cut -f1)); needs glibc >= ${glibc#GLIBC_}"
echo "hw-kit: on the GPU server: tar xzf $(basename "$KIT").tar.gz && $(basename "$KIT")/run.sh"
