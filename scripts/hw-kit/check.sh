#!/usr/bin/env bash
# `make hw-kit-check` (CI): runs the hardware kit here the way a GPU server
# runs it: unpacked from its tarball outside the tree, with a PATH that
# holds the shell tools run.sh uses and the CUDA toolkit (for its trace
# step) but no clang and no Criterion, every kernel from the kit's cache
# (HCQ_CACHE_ONLY=1), on the CPU device and the mock GPUs. It must pass,
# and tests/hw must skip, saying why. Usage: check.sh KIT_DIR
set -euo pipefail
KIT=$(cd "$1" && pwd)
tmp=$(mktemp -d /tmp/hcq-kit-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xzf "$KIT.tar.gz"
kit=$tmp/$(basename "$KIT")
# every library the executables load, but glibc's, resolves inside the kit
for f in "$kit"/bin/* "$kit"/tests/*/*; do
    ldd "$f" | awk '$2 == "=>" && $1 !~ /^(libc|libm|libdl|libpthread|librt|libresolv|ld-linux.*)\.so/ {print $3}' |
        while read -r p; do [ "$(dirname "$(realpath "$p")")" = "$(realpath "$kit/lib")" ] ||
            { echo "hw-kit-check: $f loads $p, outside the kit" >&2; exit 1; }; done
done
mkdir "$tmp/path"
for c in bash sh env timeout date mkdir cp rm cat sed awk grep head tail wc sort tr cut find uname nproc ldd sleep \
    basename dirname tee ls mv gcc g++ cpp as ld; do
    p=$(command -v "$c") && ln -s "$p" "$tmp/path/$c"
done
[ -d /usr/local/cuda/bin ] && nvcc=(/usr/local/cuda/bin) || nvcc=()
set +e
# the mock GPUs run their kernels on this machine's CPUs, which CI shares:
# a device wait may take longer than run.sh's 15 s for a real GPU
(cd "$tmp" && env -i HOME="$tmp" PATH="$tmp/path${nvcc:+:$nvcc}" HCQ_TIMEOUT_MS=60000 timeout 900 "$kit/run.sh" --mock --quick \
    --cache-only --out "$tmp/report" >"$tmp/run.log" 2>&1)
rc=$?
set -e
cat "$tmp/run.log"
if [ $rc -ne 0 ]; then
    echo "hw-kit-check: run.sh failed (exit $rc)" >&2
    # the report's head, then its failures with their messages
    sed -n '1,12p' "$tmp/report/report.md" >&2
    sed -n '/^### Failures/,/^### /p' "$tmp/report/report.md" >&2
    exit 1
fi
python3 - "$tmp/report/report.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
t, tests = r["totals"], r["tests"]
def need(ok, what):
    if not ok: sys.exit("hw-kit-check: " + what)
need(t["passed"] > 0 and t["failed"] + t["hung"] + t["crashed"] + t["error"] + t["not_run"] == 0, "totals %s" % t)
hw = [x for x in tests if x["suite"].startswith("test_hw_")]
need(hw and all(x["status"] == "skipped" and "absent" in x["message"] for x in hw), "tests/hw did not all skip with the reason")
for dev in ("mock:NV:0", "mock:AMD:0", "CPU+ir"):
    need(any(x["device"] == dev and x["status"] == "passed" for x in tests), "no API suite passed on " + dev)
need(r["info"] and r["bench"], "hcq info or hcq bench gave no JSON")
names = [x["name"] for x in r["bench"]["results"]]
for dt in ("f32", "f16", "bf16"):
    need(any(n.startswith("matmul ") and n.endswith(" %s (tensor)" % dt) for n in names), "no %s tensor matmul in hcq bench" % dt)
need(r["torch"].startswith("skipped"), "the PyTorch step: %s" % r["torch"])
# the kit's default budget holds on this machine too (docs/hardware.md)
need(r["elapsed_s"] <= r["budget_s"], "the run took %d s of a %d s budget" % (r["elapsed_s"], r["budget_s"]))
need(not [s for s in r["steps"] if s["status"] == "not-run"], "steps not run for lack of time: %s"
     % [s["step"] for s in r["steps"] if s["status"] == "not-run"])
print("hw-kit-check: the kit ran outside the tree without clang or Criterion in %d s of its %d s budget: %d passed, "
      "%d skipped (tests/hw: %s)" % (r["elapsed_s"], r["budget_s"], t["passed"], t["skipped"], hw[0]["message"]))
EOF
