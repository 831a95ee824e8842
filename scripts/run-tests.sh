#!/usr/bin/env bash
# Runs every test binary given, each with a time limit; a suite's failure
# does not stop the others. Prints a line per suite as it finishes, with its
# wall time and the CPU time it used (user+sys, its child processes
# included: the figure to compare on a busy machine), a line naming those
# still running whenever HCQ_TEST_HEARTBEAT seconds (default 10) pass
# without one ending, then the slowest suites and the totals, ending with
# "tests: N passed, N failed"; exits non-zero if anything failed. Each
# run has a TMPDIR of its own; a suite that passes but leaves files there
# fails ("left N temporary files: ...").
#
# API suites (tests/mock/test_api_*) run once per device in HCQ_TEST_DEVICES,
# with HCQ_TEST_DEVICE set for each run. A device token is
#   NAME            a device present (CPU, NV:0, ...)
#   CPU+ir          the CPU device interpreting kernels (HCQ_CPU_TARGET=ir)
#   mock:NAME       NAME on the mock GPU (HCQ_MOCK=1)
#   mock[CFG]:NAME  the same with HCQ_MOCK_CONFIG=CFG (e.g. amd=gfx942)
# The default is every device present, CPU+ir, every mock GPU of the default
# mock (H100: sm_90, gfx1100), and the mock variants in
# HCQ_TEST_MOCK_VARIANTS (default "amd=gfx942 nv=A100": the multi-XCC AMD
# part and sm_80 with QMD V03; CI adds nv=RTX4090 and amd=gfx90a). Where
# clang and ptxas are, the mock GPUs run real binaries (host twins).
#
# The kernel-level API suites (test_api_tensor_*, test_api_nn,
# test_api_train: what the tensor layer computes) run on the devices in
# HCQ_TEST_KERNEL_DEVICES, the queue-level ones (launches, copies, queues,
# graphs, lifetimes, errors, profiles, stress, and any other) on every
# device. Its default is every device but the mock GPUs: a variant
# differs from the default mock in its queues, packets and target, not in
# what the tensor layer asks of it, and the kernel suites' cost on a mock
# is mostly compiling the same kernels for one more target (a cold cache).
# So by default each kernel-level suite runs on one of the default mock's
# GPUs, in turn (the first on mock:NV:0, the next on mock:AMD:0, ...): each
# renderer (CUDA, HIP) still compiles and runs half of them in make test,
# at half the cost. "all" runs them everywhere (CI's make test); CI's make
# tsan names a few.
# On the NV mocks (whose default is the SASS executor) the kernel-level and
# composite suites run as host twins (HCQ_MOCK_SHADER=twin) unless
# HCQ_TEST_LONG=1 (CI) or HCQ_MOCK_SHADER is set: the executor's decoder
# costs more per kernel on a clean clone than the twins' builds.
# The three that compose ops the others check one by one,
# test_api_tensor_grad (gradients through every op: some 550 kernels a
# device), test_api_train (whole training runs) and test_api_tensor_symdim
# (training and attention over variable batches), with test_api_tensor_numpy
# (the dtype rules against NumPy: device-independent, as
# test_api_tensor_dtypes holds every device to the same bits), run on the devices in
# HCQ_TEST_COMPOSITE_DEVICES instead: by default the GPUs present and the
# interpreter (CPU+ir); "all" (CI) runs them everywhere. On a compiling
# device their cost is mostly compiling (on the CPU device and the two mock
# GPUs, a quarter of a cold make test's CPU time); the GPU-style lowering of a
# backward pass and an optimizer step still runs in make test, on both
# mock GPUs, in test_tools' mock demo (it trains an MLP there).
set -u
B=$1; shift
suites_pass=0; suites_fail=0; tests_pass=0; tests_fail=0; failed=()
if [ -z "${HCQ_TEST_DEVICES:-}" ]; then
    HCQ_TEST_DEVICES="$("$B/hcq" test-devices 2>/dev/null || echo CPU)"
    for d in $(HCQ_MOCK=1 "$B/hcq" test-devices --gpus 2>/dev/null); do HCQ_TEST_DEVICES+=" mock:$d"; done
    for v in ${HCQ_TEST_MOCK_VARIANTS-amd=gfx942 nv=A100}; do
        for d in $(HCQ_MOCK=1 HCQ_MOCK_CONFIG="$v" "$B/hcq" test-devices --gpus 2>/dev/null); do
            # a variant is about the kinds it configures (amd=... -> AMD:N):
            # the others ran already with the default mock
            kind=$(tr 'A-Z' 'a-z' <<<"${d%%:*}")
            case ",$v" in *",$kind="*) HCQ_TEST_DEVICES+=" mock[$v]:$d" ;; esac
        done
    done
fi
devices=$HCQ_TEST_DEVICES
kernel_devices=${HCQ_TEST_KERNEL_DEVICES:-}
rotating=() # by default each kernel-level suite runs on one of these, in turn
if [ -z "$kernel_devices" ]; then
    for d in $devices; do
        case "$d" in
        mock\[*) ;;
        mock:*) rotating+=("$d") ;;
        *) kernel_devices+=" $d" ;;
        esac
    done
elif [ "$kernel_devices" = all ]; then
    kernel_devices=$devices
fi
kernel_devices=" $kernel_devices "
kernel_suite_n=0
composite_devices=${HCQ_TEST_COMPOSITE_DEVICES:-}
if [ -z "$composite_devices" ]; then
    for d in $devices; do
        case "$d" in
        CPU+ir) composite_devices+=" $d" ;;
        CPU | mock*) ;;
        *) composite_devices+=" $d" ;; # a GPU present
        esac
    done
elif [ "$composite_devices" = all ]; then
    composite_devices=$devices
fi
composite_devices=" $composite_devices "
# HCQ_TEST_MOCK_ONLY=1 (make test-sched): only the mock GPUs, the devices
# whose engines a mock setting changes; the others would rerun make test
if [ "${HCQ_TEST_MOCK_ONLY:-}" = 1 ]; then
    kept=""
    for d in $devices; do case "$d" in mock*) kept+=" $d" ;; esac; done
    devices=${kept# }
fi
# one kernel cache for every build flavour (kernels and their host twins do
# not depend on how hcq was built), so make asan and make tsan after make
# test start warm; the compile paths run cold in the suites that empty it
export HCQ_CACHE_DIR=${HCQ_CACHE_DIR:-$PWD/build/kernel-cache}
# the hcq command the tool tests run
export HCQ_TEST_HCQ_BIN=$PWD/$B/hcq
limit=${HCQ_TEST_TIMEOUT:-900}
heartbeat=${HCQ_TEST_HEARTBEAT:-10}
[[ "$heartbeat" =~ ^[1-9][0-9]*$ ]] || { echo "run-tests.sh: HCQ_TEST_HEARTBEAT=$heartbeat: want seconds, a number >= 1" >&2; exit 2; }
tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/hcq-run-tests.XXXXXX") || exit 1
trap 'rm -rf "$tmpdir"' EXIT
: >"$tmpdir/times"

# CPU_MS: the CPU time (ms, user+sys) of this shell's finished children.
# `times` must run in this shell (not in $(...), whose children are not ours)
children_cpu_ms() {
    local u s
    times >"$tmpdir/t.$BASHPID"
    { read -r _ _; read -r u s; } <"$tmpdir/t.$BASHPID"
    CPU_MS=$(awk -v u="$u" -v s="$s" 'function ms(x, a) { split(x, a, /[ms]/); return a[1] * 60000 + a[2] * 1000 }
                                      BEGIN { printf "%d\n", ms(u) + ms(s) }')
}
now_ms() { local t=${EPOCHREALTIME/./}; echo $((10#$t / 1000)); }
t_start=$(now_ms)

# True when every sanitizer report in $1 is a leak that Criterion's runner
# process makes itself: each leaked block's stack, past the allocator, lies
# wholly in libcriterion. The runner (not a test's worker process) now and
# then leaks 48 bytes of its own at exit on this Criterion (2.4, Debian 12);
# a leak of ours always has a frame of ours, and any other report counts.
criterion_leaks_only() {
    awk '
        /ERROR: (Address|Thread)Sanitizer|runtime error:/ { bad = 1 }
        /^(Direct|Indirect) leak of/ { if (inblock && !crit) bad = 1; inblock = 1; crit = 1; leaks++; next }
        inblock && /^ *#[1-9][0-9]* / { if ($0 !~ /libcriterion\.so/) crit = 0; next }
        inblock && /^ *$/ { if (!crit) bad = 1; inblock = 0 }
        END { if (inblock && !crit) bad = 1; exit (bad || !leaks) }
    ' <<<"$1"
}

# run_one LABEL INDEX [VAR=value...] PROGRAM: runs one suite (in the background,
# beside up to HCQ_TEST_JOBS-1 others) and leaves its result in
# $tmpdir/res.N: "rc passed failed wall_ms cpu_ms", the line to print, and
# on failure the end of its output
run_one() {
    local label=$1 idx=$2; shift 2
    local prog=${!#} envs=("${@:1:$#-1}") extra=(--jobs=2) out rc
    case "$prog" in *.sh) extra=("$B") ;; esac
    # HCQ_MOCK_SCHED (make test-sched) configures the mock's engines: runs
    # without the mock (CPU, CPU+ir, the scripts) go without it, since hcq
    # refuses a mock setting with the mock off
    local drop=()
    case " ${envs[*]-} " in *" HCQ_MOCK=1 "*) ;; *) [ -z "${HCQ_MOCK:-}" ] && drop=(-u HCQ_MOCK_SCHED) ;; esac
    # each run has a TMPDIR of its own (tests/support/tmptest.h makes the
    # suites' temporary files there), so that what a run leaves is seen
    local c0 w0 tdir=$tmpdir/tmp.$idx
    mkdir "$tdir" || { echo "1 0 1 0 0" >"$tmpdir/res.$idx"; echo "FAIL $label (cannot make its TMPDIR $tdir)" >>"$tmpdir/res.$idx"; return; }
    children_cpu_ms; c0=$CPU_MS w0=$(now_ms)
    out=$(env ${drop[@]+"${drop[@]}"} TMPDIR="$tdir" ${envs[@]+"${envs[@]}"} timeout -k 10 "$limit" "$prog" "${extra[@]}" 2>&1 </dev/null); rc=$?
    children_cpu_ms
    local wall_ms=$(($(now_ms) - w0)) cpu_ms=$((CPU_MS - c0)) took
    took=$(printf '%5.1f s, CPU %5.1f s' "$((wall_ms))e-3" "$((cpu_ms))e-3")
    # Criterion: "[====] Synthesis: Tested: N | Passing: N | Failing: N | Crashing: N"
    local line np=0 nf=0
    line=$(printf '%s\n' "$out" | grep -a 'Synthesis:' | tail -1)
    if [ -n "$line" ]; then
        np=$(sed -n 's/.*Passing: \([0-9]*\).*/\1/p' <<<"$line")
        nf=$(( $(sed -n 's/.*Failing: \([0-9]*\).*/\1/p' <<<"$line") + $(sed -n 's/.*Crashing: \([0-9]*\).*/\1/p' <<<"$line") ))
    elif [ $rc -eq 0 ]; then np=1; else nf=1; fi
    # sanitizer reports fail the suite even where Criterion counted a pass
    # (LeakSanitizer runs when a test's process exits, after the verdict)
    if grep -aqE 'ERROR: (Address|Leak|Thread)Sanitizer|SUMMARY: (Address|Leak|Thread|UndefinedBehavior)Sanitizer|runtime error:' <<<"$out"; then
        if criterion_leaks_only "$out"; then
            # the runner's own leak made it exit non-zero; every test passed
            [ -n "$line" ] && [ "$nf" -eq 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] && rc=0
        else
            [ $rc -eq 0 ] && rc=99
        fi
    fi
    # a suite that passed and left files in its TMPDIR fails: a test (or
    # hcq under it) leaks temporary files. Criterion (2.4) leaves nothing
    # there, nor do the scripts (check-readme.sh and check-install.sh
    # remove their mktemp -d directories at exit; checked 2026-11-28), so
    # nothing here is excused.
    if [ $rc -eq 0 ]; then
        local left n_left
        left=$(cd "$tdir" && find . -mindepth 1 -maxdepth 1 -printf '%P%y\n' 2>/dev/null | sed 's/d$/\//; t; s/.$//' | sort)
        if [ -n "$left" ]; then
            n_left=$(wc -l <<<"$left")
            rc=98
            out+=$'\n'"left $n_left temporary files: $(head -20 <<<"$left" | tr '\n' ' ')"
            out+="(in its TMPDIR; the suites make theirs with tests/support/tmptest.h, which removes them)"
        fi
    fi
    rm -rf "$tdir" 2>/dev/null || { chmod -R u+rwx "$tdir" 2>/dev/null; rm -rf "$tdir"; }
    [ $rc -ne 0 ] && [ "$nf" -eq 0 ] && nf=1   # a crash, timeout or sanitizer report outside any test
    {
        echo "$rc $np $nf $wall_ms $cpu_ms"
        if [ $rc -eq 0 ]; then
            line=${line#*Synthesis: }
            printf 'PASS %-48s %-24s %s\n' "$label" "$took" "${line:+${line% }}"
        else
            printf 'FAIL %-48s %-24s (exit %d)\n' "$label" "$took" "$rc"
            printf '%s\n' "$out" | grep -av '^\[----\] *$' | tail -60
        fi
    } >"$tmpdir/res.$idx"
}

# ** the runs: label, then the environment and program, one word per
# element (joined with \x1f). The suites known to be long first, then the
# scripts, then the API suites, then the rest (mostly short): the long runs
# start early and the end has no long tail; where a previous run left its
# times ($B/test-times.tsv), the longest first (runs it has no time for
# first of all).
labels=() cmds=()
add() { labels+=("$1"); shift; local IFS=$'\x1f'; cmds+=("$*"); }
add "README example" scripts/check-readme.sh
add "training examples" scripts/check-train.sh
add "make install" scripts/check-install.sh
for t in "$@"; do
    case "$t" in
    */test_api_*)
        for d in $devices; do
            # the kernel-level suites only where HCQ_TEST_KERNEL_DEVICES says,
            # the composite ones where HCQ_TEST_COMPOSITE_DEVICES says
            case "$(basename "$t")" in
            test_api_tensor_grad | test_api_train | test_api_tensor_symdim | test_api_tensor_numpy)
                case "$composite_devices" in *" $d "*) ;; *) continue ;; esac ;;
            test_api_tensor_* | test_api_nn)
                case "$kernel_devices" in
                *" $d "*) ;;
                *) [ ${#rotating[@]} -gt 0 ] && [ "$d" = "${rotating[$((kernel_suite_n % ${#rotating[@]}))]}" ] || continue ;;
                esac ;;
            esac
            # the NV mocks run machine code on the SASS executor by default,
            # whose decoder (nvdisasm) costs ~0.3 s of CPU per kernel on a
            # cold cache, where a host twin's build costs less: make test
            # runs the many-kernel suites there as twins; CI's long form
            # (HCQ_TEST_LONG=1) runs them as machine code on the H100 mock
            # (sm_90) and as twins on the A100 and RTX 4090 variants, whose
            # SASS the corpus, semantics and difftest runs execute (as
            # machine code, the seven suites cost ~820 s of CPU on those two,
            # a third of CI's make test, 2026-11-28); an explicit
            # HCQ_MOCK_SHADER runs them as asked
            shader=() as=""
            case "$(basename "$t")" in
            test_api_tensor_* | test_api_nn | test_api_train)
                case "$d" in
                mock:NV:* | mock\[*\]:NV:*)
                    if [ -z "${HCQ_MOCK_SHADER:-}" ] && { [ -z "${HCQ_TEST_LONG:-}" ] || [ "${d#mock\[}" != "$d" ]; }; then
                        shader=(HCQ_MOCK_SHADER=twin) as=", twins"
                    fi ;;
                esac ;;
            esac
            case "$d" in
            *+ir) add "$(basename "$t") [$d]" HCQ_TEST_DEVICE="${d%+ir}" HCQ_CPU_TARGET=ir "$t" ;;
            mock\[*) cfg=${d#mock[}; cfg=${cfg%%]:*}
                add "$(basename "$t") [$d$as]" HCQ_MOCK=1 HCQ_MOCK_CONFIG="$cfg" HCQ_TEST_DEVICE="${d#*]:}" ${shader[@]+"${shader[@]}"} "$t" ;;
            mock:*) add "$(basename "$t") [$d$as]" HCQ_MOCK=1 HCQ_TEST_DEVICE="${d#mock:}" ${shader[@]+"${shader[@]}"} "$t" ;;
            *) add "$(basename "$t") [$d]" HCQ_TEST_DEVICE="$d" "$t" ;;
            esac
        done
        case "$(basename "$t")" in
        test_api_tensor_grad | test_api_train | test_api_tensor_symdim | test_api_tensor_numpy) ;;
        test_api_tensor_* | test_api_nn) kernel_suite_n=$((kernel_suite_n + 1)) ;;
        esac ;;
    esac
done
# The multi-device suites and the tools' mock demo compile many kernels
# that no other suite does, for the NV mocks too, and on a clean clone
# the SASS executor's decoder (an nvdisasm process a kernel, ~0.3 s of
# CPU) costs more than the kernels' twins: make test runs their NV side
# as twins (HCQ_MOCK_SHADER_NV=twin), their AMD side on the executor
# (its decoder is hcq's own); CI's long form (HCQ_TEST_LONG=1) and an
# explicit HCQ_MOCK_SHADER* run them as asked. The executors' own suites
# and the queue-level API suites still run machine code in make test.
nv_twin_suites=" test_dp test_dp_mpi test_tensor_shard test_jit_shard test_allreduce test_tools "
for t in "$@"; do
    case "$t" in */test_api_*) continue ;; esac
    n=$(basename "$t")
    if [[ "$nv_twin_suites" == *" $n "* && -z "${HCQ_TEST_LONG:-}${HCQ_MOCK_SHADER:-}${HCQ_MOCK_SHADER_NV:-}" ]]; then
        add "$n [NV twins]" HCQ_MOCK_SHADER_NV=twin "$t"
    else
        add "$n" "$t"
    fi
done
order=("${!labels[@]}")
# Without a previous run's times (a clean clone), the suites known to be
# long start first, so that none of them is the last one running while the
# other CPU idles (measured 2026-11-27: the tail of a clean clone's run was
# test_tools, test_mock_failures and test_nv_paths, some 25 s of one CPU)
first_suites=" test_tools test_mock_failures test_nv_paths test_compile_agree test_allreduce test_sass_corpus "
first_suites+="test_sass_semantics test_tensor_sched test_trace test_hostile_env test_nv_compile test_dp_mpi "
if [ ! -s "$B/test-times.tsv" ]; then
    mapfile -t order < <(for i in "${!labels[@]}"; do
        case "$first_suites" in *" ${labels[$i]%% \[*} "*) echo "$i" ;; esac
    done
    for i in "${!labels[@]}"; do
        case "$first_suites" in *" ${labels[$i]%% \[*} "*) ;; *) echo "$i" ;; esac
    done)
fi
times_file=$B/test-times.tsv
if [ -s "$times_file" ]; then
    mapfile -t order < <(for i in "${!labels[@]}"; do
        w=$(awk -F'\t' -v l="${labels[$i]}" '$2 == l { w = $1 } END { print w == "" ? 1e12 : w }' "$times_file")
        printf '%s\t%d\n' "$w" "$i"
    done | sort -t$'\t' -k1,1gr -k2,2n | cut -f2)
fi

# ** HCQ_TEST_JOBS suites at a time (default: the CPUs), each with
# Criterion's --jobs=2: a suite of few tests, or one waiting on a compiler,
# leaves a CPU to the next. Lines print as suites finish. A suite that runs
# processes of its own on every CPU (test_tensor_fuzz: a worker per device)
# runs alone under a sanitizer, so that it does not starve a neighbour into
# its timeouts; without one it ran at one CPU's worth (14 s of CPU in 14 s
# of wall, a clean clone's make test, 2026-11-28) while the other CPU
# waited, so it runs beside the others there.
jobs=${HCQ_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "run-tests.sh: HCQ_TEST_JOBS=$jobs: want a number >= 1" >&2; exit 2; }
# each run, as it ends, writes its index to a FIFO the loop reads with a
# timeout: no wakeup is lost, and a timeout is the moment for a line saying
# what still runs
mkfifo "$tmpdir/ended" && exec 3<>"$tmpdir/ended" || exit 1
declare -A running=()   # run index -> pid
# ctrl-C or a TERM (make interrupted, a CI timeout) ends the suites under
# way, not only this script: `timeout` runs each in a process group of its
# own, which the terminal's signal does not reach, so it is sent down the
# tree of each run this script started, by process id
# (the trap only notes the signal: it may run inside `read -t`, whose
# timeout would cut a longer handler short)
kill_tree() { local c; for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done; kill -TERM "$1" 2>/dev/null; }
interrupted=0
trap 'interrupted=1' INT TERM
report() { # the run that ended: its line, the counts
    local i=$1 rc np nf wall cpu
    [ -n "${running[$i]+x}" ] || return 0   # reported already
    wait "${running[$i]}" 2>/dev/null
    unset "running[$i]"
    if [ ! -s "$tmpdir/res.$i" ]; then
        printf 'FAIL %-48s (the runner lost its result)\n' "${labels[$i]}"
        echo "1 0 1 0 0" >"$tmpdir/res.$i"
    else
        tail -n +2 "$tmpdir/res.$i"
    fi
    read -r rc np nf wall cpu <"$tmpdir/res.$i"
    tests_pass=$((tests_pass + np)); tests_fail=$((tests_fail + nf))
    if [ "$rc" -eq 0 ]; then suites_pass=$((suites_pass + 1)); else suites_fail=$((suites_fail + 1)); failed+=("${labels[$i]}"); fi
    printf '%d\t%d\t%s\n' "$wall" "$cpu" "${labels[$i]}" >>"$tmpdir/times"
}
next=0 quiet_since=$(now_ms) said_at=$(now_ms) alone_run=-1
while ((next < ${#order[@]} || ${#running[@]} > 0)); do
    if ((interrupted)); then
        trap - INT TERM
        for i in "${!running[@]}"; do kill_tree "${running[$i]}"; done
        echo "run-tests.sh: interrupted; ended the suites under way" >&2
        exit 130
    fi
    while ((next < ${#order[@]} && ${#running[@]} < jobs)); do
        [ -n "${running[$alone_run]+x}" ] && break   # one that runs alone is running
        j=${order[$next]} alone=0
        case "${labels[$j]}" in test_tensor_fuzz) [ -n "${SAN:-}" ] && alone=1 ;; esac
        ((alone && ${#running[@]} > 0)) && break
        IFS=$'\x1f' read -r -a argv <<<"${cmds[$j]}"
        { run_one "${labels[$j]}" "$j" "${argv[@]}"; echo "$j" >&3; } &
        running[$j]=$!
        next=$((next + 1))
        ((alone)) && { alone_run=$j; break; }
    done
    # a second at a time: a signal's trap runs when the read returns
    if read -r -t 1 -u 3 i; then
        report "$i"
        quiet_since=$(now_ms) said_at=$quiet_since
        continue
    fi
    # a run whose shell died without a word (killed from outside) ends too,
    # as a failure, once its word, if any, had a second to arrive
    for i in "${!running[@]}"; do
        # (a word read below may have reported a later run of this list)
        [ -n "${running[$i]+x}" ] || continue
        kill -0 "${running[$i]}" 2>/dev/null && continue
        read -r -t 1 -u 3 j && report "$j"
        report "$i"
    done
    if (($(now_ms) - said_at >= heartbeat * 1000)); then
        said_at=$(now_ms)
        names=""
        for i in "${!running[@]}"; do names+="${names:+, }${labels[$i]}"; done
        printf '.... still running (%d s since a suite last ended): %s\n' $(((said_at - quiet_since) / 1000)) "$names"
    fi
done
exec 3>&-
# the times, for the next run's order (the longest first): this run's,
# and the previous file's for the runs this one left out
awk -F'\t' 'FNR == NR { w[$3] = $1; next } !($2 in w) { print } END { for (l in w) print w[l] "\t" l }' \
    "$tmpdir/times" "$times_file" 2>/dev/null >"$times_file.tmp" ||
    awk -F'\t' '{ print $1 "\t" $3 }' "$tmpdir/times" >"$times_file.tmp"
mv -f "$times_file.tmp" "$times_file" 2>/dev/null

echo
# where the time went: the suites that took most CPU, and the totals
sort -t$'\t' -k2,2nr "$tmpdir/times" | head -8 |
    awk -F'\t' 'NR == 1 { print "slowest suites (CPU time, user+sys):" } { printf "  %6.1f s CPU %6.1f s wall  %s\n", $2 / 1000, $1 / 1000, $3 }'
awk -F'\t' -v wall="$(($(now_ms) - t_start))" -v jobs="$jobs" '{ c += $2 }
    END { printf "time: %.1f s wall, %.1f s CPU in %d suite runs, %d at a time\n", wall / 1000, c / 1000, NR, jobs }' "$tmpdir/times"
[ ${#failed[@]} -gt 0 ] && printf 'failed suites: %s\n' "${failed[*]}"
echo "suites: $suites_pass passed, $suites_fail failed"
echo "tests: $tests_pass passed, $tests_fail failed"
[ "$suites_fail" -eq 0 ]
