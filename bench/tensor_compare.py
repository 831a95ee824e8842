#!/usr/bin/env python3
"""hcq's tensor figures side by side with numpy (OpenBLAS) and torch, when
installed, on the same machine in one run (issue 13's table).

Each round runs `bench_tensor --json` (hcq on the CPU device) and then the
same workloads in numpy and torch; the rounds interleave so that a change of
load hits every contender alike, and each cell is the median over rounds.
Ratios are hcq / contender for rates and contender / hcq for times, so above
1.0 means hcq is ahead. Usage:

    bench/tensor_compare.py [--rounds N] [--bench build/bench/bench_tensor]

The figures mean something only on a quiet machine: say so with the machine
when you quote them.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SIZES = [256, 512, 1024, 2048]
N = 1 << 24  # elements of the elementwise, sum and softmax inputs (as bench_tensor.c)


def best(fn, reps):
    t = 1e30
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def median_time(fn, reps):
    v = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        v.append(time.perf_counter() - t0)
    return statistics.median(v)


def numpy_round(np):
    rng = np.random.default_rng(0)
    x = rng.random(N, dtype=np.float32)
    y = rng.random(N, dtype=np.float32)
    b = x.nbytes
    r = {}
    t = best(lambda: np.maximum((x + y) * x - 0.5 * y, 0) + 1, 5)
    r["elementwise_gbs"] = 3 * b / t * 1e-9
    r["sum_gbs"] = b / best(lambda: x.sum(), 5) * 1e-9
    sq = x.reshape(4096, -1)
    r["row_sum_gbs"] = b / best(lambda: sq.sum(axis=1), 5) * 1e-9
    r["axis0_sum_gbs"] = b / best(lambda: sq.sum(axis=0), 5) * 1e-9
    s2 = x.reshape(-1, 1024)

    def softmax():
        e = np.exp(s2 - s2.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    r["softmax_gbs"] = 2 * b / best(softmax, 5) * 1e-9
    mm = {}
    for s in SIZES:
        a = rng.random((s, s), dtype=np.float32)
        c = rng.random((s, s), dtype=np.float32)
        a @ c
        mm[str(s)] = 2.0 * s**3 / best(lambda: a @ c, 3 if s >= 2048 else 8) * 1e-9
    r["matmul_gflops"] = mm
    dims = [784, 512, 512, 10]
    w = [(rng.random((dims[i + 1], dims[i]), dtype=np.float32) * 0.05, rng.random(dims[i + 1], dtype=np.float32))
         for i in range(3)]
    xm = rng.random((64, 784), dtype=np.float32)

    def mlp():
        h = np.maximum(xm @ w[0][0].T + w[0][1], 0)
        h = np.maximum(h @ w[1][0].T + w[1][1], 0)
        return h @ w[2][0].T + w[2][1]

    mlp()
    r["mlp_forward_ms"] = median_time(mlp, 21) * 1e3
    one = np.ones(1, dtype=np.float32)
    r["tiny_realize_wait_us"] = median_time(lambda: one + 1, 201) * 1e6
    return r


COMPILED = {}  # torch.compile'd functions, built once (inductor's first call takes tens of seconds)


def torch_round(torch):
    torch.set_num_threads(os.cpu_count() or 1)
    g = torch.Generator().manual_seed(0)
    x = torch.rand(N, generator=g)
    y = torch.rand(N, generator=g)
    b = x.numel() * 4
    r = {}
    with torch.no_grad():
        t = best(lambda: torch.relu((x + y) * x - 0.5 * y) + 1, 5)
        r["elementwise_gbs"] = 3 * b / t * 1e-9
        r["sum_gbs"] = b / best(lambda: x.sum(), 5) * 1e-9
        sq = x.reshape(4096, -1)
        r["row_sum_gbs"] = b / best(lambda: sq.sum(dim=1), 5) * 1e-9
        r["axis0_sum_gbs"] = b / best(lambda: sq.sum(dim=0), 5) * 1e-9
        s2 = x.reshape(-1, 1024)
        r["softmax_gbs"] = 2 * b / best(lambda: torch.softmax(s2, dim=1), 5) * 1e-9
        mm = {}
        for s in SIZES:
            a = torch.rand(s, s, generator=g)
            c = torch.rand(s, s, generator=g)
            a @ c
            mm[str(s)] = 2.0 * s**3 / best(lambda: a @ c, 3 if s >= 2048 else 8) * 1e-9
        r["matmul_gflops"] = mm
        dims = [784, 512, 512, 10]
        w = [(torch.rand(dims[i + 1], dims[i], generator=g) * 0.05, torch.rand(dims[i + 1], generator=g))
             for i in range(3)]
        xm = torch.rand(64, 784, generator=g)

        def mlp():
            h = torch.relu(torch.nn.functional.linear(xm, *w[0]))
            h = torch.relu(torch.nn.functional.linear(h, *w[1]))
            return torch.nn.functional.linear(h, *w[2])

        mlp()
        r["mlp_forward_ms"] = median_time(mlp, 21) * 1e3
        # torch.compile (inductor: fused C++ loops, built with the system's
        # compiler), the peer for the fused chain and the MLP; a
        # failure to build leaves the rows out, said once
        if "err" not in COMPILED:
            try:
                if "chain" not in COMPILED:
                    COMPILED["chain"] = torch.compile(lambda p, q: torch.relu((p + q) * p - 0.5 * q) + 1)
                    COMPILED["mlp"] = torch.compile(mlp)
                    COMPILED["chain"](x, y), COMPILED["mlp"]()
                r["elementwise_compiled_gbs"] = 3 * b / best(lambda: COMPILED["chain"](x, y), 5) * 1e-9
                r["mlp_forward_compiled_ms"] = median_time(COMPILED["mlp"], 21) * 1e3
            except Exception as e:  # noqa: BLE001 - any inductor failure: no compiled rows
                COMPILED["err"] = str(e).splitlines()[0] if str(e) else type(e).__name__
                print(f"tensor_compare: torch.compile failed ({COMPILED['err']}); no torch.compile rows", file=sys.stderr)
        one = torch.ones(1)
        r["tiny_realize_wait_us"] = median_time(lambda: one + 1, 201) * 1e6
    return r


def hcq_round(bench):
    env = dict(os.environ)
    out = subprocess.run([bench, "CPU", "--json"], capture_output=True, text=True, timeout=900, env=env)
    if out.returncode:
        sys.exit(f"tensor_compare: {bench} failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout)


def get(r, key):
    if r is None:
        return None
    if key.startswith("mm"):
        return r["matmul_gflops"].get(key[2:])
    return r.get(key)


# rows whose hcq figure is another key's: hcq's fused chain and JIT replay
# beside torch.compile's
HCQ_ALIAS = {"elementwise_compiled_gbs": "elementwise_gbs", "mlp_forward_compiled_ms": "mlp_forward_jit_ms"}

ROWS = [  # key, label, unit, higher is better
    ("elementwise_gbs", "fused elementwise 16M f32", "GB/s", True),
    ("elementwise_compiled_gbs", "  vs torch.compile", "GB/s", True),
    ("sum_gbs", "sum of 16M f32", "GB/s", True),
    ("mm256", "matmul 256^3 f32", "GFLOP/s", True),
    ("mm512", "matmul 512^3 f32", "GFLOP/s", True),
    ("mm1024", "matmul 1024^3 f32", "GFLOP/s", True),
    ("mm2048", "matmul 2048^3 f32", "GFLOP/s", True),
    ("row_sum_gbs", "sum over axis 1 of 4096 x 4096", "GB/s", True),
    ("axis0_sum_gbs", "sum over axis 0 of 4096 x 4096", "GB/s", True),
    ("softmax_gbs", "softmax 16384 x 1024 (r+w)", "GB/s", True),
    ("mlp_forward_ms", "MLP 64x784-512-512-10 forward", "ms", False),
    ("mlp_forward_jit_ms", "  the same, hcq JIT replay", "ms", False),
    ("mlp_forward_compiled_ms", "  JIT replay vs torch.compile", "ms", False),
    ("tiny_realize_wait_us", "1-element op, realize + wait", "us", False),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", "3")))
    ap.add_argument("--bench", default=os.path.join(os.path.dirname(__file__), "..", "build", "bench", "bench_tensor"))
    a = ap.parse_args()
    try:
        import numpy as np
    except ImportError:
        np = None
    try:
        import torch
    except ImportError:
        torch = None
    if np is None:
        print("tensor_compare: numpy is not installed (pip install numpy); hcq's figures alone follow")
    runs = {"hcq": [], "numpy": [], "torch": []}
    for _ in range(max(1, a.rounds)):
        runs["hcq"].append(hcq_round(a.bench))
        if np is not None:
            runs["numpy"].append(numpy_round(np))
        if torch is not None:
            runs["torch"].append(torch_round(torch))

    def med(who, key):
        v = [get(r, HCQ_ALIAS.get(key, key) if who == "hcq" else key) for r in runs[who]]
        v = [x for x in v if x is not None]
        return statistics.median(v) if v else None

    h0 = runs["hcq"][0]
    peak, copy = h0.get("peak_gflops", 0), max(h0.get("memcpy_gbs", 0), h0.get("device_copy_gbs", 0))
    names = [w for w in ("numpy", "torch") if runs[w]]
    print(f"hcq vs {', '.join(names) or 'nothing'} on {h0['device']}, medians of {a.rounds} interleaved rounds "
          f"(hcq revision {h0['hcq']['revision']})")
    print(f"  peak FMA {peak:.0f} GFLOP/s (bench_tensor's count), copy ceiling {copy:.1f} GB/s")
    hdr = f"  {'work':34} {'unit':8} {'hcq':>9}" + "".join(f" {w:>9} {'hcq/' + w[:2]:>7}" for w in names) + "  note"
    print(hdr)
    for key, label, unit, higher in ROWS:
        h = med("hcq", key)
        if h is None:
            continue
        line = f"  {label:34} {unit:8} {h:9.2f}"
        for w in names:
            c = med(w, key)
            if c is None:
                line += f" {'-':>9} {'-':>7}"
                continue
            ratio = (h / c if higher else c / h) if h and c else 0
            line += f" {c:9.2f} {ratio:7.2f}"
        note = ""
        if unit == "GFLOP/s" and peak:
            note = f"  {100 * h / peak:.0f} % of peak"
        elif unit == "GB/s" and copy:
            note = f"  {100 * h / copy:.0f} % of copy"
        print(line + note)
    print("  (ratios above 1.0: hcq ahead; times compare contender/hcq. Indicative only under load.)")


if __name__ == "__main__":
    main()
