#!/usr/bin/env bash
# hcq's hardware kit (built by `make hw-kit`; docs/hardware.md). On a GPU
# server that has the driver (and perhaps the CUDA toolkit and PyTorch) but
# no clang, no Criterion and no network, it runs, the most valuable first
# (a lent GPU comes for 15 minutes of device time, its start included):
#   1. bring-up: nvidia-smi, hcq info --json with the bring-up log, the
#      driver versions, the devices hcq finds;
#   2. tests/hw (NVIDIA and AMD; each skips, saying why, without its driver);
#   3. one API suite (test_api_launch) on every GPU hcq finds;
#   4. figures: hcq bench --vs-cuda --json on the first GPU (launches,
#      copies both ways, matmul TFLOP/s in f32, f16 and bf16, with the CUDA
#      driver API's figures beside them), then PyTorch's on the same GPU
#      (torch_bench.py: the same measurements, torch.matmul for matmul),
#      and with two or more GPUs of its kind, hcq bench --only allreduce;
#   5. the rest: the other API suites on every GPU, hcq trace on a small
#      CUDA program built here with nvcc (if there is one), the API suites
#      on the CPU device (interpreted where there is no clang);
# each step under its own timeout and all of them inside one time budget
# (default 480 s: a step that cannot finish in what is left is reported as
# not run), printing a line as each step ends, and writes one report,
# rewritten after every step: report.md and report.json (date, machine,
# GPU, driver, passed/failed/skipped per suite and test, figures), logs/
# with every step's output, and the kernel cache as the run left it.
set -u
usage() {
    cat <<'EOF'
usage: run.sh [--out DIR] [--budget SECONDS] [--devices "D1 D2 ..."] [--mock] [--quick]
              [--no-trace] [--cache-only]

  --out DIR        where the report goes (default ./hcq-hw-report-DATE)
  --budget S       total time for the steps (default 480; the report follows)
  --devices LIST   API suite devices instead of every GPU found and the CPU:
                   NV:0, AMD:0, CPU, CPU+ir (interpreted), mock:NV:0, mock[CFG]:NV:0
  --mock           use the mock GPUs (HCQ_MOCK=1) instead of real ones: checks the kit
  --quick          hcq bench --quick
  --no-trace       skip the CUDA program and hcq trace
  --cache-only     HCQ_CACHE_ONLY=1: a kernel missing from the kit's cache is an error
Send back the report directory (report.md, report.json, logs/).
EOF
}
KIT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT="" DEVICES="" MOCK=0 BUDGET=480 QUICK=0 TRACE=1 CACHE_ONLY=0
while [ $# -gt 0 ]; do
    case $1 in
    --out) OUT=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --devices) DEVICES=$2; shift 2 ;;
    --mock) MOCK=1; shift ;;
    --quick) QUICK=1; shift ;;
    --no-trace) TRACE=0; shift ;;
    --cache-only) CACHE_ONLY=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done
DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
OUT=${OUT:-$PWD/hcq-hw-report-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/logs" || exit 1
OUT=$(cd "$OUT" && pwd)
# a report that cannot be written is the first thing to know (a full disk
# once gave "0 passed", exit 0 and no report.json)
if ! { printf 'hcq hw kit\n' >"$OUT/.probe"; } 2>/dev/null; then
    echo "run.sh: cannot write in $OUT (disk full? read-only?): no report can be written; free space or give --out" >&2
    rm -f "$OUT/.probe"
    exit 1
fi
rm -f "$OUT/.probe"
# every write of the report's files is checked: a failed one is said once
# per file and makes the run fail
WRITE_FAILED=""
write_failed() {
    case " $WRITE_FAILED " in *" $1 "*) return ;; esac
    WRITE_FAILED+=" $1"
    echo "run.sh: writing $OUT/$1 failed (disk full?): the report is incomplete" >&2
}
: >"$OUT/steps.tsv" || write_failed steps.tsv
: >"$OUT/suites.tsv" || write_failed suites.tsv
: >"$OUT/tests.tsv" || write_failed tests.tsv
: >"$OUT/notes.txt" || write_failed notes.txt
: >"$OUT/torch.tsv" || write_failed torch.tsv
SECONDS=0
# what the report reads, set before any step runs (a report may be written
# at any point)
INFO_OK=0 GPUS="" CPUS="" FIRST_GPU="" BENCH_OK=0 TRACE_STATUS="not run" TORCH_STATUS="not run" NV_DRIVER="" KFD_VERSION=""
HCQ="$KIT/bin/hcq"
note() { printf '%s\n' "$*"; printf '%s\n' "$*" >>"$OUT/notes.txt" || write_failed notes.txt; }

# what hcq reads: nothing from the caller's environment but the timeout
for v in $(env | sed -n 's/^\(HCQ_[A-Z0-9_]*\)=.*/\1/p'); do [ "$v" = HCQ_TIMEOUT_MS ] || unset "$v"; done
export HCQ_TIMEOUT_MS=${HCQ_TIMEOUT_MS:-15000}
export HCQ_CACHE_DIR="$OUT/cache"
rm -rf "$HCQ_CACHE_DIR" && cp -r "$KIT/cache" "$HCQ_CACHE_DIR"
[ "$CACHE_ONLY" = 1 ] && export HCQ_CACHE_ONLY=1
MOCKENV=()
[ "$MOCK" = 1 ] && MOCKENV=(HCQ_MOCK=1)
cache_entries() { find "$HCQ_CACHE_DIR" -maxdepth 1 -name '*.bin' | wc -l; }
CACHE_BEFORE=$(cache_entries)

# ** steps: run_step ID LIMIT STDOUT_FILE CMD... runs CMD under `timeout`
# within the current phase (PHASE_END, seconds since the start); stderr
# (and stdout when STDOUT_FILE is -) goes to logs/ID.log. A process that
# outlives SIGKILL (stuck in a driver) is left behind, not waited for.
PHASE_END=$BUDGET
run_step() {
    local id=$1 limit=$2 out=$3 log="$OUT/logs/$1.log"
    shift 3
    [ "$out" = - ] && out=$log
    local left=$((PHASE_END - SECONDS))
    ((limit > left)) && limit=$left
    STEP_RC=0 STEP_STATUS=ok STEP_MS=0
    if ((limit < 2)); then
        STEP_RC=-1 STEP_STATUS=not-run
        echo "run.sh: not run: the time budget for this step was spent" >"$log"
    else
        local t0 pid give_up=$((SECONDS + limit + 12))
        t0=$(date +%s%N)
        if [ "$out" = "$log" ]; then timeout -k 5 "$limit" "$@" >"$log" 2>&1 </dev/null &
        else timeout -k 5 "$limit" "$@" >"$out" 2>"$log" </dev/null &
        fi
        pid=$!
        STEP_PID=$pid STEP_ID=$id
        while kill -0 "$pid" 2>/dev/null && ((SECONDS <= give_up)); do sleep 0.2; done
        if kill -0 "$pid" 2>/dev/null; then
            disown "$pid" 2>/dev/null
            STEP_RC=137 STEP_STATUS=abandoned
            echo "run.sh: abandoned: still running ${limit}s + 12s after it started, past SIGKILL (stuck in the driver?)" >>"$log"
        else
            wait "$pid"
            STEP_RC=$?
        fi
        STEP_MS=$((($(date +%s%N) - t0) / 1000000))
        STEP_PID=""
        if [ "$STEP_STATUS" = ok ]; then
            case $STEP_RC in
            0) ;;
            124 | 137) STEP_STATUS=timeout; echo "run.sh: timed out after ${limit}s" >>"$log" ;;
            *) STEP_STATUS=failed ;;
            esac
        fi
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$STEP_STATUS" "$STEP_RC" "$STEP_MS" "$limit" >>"$OUT/steps.tsv" ||
        write_failed steps.tsv
    STEP_ID=""
    # a line as each step ends (a suite's says what passed: run_suite)
    [ -n "${STEP_QUIET:-}" ] || progress "$id" "$STEP_STATUS"
    write_report "running, after step $id"
}
phase() { PHASE_END=$((BUDGET * $1 / 100)); }
progress() { printf 'run.sh: [%3d s] %-44s %s (%d.%d s)\n' "$SECONDS" "$1" "$2" $((STEP_MS / 1000)) $((STEP_MS % 1000 / 100)); }

# ** suites: Criterion's --verbose lines, one row per test in tests.tsv
# (suite, device, test, status, message); a test that started and never
# ended is "hung" (the suite timed out) or "crashed"
run_suite() { # DEVICE_TOKEN BINARY LIMIT
    local token=$1 bin=$2 envs=() name
    name=$(basename "$bin")
    case $token in
    hw) envs=(HCQ_DEBUG=1) ;; # tests/hw open the real driver themselves; their log keeps hcq's bring-up lines
    *+ir) envs=(HCQ_TEST_DEVICE="${token%+ir}" HCQ_CPU_TARGET=ir) ;;
    mock\[*) local cfg=${token#mock[}
        envs=(HCQ_MOCK=1 HCQ_MOCK_CONFIG="${cfg%%]:*}" HCQ_TEST_DEVICE="${token#*]:}") ;;
    mock:*) envs=(HCQ_MOCK=1 HCQ_TEST_DEVICE="${token#mock:}") ;;
    *) envs=(HCQ_TEST_DEVICE="$token") ;;
    esac
    local id="$name.$(printf '%s' "$token" | tr -c 'A-Za-z0-9_+.-' '_')"
    STEP_QUIET=1 run_step "$id" "$3" - env ${envs[@]+"${envs[@]}"} "$bin" --verbose --jobs=1
    awk -v suite="$name" -v dev="$token" -v st="$STEP_STATUS" -v rc="$STEP_RC" '
        function clean(s) { gsub(/\t/, " ", s); gsub(/^ +| +$/, "", s); return s }
        /^\[RUN \] / { t = clean(substr($0, 8)); if (!(t in seen)) { seen[t] = 1; order[++n] = t }; msg = ""; next }
        /^\[(PASS|SKIP|FAIL)\] / {
            rest = substr($0, 8); i = index(rest, ": "); t = i ? substr(rest, 1, i - 1) : rest; sub(/:$/, "", t)
            why = i ? clean(substr(rest, i + 2)) : ""
            if (!(t in seen)) { seen[t] = 1; order[++n] = t }
            if ($0 ~ /^\[PASS\]/) res[t] = "passed"
            else if ($0 ~ /^\[SKIP\]/) { res[t] = "skipped"; m[t] = why }
            else { res[t] = "failed"; m[t] = msg != "" ? msg : why }
            msg = ""; next
        }
        /^\[----\] / { l = clean(substr($0, 8)); if (l != "") msg = msg (msg == "" ? "" : " | ") l; next }
        { if (!n && NR <= 3) first = first (first == "" ? "" : " | ") clean($0) }
        END {
            for (i = 1; i <= n; i++) {
                t = order[i]; s = res[t]
                if (s == "") { s = (st == "timeout" || st == "abandoned") ? "hung" : "crashed"; m[t] = "started, never finished (suite " st ", exit " rc ")" }
                printf "%s\t%s\t%s\t%s\t%s\n", suite, dev, t, s, substr(m[t], 1, 600)
            }
            if (!n && st != "ok") printf "%s\t%s\t(the suite)\t%s\t%s\n", suite, dev, st == "not-run" ? "not-run" : "error", "exit " rc ": " substr(first, 1, 400)
            # a suite that exited 0 and printed no test ran none we can count
            # (its log could not be written, or it lost its tests)
            if (!n && st == "ok") printf "%s\t%s\t(the suite)\terror\t%s\n", suite, dev, "exit 0 but no test results in its log (the log could not be written?)"
        }' "$OUT/logs/$id.log" >>"$OUT/tests.tsv" || write_failed tests.tsv
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$token" "$STEP_STATUS" "$STEP_RC" "$STEP_MS" >>"$OUT/suites.tsv" ||
        write_failed suites.tsv
    progress "$name [$token]" "$STEP_STATUS, $(awk -F'\t' -v s="$name" -v d="$token" '$1 == s && $2 == d { c[$4]++ }
        END { printf "%d passed, %d failed, %d skipped", c["passed"], c["failed"], c["skipped"] }' "$OUT/tests.tsv")"
    write_report "running, after $name on $token"
}

# ** the report, rewritten after every suite and step, so that a run cut
# short (the session's time, a hung driver, a signal) still leaves one that
# says what ran and what was under way: write_report STATE, where STATE is
# "complete" or what was happening when it was written
write_report() {
    local state=$1
    ELAPSED=$SECONDS
    CACHE_AFTER=$(cache_entries)
    # from the steps run so far (the report may be written inside a step)
    INFO_OK=$(awk -F'\t' '$1 == "info" && $2 == "ok" {f = 1} END {print f + 0}' "$OUT/steps.tsv")
    local info_ran
    info_ran=$(awk -F'\t' '$1 == "info" {f = 1} END {print f + 0}' "$OUT/steps.tsv")
    timeout 5 dmesg 2>/dev/null | grep -aE 'NVRM|Xid|amdgpu|kfd' | tail -30 >"$OUT/logs/dmesg.log"
    count() { awk -F'\t' -v s="$1" '$4 == s' "$OUT/tests.tsv" | wc -l; }
    PASSED=$(count passed) FAILED=$(count failed) SKIPPED=$(count skipped)
    HUNG=$(count hung) CRASHED=$(count crashed) ERRORS=$(count error) NOTRUN=$(count not-run)
    GPU_NAME=$(awk -F', ' 'NR == 1 {print $2}' "$OUT/nvidia-smi.csv" 2>/dev/null)
    [ -z "$GPU_NAME" ] && [ "$INFO_OK" = 1 ] && GPU_NAME=$(grep -m1 '"name"' "$OUT/info.json" | sed 's/.*"name": "\(.*\)",/\1/')
    DRIVER=$(awk -F', ' 'NR == 1 {print $3}' "$OUT/nvidia-smi.csv" 2>/dev/null)
    [ -z "$DRIVER" ] && [ "$INFO_OK" = 1 ] && DRIVER=$(grep -m1 '"driver_version"' "$OUT/info.json" | sed 's/.*"driver_version": "\(.*\)",/\1/')
    REPORT_STATE=$state
    export REPORT_STATE DATE GPU_NAME DRIVER NV_DRIVER KFD_VERSION ELAPSED BUDGET TRACE_STATUS TORCH_STATUS CACHE_BEFORE CACHE_AFTER MOCK
    export HOSTINFO="$(uname -srm); $(nproc 2>/dev/null) CPUs; $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -1)"
    export KITINFO="$(tr '\n' ';' <"$KIT/MANIFEST" 2>/dev/null)"

    # report.json: our own fields escaped here; info and bench are hcq's JSON
    {
        awk -F'\t' '
            function esc(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); gsub(/[\001-\037]/, " ", s); return "\"" s "\"" }
            BEGIN {
                e["date"] = ENVIRON["DATE"]; e["gpu"] = ENVIRON["GPU_NAME"]; e["driver"] = ENVIRON["DRIVER"]
                e["nvidia_proc_version"] = ENVIRON["NV_DRIVER"]; e["amdgpu_version"] = ENVIRON["KFD_VERSION"]
                e["host"] = ENVIRON["HOSTINFO"]; e["kit"] = ENVIRON["KITINFO"]; e["trace"] = ENVIRON["TRACE_STATUS"]
                e["torch"] = ENVIRON["TORCH_STATUS"]
                printf "{\n \"schema\": \"hcq-hw-kit-report/1\",\n \"mock\": %s,\n", ENVIRON["MOCK"] == 1 ? "true" : "false"
                printf " \"state\": %s,\n", esc(ENVIRON["REPORT_STATE"])
                for (k in e) printf " %s: %s,\n", esc(k), esc(e[k])
                printf " \"elapsed_s\": %d, \"budget_s\": %d,\n", ENVIRON["ELAPSED"], ENVIRON["BUDGET"]
                printf " \"cache\": {\"kit_entries\": %d, \"entries_after\": %d},\n", ENVIRON["CACHE_BEFORE"], ENVIRON["CACHE_AFTER"]
            }
            FILENAME ~ /steps.tsv$/ { steps = steps (steps == "" ? "" : ",\n  ") sprintf("{\"step\": %s, \"status\": %s, \"exit\": %d, \"ms\": %d, \"limit_s\": %d}", esc($1), esc($2), $3, $4, $5) }
            FILENAME ~ /suites.tsv$/ { suites = suites (suites == "" ? "" : ",\n  ") sprintf("{\"suite\": %s, \"device\": %s, \"status\": %s, \"exit\": %d, \"ms\": %d}", esc($1), esc($2), esc($3), $4, $5) }
            FILENAME ~ /tests.tsv$/ {
                tests = tests (tests == "" ? "" : ",\n  ") sprintf("{\"suite\": %s, \"device\": %s, \"test\": %s, \"status\": %s, \"message\": %s}", esc($1), esc($2), esc($3), esc($4), esc($5))
                total[$4]++
            }
            FILENAME ~ /notes.txt$/ { notes = notes (notes == "" ? "" : ", ") esc($0) }
            FILENAME ~ /torch.tsv$/ && NF >= 6 {
                torch = torch (torch == "" ? "" : ",\n  ") sprintf("{\"name\": %s, \"unit\": %s, \"median\": %s, \"p10\": %s, \"p90\": %s, \"runs\": %d}", esc($1), esc($2), $3 + 0, $4 + 0, $5 + 0, $6)
            }
            END {
                printf " \"torch_figures\": [\n  %s],\n", torch
                printf " \"totals\": {\"passed\": %d, \"failed\": %d, \"skipped\": %d, \"hung\": %d, \"crashed\": %d, \"error\": %d, \"not_run\": %d},\n", total["passed"], total["failed"], total["skipped"], total["hung"], total["crashed"], total["error"], total["not-run"]
                printf " \"notes\": [%s],\n \"steps\": [\n  %s],\n \"suites\": [\n  %s],\n \"tests\": [\n  %s],\n", notes, steps, suites, tests
            }' "$OUT/steps.tsv" "$OUT/suites.tsv" "$OUT/tests.tsv" "$OUT/notes.txt" "$OUT/torch.tsv"
        printf ' "info": '
        if [ "$INFO_OK" = 1 ] && grep -q '^[[{]' "$OUT/info.json"; then cat "$OUT/info.json"; else echo null; fi
        printf ',\n "bench": '
        if [ "$BENCH_OK" = 1 ] && grep -q '^{' "$OUT/bench.json"; then cat "$OUT/bench.json"; else echo null; fi
        printf ',\n "allreduce": '
        if [ "${ALLREDUCE_OK:-0}" = 1 ]; then cat "$OUT/allreduce.json"; else echo null; fi
        echo "}"
    } >"$OUT/report.json.tmp" && mv -f "$OUT/report.json.tmp" "$OUT/report.json" || write_failed report.json

    # report.md: an entry for docs/hardware.md, then the details
    {
        echo "## ${DATE%%T*}: ${GPU_NAME:-no GPU found}, driver ${DRIVER:-unknown}$([ "$MOCK" = 1 ] && echo ' (mock GPUs: a check of the kit)')"
        echo
        if [ "$state" != complete ]; then
            echo "**Partial report ($state, at ${ELAPSED} s): what follows is what had finished.**"
            echo
        fi
        echo "hcq hardware kit (commit $(sed -n 's/^commit=//p' "$KIT/MANIFEST"), built $(sed -n 's/^built=//p' "$KIT/MANIFEST")) on $HOSTINFO; $ELAPSED s of a $BUDGET s budget."
        [ -n "$NV_DRIVER" ] && echo "NVIDIA driver: \`$NV_DRIVER\`."
        echo
        echo "- tests: **$PASSED passed, $FAILED failed, $SKIPPED skipped**$( ((HUNG + CRASHED + ERRORS + NOTRUN)) && echo ", $HUNG hung, $CRASHED crashed, $ERRORS suites did not run, $NOTRUN not run (out of time)")"
        echo "- devices: ${GPUS:-none} ${CPUS:-}"
        # the first-run paths each GPU's self-test settled on (issue 22)
        [ "$INFO_OK" = 1 ] && awk -F'"' '/^ *"id": / { id = $4 } /^ *"paths": "./ { print "- paths on " id ": " $4 }' \
            "$OUT/info.json" 2>/dev/null
        echo "- hcq trace of a CUDA program: $TRACE_STATUS"
        echo "- PyTorch beside hcq bench: $TORCH_STATUS"
        echo "- all-reduce (hcq bench --only allreduce): ${ALLREDUCE_STATUS:-not run}"
        echo "- kernel cache: $CACHE_BEFORE entries from the kit, $CACHE_AFTER after the run"
        sed 's/^/- /' "$OUT/notes.txt"
        echo
        echo "| suite | device | status | passed | failed | skipped | other | seconds |"
        echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
        awk -F'\t' 'FILENAME ~ /tests.tsv$/ { k = $1 "\t" $2; c[k, $4]++; next }
            { k = $1 "\t" $2; o = c[k, "hung"] + c[k, "crashed"] + c[k, "error"] + c[k, "not-run"]
              printf "| %s | %s | %s | %d | %d | %d | %d | %.1f |\n", $1, $2, $3, c[k, "passed"], c[k, "failed"], c[k, "skipped"], o, $5 / 1000 }' \
            "$OUT/tests.tsv" "$OUT/suites.tsv"
        if awk -F'\t' '$4 != "passed" && $4 != "skipped" {f = 1} END {exit !f}' "$OUT/tests.tsv"; then
            echo
            echo "### Failures"
            echo
            awk -F'\t' '$4 != "passed" && $4 != "skipped" { printf "- `%s` %s on %s: %s\n", $3, $4, $2, $5 }' "$OUT/tests.tsv"
        fi
        if awk -F'\t' '$4 == "skipped" {f = 1} END {exit !f}' "$OUT/tests.tsv"; then
            echo
            echo "### Skipped, and why"
            echo
            awk -F'\t' '$4 == "skipped" { k = $1 " on " $2 ": " $5; if (!(k in n)) o[++m] = k; n[k]++ }
                END { for (i = 1; i <= m; i++) printf "- %s (%d tests)\n", o[i], n[o[i]] }' "$OUT/tests.tsv"
        fi
        if [ "$BENCH_OK" = 1 ] || [ -s "$OUT/torch.tsv" ]; then
            echo
            echo "### Figures on ${FIRST_GPU:-the first GPU}: hcq beside CUDA and PyTorch"
            echo
            local cuda
            cuda=$(sed -n 's/^ *"cuda": "\(.*\)",$/\1/p' "$OUT/bench.json" 2>/dev/null)
            echo "hcq: \`hcq bench --vs-cuda --json\` (medians, p10-p90). CUDA: the same through the CUDA driver API"
            echo "(${cuda:-not measured: hcq bench gave no figures}). PyTorch: \`torch_bench.py\`, the same"
            echo "measurements, torch.matmul (cuBLAS) for the matmuls ($TORCH_STATUS). Times: lower is better."
            echo
            echo "| what | unit | hcq | p10-p90 | CUDA driver API | PyTorch | hcq / PyTorch |"
            echo "| --- | --- | --- | --- | --- | --- | --- |"
            { sed -n 's/.*"name": "\([^"]*\)", "unit": "\([^"]*\)", "median": \([^,]*\), "p10": \([^,]*\), "p90": \([^,]*\),.*/\1\t\2\t\3\t\4\t\5\t&/p' "$OUT/bench.json" "$OUT/bench-beam.json" 2>/dev/null; } |
                awk -F'\t' -v torch="$OUT/torch.tsv" '
                    BEGIN { while ((getline l < torch) > 0) { split(l, f, "\t"); if (f[3] == "") continue; tn[++nt] = f[1]; tu[f[1]] = f[2]; tv[f[1]] = f[3] } }
                    { c = "-"; if (match($6, /"cuda_median": [^,}]*/)) c = substr($6, RSTART + 15, RLENGTH - 15)
                      k = $1; sub(/, beam [0-9]+\)$/, ")", k) # a search winner beside the same torch figure
                      t = (k in tv) ? tv[k] : "-"; r = (k in tv) && tv[k] > 0 ? sprintf("%.2f", $3 / tv[k]) : "-"; used[k] = 1
                      printf "| %s | %s | %s | %s-%s | %s | %s | %s |\n", $1, $2, $3, $4, $5, c, t, r }
                    END { for (i = 1; i <= nt; i++) if (!(tn[i] in used)) printf "| %s | %s | - | - | - | %s | - |\n", tn[i], tu[tn[i]], tv[tn[i]] }'
        fi
        if [ -s "$OUT/beam-plans.txt" ]; then
            echo
            echo "### The plan search's winners (\`hcq bench --beam 4\`, HCQ_DEBUG=1; rows \"(tensor, beam 4)\" above)"
            echo
            echo '```'
            cat "$OUT/beam-plans.txt"
            echo '```'
        fi
        echo
        echo "### Steps"
        echo
        echo "| step | status | exit | seconds | limit |"
        echo "| --- | --- | --- | --- | --- |"
        awk -F'\t' '{ printf "| %s | %s | %s | %.1f | %s |\n", $1, $2, $3, $4 / 1000, $5 }' "$OUT/steps.tsv"
        if [ "$INFO_OK" != 1 ] && [ "$info_ran" = 1 ]; then
            echo
            echo "### hcq info failed"
            echo
            echo '```'
            tail -20 "$OUT/logs/info.log" 2>/dev/null
            echo '```'
        fi
    } >"$OUT/report.md.tmp" && mv -f "$OUT/report.md.tmp" "$OUT/report.md" || write_failed report.md
}

# a signal (the session's time running out) ends the step under way and
# leaves the report of what finished
on_signal() {
    [ -n "$STEP_PID" ] && kill -TERM "$STEP_PID" 2>/dev/null
    printf '%s\t%s\t%s\t%s\t%s\n' "${STEP_ID:-?}" interrupted -1 0 0 >>"$OUT/steps.tsv"
    write_report "interrupted by SIG$1 during ${STEP_ID:-the report}"
    echo "run.sh: interrupted by SIG$1; report: $OUT/report.md" >&2
    exit 130
}
STEP_PID="" STEP_ID=""
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT
trap 'on_signal HUP' HUP

# ** the steps, the most valuable first: a run cut short (the session's
# time, a hung GPU) has what matters most. Each phase ends at a share of
# the budget, so that a slow step leaves time to the ones after it; time a
# phase does not use goes to the next.
echo "hcq hardware kit $(sed -n 's/^commit=//p' "$KIT/MANIFEST" 2>/dev/null): ${BUDGET} s budget; report in $OUT"
# ** 1. bring-up: what the machine is, and hcq info with the bring-up log
phase 10
if ! timeout -k 2 10 "$HCQ" --version >"$OUT/logs/probe.log" 2>&1 </dev/null; then
    note "The kit's binaries do not run on this machine: $(head -3 "$OUT/logs/probe.log" | tr '\n' ' ')" \
        "(the kit needs glibc >= $(sed -n 's/^glibc_needed=//p' "$KIT/MANIFEST"); this machine has $(ldd --version 2>/dev/null | head -1))."
fi
SMI_FIELDS=index,name,driver_version,pci.bus_id,memory.total,clocks.max.sm,persistence_mode,compute_mode
run_step nvidia-smi 20 "$OUT/nvidia-smi.csv" nvidia-smi --query-gpu=$SMI_FIELDS,compute_cap --format=csv,noheader
# compute_cap is newer than some drivers (an unknown field fails the query)
[ "$STEP_STATUS" = failed ] &&
    run_step nvidia-smi-old 20 "$OUT/nvidia-smi.csv" nvidia-smi --query-gpu=$SMI_FIELDS --format=csv,noheader
# the kernel's messages before the run: an Xid in logs/dmesg.log that is
# not here came from the run
timeout 10 dmesg 2>/dev/null | grep -aE 'NVRM|Xid|amdgpu|kfd' | tail -30 >"$OUT/logs/dmesg-before.log"
run_step info 60 "$OUT/info.json" env ${MOCKENV[@]+"${MOCKENV[@]}"} HCQ_DEBUG=1 "$HCQ" info --json
INFO_OK=$([ "$STEP_STATUS" = ok ] && echo 1 || echo 0)
NV_DRIVER=$(head -1 /proc/driver/nvidia/version 2>/dev/null)
KFD_VERSION=$(cat /sys/module/amdgpu/version 2>/dev/null)

if [ -n "$DEVICES" ]; then
    GPUS="" CPUS=""
    for d in $DEVICES; do case $d in CPU*) CPUS+=" $d" ;; *) GPUS+=" $d" ;; esac; done
else
    # discovery opens the drivers: a wedged GPU must not stall the kit here
    run_step devices 60 "$OUT/devices.txt" env ${MOCKENV[@]+"${MOCKENV[@]}"} "$HCQ" test-devices --gpus
    GPUS=$(cat "$OUT/devices.txt" 2>/dev/null)
    [ "$MOCK" = 1 ] && GPUS=$(for g in $GPUS; do printf 'mock:%s ' "$g"; done)
    # the CPU target compiles with clang; without one the CPU device interprets
    if [ -n "${HCQ_CLANG:-}" ] || compgen -c | grep -qE '^clang(-[0-9]+)?$'; then CPUS=CPU
    else CPUS=CPU+ir; note "No clang here: the CPU device runs the API suites on the interpreter (CPU+ir)."
    fi
fi
[ -z "${GPUS// /}" ] && note "hcq found no GPU here (hcq test-devices --gpus printed nothing)."

# the suites the kit was built with (MANIFEST): one missing is an error row
# and the report says it is incomplete, never "complete" with fewer tests
MISSING=""
if [ ! -f "$KIT/MANIFEST" ]; then
    MISSING=" MANIFEST"
    printf '%s\t%s\t%s\t%s\t%s\n' MANIFEST kit "(the kit)" error "the kit has no MANIFEST: cannot tell which suites it should hold" \
        >>"$OUT/tests.tsv" || write_failed tests.tsv
else
    for s in $(sed -n 's/^suites=//p' "$KIT/MANIFEST"); do
        [ -x "$KIT/$s" ] && continue
        MISSING+=" $s"
        printf '%s\t%s\t%s\t%s\t%s\n' "$(basename "$s")" kit "(the suite)" error "missing from the kit (MANIFEST lists $s)" \
            >>"$OUT/tests.tsv" || write_failed tests.tsv
    done
fi
[ -n "$MISSING" ] && note "Missing from the kit:$MISSING (the kit is damaged: unpack it again)."

FIRST_GPU=$(printf '%s\n' $GPUS | head -1)

# the API suites, those that say most about a new GPU first; KEY_SUITE runs
# on every GPU before the figures, the rest after them
KEY_SUITE=test_api_launch
ORDER="test_api_launch test_api_copy test_api_queue test_api_graph test_api_lifetime test_api_errors test_api_profile
       test_api_stress test_api_tensor_ops test_api_tensor_exact test_api_tensor_reduce test_api_tensor_move
       test_api_tensor_layout test_api_tensor_jit test_api_tensor_nn test_api_tensor_grad test_api_nn test_api_train"
ORDER=$(echo $ORDER) # one line, one space between names
SUITES=()
for s in $ORDER; do [ -x "$KIT/tests/mock/$s" ] && SUITES+=("$KIT/tests/mock/$s"); done
for t in "$KIT"/tests/mock/test_api_*; do
    case " $ORDER " in *" $(basename "$t") "*) ;; *) SUITES+=("$t") ;; esac
done

# ** 2. tests/hw: the real drivers, even with --mock (they skip without them)
phase 30
for t in "$KIT"/tests/hw/test_hw_*; do run_suite hw "$t" 120; done
# ** 3. one API suite on each GPU
phase 45
for d in $GPUS; do [ -x "$KIT/tests/mock/$KEY_SUITE" ] && run_suite "$d" "$KIT/tests/mock/$KEY_SUITE" 90; done
# ** 4. figures: hcq bench on the first GPU (with the CUDA driver API's
# figures beside it), then PyTorch's on the same GPU
phase 70
BENCH_OK=0
if [ -n "$FIRST_GPU" ]; then
    benv=()
    case $FIRST_GPU in
    mock\[*) c=${FIRST_GPU#mock[}; benv=(HCQ_MOCK=1 HCQ_MOCK_CONFIG="${c%%]:*}") ;;
    mock:*) benv=(HCQ_MOCK=1) ;;
    esac
    dev=${FIRST_GPU#mock:}
    dev=${dev#*]:}
    q=()
    [ "$QUICK" = 1 ] && q=(--quick)
    # on a GPU, the matmuls at the sizes whose kernels the kit carries
    # (MANIFEST matmul_sizes: built on the mock models without running)
    mms=$(sed -n 's/^matmul_sizes=//p' "$KIT/MANIFEST" 2>/dev/null)
    case $FIRST_GPU in mock*) mms= ;; esac
    [ "$QUICK" = 0 ] && [ -n "$mms" ] && q+=(--matmul-sizes "$mms")
    run_step bench 150 "$OUT/bench.json" env ${benv[@]+"${benv[@]}"} "$HCQ" bench --device "$dev" --vs-cuda --json ${q[@]+"${q[@]}"}
    if [ "$STEP_STATUS" = timeout ] && [ "$QUICK" = 0 ]; then
        note "hcq bench did not finish in its time; ran it again with --quick."
        run_step bench-quick 60 "$OUT/bench.json" env ${benv[@]+"${benv[@]}"} "$HCQ" bench --device "$dev" --vs-cuda --json --quick
    fi
    # a figure that failed (said in logs/bench.log) leaves the others
    grep -q '^{' "$OUT/bench.json" 2>/dev/null && BENCH_OK=1
    [ "$STEP_STATUS" = failed ] && [ "$BENCH_OK" = 1 ] &&
        note "hcq bench measured some figures and failed others (logs/bench.log): $(grep -m3 'hcq bench:' "$OUT/logs/bench.log" | tr '\n' ' ')"
    # the plan search's winners (issue 24): the matmuls at 2048 and 4096
    # again in a context that searches (HCQ_BEAM, 3 s a kernel), each
    # winner's plan in the log (HCQ_DEBUG=1); a candidate the server cannot
    # compile (no nvcc) is discarded there, so the default can win
    if [ "$QUICK" = 0 ] && [ "$BENCH_OK" = 1 ]; then
        case $FIRST_GPU in
        mock*) ;;
        *)
            run_step bench-beam 90 "$OUT/bench-beam.json" env HCQ_BEAM_BUDGET_MS=3000 HCQ_DEBUG=1 "$HCQ" bench --device "$dev" \
                --only matmul --matmul-sizes 2048,4096 --beam 4 --json
            [ "$STEP_STATUS" = ok ] || note "the plan search (bench-beam) $STEP_STATUS: logs/bench-beam.log"
            grep -h 'HCQ_BEAM' "$OUT/logs/bench-beam.log" 2>/dev/null | head -40 >"$OUT/beam-plans.txt" || true ;;
        esac
    fi
fi
TORCH_STATUS="not run"
case $FIRST_GPU in
NV:*)
    PY=$(command -v python3 || true)
    if [ -z "$PY" ]; then
        TORCH_STATUS="skipped: no python3 here"
    else
        # the same sizes as hcq bench's figures, read from its JSON
        mm=$(sed -n 's/.*"name": "matmul \([0-9]*\)x.*(tensor)".*/\1/p' "$OUT/bench.json" 2>/dev/null | sort -un | paste -sd, -)
        cb=$([ "$QUICK" = 1 ] && echo $((16 << 20)) || echo $((64 << 20)))
        run_step torch 90 "$OUT/torch.tsv" "$PY" "$KIT/src/torch_bench.py" --device "${FIRST_GPU#NV:}" \
            --matmul "${mm:-4096}" --copy-bytes "$cb" ${q[@]+"${q[@]}"}
        case $STEP_RC in
        0) TORCH_STATUS="ok: $(head -1 "$OUT/logs/torch.log")" ;;
        3) TORCH_STATUS="skipped: $(head -1 "$OUT/logs/torch.log")" ;;
        *) TORCH_STATUS="$STEP_STATUS (exit $STEP_RC): $(tail -1 "$OUT/logs/torch.log")" ;;
        esac
    fi ;;
*) TORCH_STATUS="skipped: no NVIDIA GPU (${FIRST_GPU:-none})" ;;
esac
# all-reduce across the first GPU's kind, where there are several of it
# (issue 23: bus bandwidth and latency, 4 KiB up; --quick: to 1 MiB)
ALLREDUCE_OK=0 ALLREDUCE_STATUS="not run"
kind_of() { local x=${1#mock:}; x=${x#mock\[*\]:}; echo "${x%%:*}"; }
kind=$(kind_of "$FIRST_GPU")
same=0
for d in $GPUS; do [ "$(kind_of "$d")" = "$kind" ] && same=$((same + 1)); done
if [ -n "$FIRST_GPU" ] && [ "$same" -ge 2 ]; then
    run_step allreduce 90 "$OUT/allreduce.json" env ${benv[@]+"${benv[@]}"} "$HCQ" bench --device "$dev" --only allreduce --json --quick
    grep -q '^{' "$OUT/allreduce.json" 2>/dev/null && ALLREDUCE_OK=1
    ALLREDUCE_STATUS="$STEP_STATUS on $same ${kind} GPUs (allreduce.json)"
else
    ALLREDUCE_STATUS="skipped: fewer than 2 GPUs of one kind (${GPUS:-none})"
fi
write_report "running, after the figures"
# ** 5. the rest: the other API suites on each GPU, hcq trace of a CUDA
# program, the API suites on the CPU device
phase 88
for d in $GPUS; do for t in "${SUITES[@]}"; do
    [ "$(basename "$t")" = "$KEY_SUITE" ] || run_suite "$d" "$t" 120
done; done
phase 94
TRACE_STATUS="not run"
if [ "$TRACE" = 1 ]; then
    NVCC=$(command -v nvcc || true)
    [ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
    if [ -z "$NVCC" ]; then
        TRACE_STATUS="skipped: no nvcc here"
    else
        mkdir -p "$OUT/work"
        run_step nvcc 60 - "$NVCC" -O2 -o "$OUT/work/vadd" "$KIT/src/vadd.cu"
        if [ "$STEP_STATUS" != ok ]; then
            TRACE_STATUS="skipped: nvcc could not build the program (logs/nvcc.log)"
        else
            run_step trace 30 "$OUT/logs/vadd.out" "$HCQ" trace -o "$OUT/trace.txt" -- "$OUT/work/vadd"
            TRACE_STATUS="$STEP_STATUS (exit $STEP_RC): $(head -1 "$OUT/logs/vadd.out" 2>/dev/null); $(wc -l <"$OUT/trace.txt" 2>/dev/null || echo 0) trace lines, $(grep -c 'ioctl' "$OUT/trace.txt" 2>/dev/null || echo 0) of them ioctls"
        fi
    fi
fi
phase 100
for d in $CPUS; do for t in "${SUITES[@]}"; do run_suite "$d" "$t" 120; done; done
CACHE_AFTER=$(cache_entries)
if ((CACHE_AFTER > CACHE_BEFORE)); then
    note "$((CACHE_AFTER - CACHE_BEFORE)) kernels were not in the kit's cache and were compiled here."
fi
trap - TERM INT HUP
if [ -n "$MISSING" ]; then write_report "incomplete: missing from the kit:$MISSING"
else write_report complete
fi
if command -v python3 >/dev/null && ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$OUT/report.json" 2>"$OUT/logs/json-check.log"; then
    echo "run.sh: report.json does not parse (logs/json-check.log)" | tee -a "$OUT/report.md"
fi
echo "tests: $PASSED passed, $FAILED failed, $SKIPPED skipped, $((HUNG + CRASHED + ERRORS + NOTRUN)) other; $ELAPSED s"
if [ -n "$WRITE_FAILED" ]; then
    echo "run.sh: FAILED: writing$WRITE_FAILED in $OUT failed (disk full?); the counts above and the report are incomplete" >&2
    exit 3
fi
echo "report: $OUT/report.md, $OUT/report.json"
[ -z "$MISSING" ] && [ $((FAILED + HUNG + CRASHED + ERRORS)) -eq 0 ]
