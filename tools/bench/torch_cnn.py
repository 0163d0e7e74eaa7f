#!/usr/bin/python3
# The PyTorch-eager peer of tapegrad-bench's convolution workloads (tools/bench/cnn_workload.cpp):
#
# conv2d-resnet: nn.Conv2d(64, 64, 3, padding=1) on x [8, 64, 56, 56] with requires_grad: forward,
#   mean, backward (dx, dw, db); no optimiser.
# cnn-step: examples/cnn.cpp's CNN (Conv2d(1, 16, 3, padding=1), ReLU, MaxPool2d(2),
#   Conv2d(16, 32, 3, padding=1), ReLU, MaxPool2d(2), Flatten, Linear(1568, 10)), one training
#   step on a fixed batch of 32 images: zero_grad, forward, cross_entropy, backward,
#   SGD(lr=0.01, momentum=0.9).
#
# torch.manual_seed(123) before the layers; the inputs torch.rand from a Generator seeded 123, the
# labels torch.randint(0, 10, (32,)) from it next. --serve speaks tapegrad-bench's worker protocol
# (tools/bench/torch_gpt.py's serve); the environment (OpenBLAS preloaded, malloc, thread pools) is
# set as torch_gpt.py sets it.
#
#   /usr/bin/python3 tools/bench/torch_cnn.py --workload conv2d-resnet --steps 5
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_gpt  # noqa: E402  (its environment and serve helpers)

WORKLOADS = ("conv2d-resnet", "cnn-step")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workload", choices=WORKLOADS, default="conv2d-resnet")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=None, help="steps per sample (--serve) or timed")
    p.add_argument("--blas", choices=["openblas", "system"], default="openblas")
    p.add_argument("--malloc", choices=["default", "tuned"], default="default")
    p.add_argument("--openblas-core", default="auto")
    p.add_argument("--serve", action="store_true", help="tapegrad-bench's worker protocol")
    return p.parse_args()


def build(args, torch):
    """The model (for the checksum), the inputs, and one step returning its loss."""
    nn = torch.nn
    gen = torch.Generator().manual_seed(123)
    torch.manual_seed(123)
    if args.workload == "conv2d-resnet":
        conv = nn.Conv2d(64, 64, 3, padding=1)
        x = torch.rand(8, 64, 56, 56, generator=gen).requires_grad_()

        def step():
            x.grad = None if x.grad is None else x.grad.zero_()
            conv.zero_grad(set_to_none=False)
            loss = conv(x).mean()
            loss.backward()
            return loss.item()

        return conv, [x], step
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    images = torch.rand(32, 1, 28, 28, generator=gen)
    labels = torch.randint(0, 10, (32,), generator=gen)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        optimizer.zero_grad(set_to_none=False)
        loss = nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    return model, [images], step


def main():
    args = parse_args()
    torch_gpt.reexec_if_needed(args)
    import torch

    torch.set_num_threads(args.threads)
    model, inputs, step = build(args, torch)
    if args.serve:
        # The checksum covers the inputs too: torch_gpt.serve sums the model's parameters.
        class WithInputs:
            def parameters(self):
                return list(model.parameters()) + inputs

        torch_gpt.serve(args, torch, WithInputs(), step)
        return
    steps = args.steps or 5
    times, losses = [], []
    for i in range(1 + steps):
        t0 = time.perf_counter()
        losses.append(step())
        if i > 0:
            times.append(time.perf_counter() - t0)
    print(f"PyTorch eager {args.workload}: median {statistics.median(times) * 1e3:.2f} ms/step, "
          f"min {min(times) * 1e3:.2f} ms, loss step 1 {losses[0]:.8f}; "
          f"peak RSS {torch_gpt.peak_rss_kib() / 1024:.0f} MB")


if __name__ == "__main__":
    main()
