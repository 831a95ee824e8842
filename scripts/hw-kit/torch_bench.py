#!/usr/bin/env python3
"""PyTorch's figures beside `hcq bench` in the hardware kit's report (run.sh,
step "torch"): on the same GPU in the same run, the same measurements under
the same names, so the report can set them side by side:

  launch: host enqueue per launch      a one-element in-place add, 500 in a
                                       row without waiting (PyTorch's cost
                                       per op: dispatcher and launch)
  launch: empty kernel round trip      that add and torch.cuda.synchronize()
  copy host->device (copyin, staged)   pageable host memory, as hcq's copyin
  copy device->host (copyout, staged)  takes it (plus pinned-memory rows,
  copy device->device (same device)    which hcq does not have)
  matmul NxNxN f32|f16|bf16 (tensor)   torch.matmul (cuBLAS) at each --matmul size; f32 with TF32
                                       off, as hcq computes it (and a row
                                       with TF32 allowed)

Prints one tab-separated line per figure: name, unit, median, p10, p90,
runs. Times are wall clock around each operation and a synchronize,
medians of several runs after one warm-up. Exits 3 where torch or a CUDA
GPU is missing (run.sh reports that as a skip).
"""
import argparse
import os
import sys
import time


def stats(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2], v[n // 10], v[(n * 9) // 10], n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", type=int, default=0, help="CUDA device index (PCI bus order)")
    ap.add_argument("--matmul", default="4096", help="matmul sizes N (NxNxN), comma-separated")
    ap.add_argument("--copy-bytes", type=int, default=64 << 20)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    try:
        sizes = [int(x) for x in a.matmul.split(",")]
        if not sizes or any(n < 16 or n > 16384 for n in sizes):
            raise ValueError(a.matmul)
    except ValueError:
        print("torch_bench: --matmul %s: sizes from 16 to 16384, comma-separated" % a.matmul, file=sys.stderr)
        return 2
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means no torch here
        print("torch_bench: no PyTorch here (%s)" % e, file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("torch_bench: PyTorch %s sees no CUDA GPU" % torch.__version__, file=sys.stderr)
        return 3
    dev = torch.device("cuda", a.device)
    torch.cuda.set_device(dev)
    sync = torch.cuda.synchronize
    print("torch_bench: PyTorch %s, CUDA %s, cuBLAS via torch.matmul, %s" % (
        torch.__version__, torch.version.cuda, torch.cuda.get_device_name(dev)), file=sys.stderr)

    def add(name, unit, v):
        med, p10, p90, n = stats(v)
        print("%s\t%s\t%.6g\t%.6g\t%.6g\t%d" % (name, unit, med, p10, p90, n), flush=True)

    rounds = 8 if a.quick else 20
    x = torch.zeros(1, device=dev)
    x.add_(1)
    sync()
    v = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(500):
            x.add_(1)
        v.append((time.perf_counter() - t0) / 500 * 1e6)
        sync()
    add("launch: host enqueue per launch", "us", v)
    v = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        x.add_(1)
        sync()
        v.append((time.perf_counter() - t0) * 1e6)
    add("launch: empty kernel round trip", "us", v)

    size = a.copy_bytes
    rounds = 3 if a.quick else 7
    d0 = torch.empty(size, dtype=torch.uint8, device=dev)
    d1 = torch.empty(size, dtype=torch.uint8, device=dev)
    for pinned, suffix in ((False, ""), (True, ", pinned")):
        h = torch.ones(size, dtype=torch.uint8, pin_memory=pinned)
        d0.copy_(h)
        h.copy_(d0)
        sync()
        h2d, d2h = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            d0.copy_(h, non_blocking=pinned)
            sync()
            t1 = time.perf_counter()
            h.copy_(d0, non_blocking=pinned)
            sync()
            t2 = time.perf_counter()
            h2d.append(size / (t1 - t0) * 1e-9)
            d2h.append(size / (t2 - t1) * 1e-9)
        add("copy host->device (copyin, staged)" if not pinned else "copy host->device (torch, pinned)", "GB/s", h2d)
        add("copy device->host (copyout, staged)" if not pinned else "copy device->host (torch, pinned)", "GB/s", d2h)
        del h
    v = []
    d1.copy_(d0)
    sync()
    for _ in range(rounds):
        t0 = time.perf_counter()
        d1.copy_(d0)
        sync()
        v.append(size / (time.perf_counter() - t0) * 1e-9)
    add("copy device->device (same device)", "GB/s", v)
    del d0, d1

    rounds = 3 if a.quick else 5
    for n, dt, name, tf32 in ((n, *c) for n in sizes for c in (
            (torch.float32, "f32", False), (torch.float16, "f16", False),
            (torch.bfloat16, "bf16", False), (torch.float32, "f32", True))):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        p = torch.rand(n, n, device=dev, dtype=dt)
        q = torch.rand(n, n, device=dev, dtype=dt)
        torch.matmul(p, q)
        sync()
        v = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            torch.matmul(p, q)
            sync()
            v.append(2.0 * n * n * n / (time.perf_counter() - t0) * 1e-12)
        add("matmul %dx%dx%d %s (%s)" % (n, n, n, name, "torch, TF32 allowed" if tf32 else "tensor"), "TFLOP/s", v)
        del p, q
    torch.backends.cuda.matmul.allow_tf32 = False
    return 0


if __name__ == "__main__":
    sys.exit(main())
