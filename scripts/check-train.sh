#!/usr/bin/env bash
# The training examples as a user runs them, on the CPU device (make test):
# examples/train_mlp for the issue's full 2 epochs on Fashion-MNIST, which
# must reach 85 % test accuracy (about 15 s with a warm kernel cache on a
# 2-core VM; the epochs are cheap, the first compile is not), and
# (with HCQ_TEST_LONG=1, as CI sets it)
# examples/train_cnn on a subset (1 epoch of 512 images, 500 test images:
# 46.00 % at 18b7d12 and after issue 26, deterministic on the CPU device), held to a
# floor that only a broken step misses. The full CNN run (89 %, some
# minutes) is make train's. Skipped without dataset-fashion-mnist and under
# sanitizers (tests/mock/test_api_train.c trains on subsets there).
set -u
B=${1:-build}
data=/usr/share/datasets/fashion-mnist
if [ ! -r "$data/t10k-labels-idx1-ubyte.gz" ]; then
    echo "check-train: skipped: dataset-fashion-mnist is not installed (scripts/deps.sh)"; exit 0
fi
if [ -n "${SAN:-}" ]; then echo "check-train: skipped under sanitizers"; exit 0; fi
out=
run() { # name, args...
    local rc
    out=$(timeout 600 "$B/examples/$1" CPU "${@:2}" 2>&1); rc=$?
    printf '%s\n' "$out"
    [ $rc -eq 0 ] || { echo "check-train: $1 ${*:2} failed (exit $rc)"; exit 1; }
}
run train_mlp --epochs 2 --min-accuracy 85
# a long epoch says where it is: the first step at once (it builds the
# kernels), then a line every few seconds
grep -q '^  epoch 1: step 1/[0-9]*  loss ' <<<"$out" || { echo "check-train: train_mlp printed no progress line"; exit 1; }
# the CNN's first step compiles 75 kernels for the CPU device (20 s of CPU,
# the most of any step of a cold make test): CI's (HCQ_TEST_LONG=1); make
# test trains the CNN through test_api_train on the interpreter
if [ -n "${HCQ_TEST_LONG:-}" ]; then
    run train_cnn --epochs 1 --train 512 --test 500 --min-accuracy 40
    echo "check-train: the MLP reached the issue's 85 % in 2 epochs; the CNN learns"
else
    echo "check-train: the MLP reached the issue's 85 % in 2 epochs (HCQ_TEST_LONG=1 also trains the CNN example)"
fi
