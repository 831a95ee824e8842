#!/usr/bin/env python3
"""The models of bench/bench_train.c in PyTorch (CPU) or tinygrad (its CPU
backend), for samples/s side by side (bench/train_compare.sh runs all three).

Same models, batch and optimizer as hcq's: the MLP 784-256-10 (relu) and
the CNN of examples/train_cnn.c (3x3 convolutions of 16 and 32 channels
with batch norm, relu and 2x2 max pooling, then 1568-128-10), cross-entropy, Adam
(lr 1e-3), batches of 128 from a fixed set of random images in memory.
Each step is forward, backward and the update; tinygrad's is TinyJit'd.
After `warmup` steps, `steps` are timed to the last one's completion.

    python3 bench/train_reference.py torch mlp [--steps N] [--batch B] [--threads T]
Prints one line: "<framework> <model> <samples/s> samples/s".
"""
import argparse
import os
import time


def torch_run(model, batch, steps, warmup, threads):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(1)
    if model == "mlp":
        net = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    else:
        net = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(1568, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    nb = 8
    xs = torch.rand(nb, batch, 1, 28, 28)
    ys = torch.randint(0, 10, (nb, batch))

    def step(i):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(net(xs[i % nb]), ys[i % nb])
        loss.backward()
        opt.step()
        return loss

    for i in range(warmup):
        step(i)
    t0 = time.perf_counter()
    for i in range(steps):
        loss = step(i)
    loss.item()
    return steps * batch / (time.perf_counter() - t0)


def tinygrad_run(model, batch, steps, warmup, threads):
    os.environ.setdefault("DEV", "CPU")
    os.environ.setdefault("TRAINING", "1")
    from tinygrad import Tensor, TinyJit, nn

    Tensor.manual_seed(1)

    class MLP:
        def __init__(self):
            self.l1, self.l2 = nn.Linear(784, 256), nn.Linear(256, 10)

        def __call__(self, x):
            return self.l2(self.l1(x.flatten(1)).relu())

    class CNN:
        def __init__(self):
            self.c1, self.c2 = nn.Conv2d(1, 16, 3, padding=1), nn.Conv2d(16, 32, 3, padding=1)
            self.b1, self.b2 = nn.BatchNorm2d(16), nn.BatchNorm2d(32)
            self.l1, self.l2 = nn.Linear(1568, 128), nn.Linear(128, 10)

        def __call__(self, x):
            x = self.b1(self.c1(x)).relu().max_pool2d(2)
            x = self.b2(self.c2(x)).relu().max_pool2d(2)
            return self.l2(self.l1(x.flatten(1)).relu())

    net = MLP() if model == "mlp" else CNN()
    opt = nn.optim.Adam(nn.state.get_parameters(net), lr=1e-3)
    nb = 8
    xs = [Tensor.rand(batch, 1, 28, 28).realize() for _ in range(nb)]
    ys = [Tensor.randint(batch, high=10).realize() for _ in range(nb)]

    @TinyJit
    def step(x, y):
        opt.zero_grad()
        loss = net(x).sparse_categorical_crossentropy(y).backward()
        opt.step()
        return loss.realize()

    for i in range(warmup):
        step(xs[i % nb], ys[i % nb])
    t0 = time.perf_counter()
    for i in range(steps):
        loss = step(xs[i % nb], ys[i % nb])
    loss.item()
    return steps * batch / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("framework", choices=["torch", "tinygrad"])
    ap.add_argument("model", choices=["mlp", "cnn"])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: its default)")
    a = ap.parse_args()
    run = torch_run if a.framework == "torch" else tinygrad_run
    sps = run(a.model, a.batch, a.steps, a.warmup, a.threads)
    print(f"{a.framework} {a.model} {sps:.0f} samples/s")


if __name__ == "__main__":
    main()
