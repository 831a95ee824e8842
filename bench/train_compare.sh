#!/usr/bin/env bash
# Training samples/s side by side in one run, on this machine's CPU: hcq
# (bench/bench_train.c, the CPU device), PyTorch (CPU) and tinygrad (its
# CPU backend) on the same models, batch and optimizer
# (bench/train_reference.py). Frameworks that are not installed are
# skipped (pip install torch tinygrad). Run it on a quiet machine: the
# figures are only worth publishing when nothing else competes for the
# cores.
#     bench/train_compare.sh [BUILD_DIR]     (make bench builds build/bench/bench_train)
set -u
B=${1:-build}
here=$(dirname "$0")
[ -x "$B/bench/bench_train" ] || { echo "train_compare: build $B/bench/bench_train first (make bench)"; exit 1; }
declare -A sps
for m in mlp cnn; do
    line=$(timeout 1800 "$B/bench/bench_train" CPU --model $m) || { echo "train_compare: bench_train failed"; exit 1; }
    echo "$line"
    sps[hcq,$m]=$(awk '{print $3}' <<<"$line")
    for f in torch tinygrad; do
        if ! python3 -c "import $f" 2>/dev/null; then sps[$f,$m]=""; continue; fi
        steps=$([ $m = mlp ] && echo 200 || echo 20)
        [ $f = tinygrad ] && steps=$([ $m = mlp ] && echo 100 || echo 10)
        out=$(timeout 1800 python3 "$here/train_reference.py" $f $m --steps $steps 2>/dev/null | tail -1)
        sps[$f,$m]=$(awk '{print $3}' <<<"$out")
    done
done
echo
printf '%-6s %14s %14s %14s %12s %14s\n' model "hcq" "PyTorch" "tinygrad" "hcq/PyTorch" "hcq/tinygrad"
for m in mlp cnn; do
    h=${sps[hcq,$m]}; t=${sps[torch,$m]:-}; g=${sps[tinygrad,$m]:-}
    rt=$([ -n "$t" ] && awk -v a="$h" -v b="$t" 'BEGIN{printf "%.2fx", a/b}' || echo "-")
    rg=$([ -n "$g" ] && awk -v a="$h" -v b="$g" 'BEGIN{printf "%.2fx", a/b}' || echo "-")
    printf '%-6s %14s %14s %14s %12s %14s\n' $m "$h" "${t:-not installed}" "${g:-not installed}" "$rt" "$rg"
done
echo "(samples/s, batch 128, Adam; $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
