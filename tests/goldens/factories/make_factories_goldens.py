"""Writes the PyTorch goldens for graph/factory.cpp's torch factories (tests/graph/
test_factory.cpp): arange, linspace, logspace, eye and the random ones from a seed (with
ops/bernoulli.cpp's bernoulli and the in-place Tensor.normal_ / uniform_).

Run with /usr/bin/python3 (Debian's python3-torch 1.13, x86-64, AVX2 kernels). factories.txt holds
one tensor a line, name dtype shape values (the format of ../golden_format.py). Every case stays
below 32768 values, torch's grain: the kernels then run on one thread whatever torch's count.
  arange.<i>.<tag>    torch.arange(start, end, step, dtype) for ARANGE[i] (args.arange.<i>)
  linspace.<i>.<tag>  torch.linspace(start, end, steps, dtype) for LINSPACE[i]
  logspace.<i>.<tag>  torch.logspace(start, end, steps, base, dtype) for LOGSPACE[i]
  eye.<n>.<m>         torch.eye(n, m)
  seq.<seed>.<k>      the draw named k of sequence() after torch.manual_seed(seed); a draw that
                      gives several records (a long randperm's slices) names them k.<part>
  bernoulli_p.<tag>   the probabilities sequence()'s bernoulli draws take (not drawn from the
                      default generator)
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = ((torch.float32, "f32"), (torch.float64, "f64"))

ARANGE = [(0.0, 5.0, 1.0), (0.1, 7.3, 0.37), (-3.0, 5.0, 0.1), (1.0, 0.0, -0.013),
          (0.0, 100.0, 0.3), (2.5, 9.1, 1.1), (0.0, 40.0, 1 / 3), (-7.25, 1000.5, 0.71),
          (1e6, 1e6 + 3, 0.1), (0.0, 0.0, 1.0), (0.0, 1.0, 2.0), (-1.5, 2.5, 0.25), (3.0, 3.5, 1.0)]
LINSPACE = [(0.1, 7.3, 50), (-3.0, 5.0, 37), (1.0, 0.0, 101), (0.0, 1.0, 7), (-1.7, 3.3, 33),
            (0.3, 0.3, 5), (5.0, -2.0, 2), (0.0, 10.0, 1000), (2.0, 9.0, 1), (2.0, 9.0, 0),
            (-1e3, 1e-3, 17), (0.1, 0.9, 16), (1 / 3, 2 / 3, 15), (-5.0, 5.0, 1001)]
LOGSPACE = [(0.1, 7.3, 50, 10.0), (-3.0, 5.0, 37, 2.0), (1.0, 0.0, 101, 10.0), (0.0, 1.0, 7, 10.0),
            (-1.7, 3.3, 33, math.e), (2.0, 9.0, 1, 10.0), (2.0, 9.0, 0, 10.0),
            (-10.0, 10.0, 1000, 10.0), (0.3, 0.3, 5, 3.0), (-45.5, 38.2, 301, 10.0),
            (1.0, 3.0, 3, -2.0), (0.5, 1.5, 3, -2.0), (0.0, 3.0, 4, 0.0), (-2.0, 40.0, 43, 10.0)]
EYE = [(0, 0), (1, 1), (3, 3), (2, 4), (4, 2), (0, 3)]
SEEDS = (0, 123, 20261127)


# The probabilities of sequence()'s bernoulli(p) draws: 0 and 1 included, from their own generator.
BERNOULLI_P = torch.cat([torch.tensor([0.0, 1.0, 0.5]),
                         torch.rand(37, generator=torch.Generator().manual_seed(77))]).reshape(5, 8)


def slices(t):
    """A long permutation's head, tail and every 1009th value: enough to pin the shuffle."""
    return {"head": t[:16], "tail": t[-16:], "strided": t[::1009]}


def sequence():
    """The random factories in one stream: caches and engine state carry from one to the next."""
    f32, f64 = torch.float32, torch.float64
    return [
        ("randn.2x3", lambda: torch.randn(2, 3)),
        ("randn.20", lambda: torch.randn(20)),
        ("randn.5.f64", lambda: torch.randn(5, dtype=f64)),
        ("randn.4x4", lambda: torch.randn(4, 4)),
        ("rand.4", lambda: torch.rand(4)),
        ("randn.3x7.f64", lambda: torch.randn(3, 7, dtype=f64)),
        ("randint.0.10.3x4", lambda: torch.randint(0, 10, (3, 4))),
        ("randint.-5.1099511627776.6", lambda: torch.randint(-5, 2**40, (6,))),
        ("randint.0.7.2x2", lambda: torch.randint(7, (2, 2))),
        ("randn.1", lambda: torch.randn(1)),
        ("randn.1.f64", lambda: torch.randn(1, dtype=f64)),
        ("randn.33", lambda: torch.randn(33, dtype=f32)),
        ("bernoulli.f32", lambda: torch.bernoulli(BERNOULLI_P)),
        ("bernoulli.f64", lambda: torch.bernoulli(BERNOULLI_P.double())),
        ("bernoulli_scalar.2x3", lambda: torch.bernoulli(torch.zeros(2, 3), 0.3)),
        ("bernoulli_scalar.7.f64", lambda: torch.bernoulli(torch.zeros(7, dtype=f64), 0.75)),
        ("randperm.10", lambda: torch.randperm(10)),
        ("randperm.1", lambda: torch.randperm(1)),
        ("randperm.0", lambda: torch.randperm(0)),
        ("randperm.12.f64", lambda: torch.randperm(12, dtype=f64)),
        ("randperm.100003", lambda: slices(torch.randperm(100003))),
        ("normal_.3x4", lambda: torch.empty(3, 4).normal_(2.0, 0.5)),
        ("normal_.20.f64", lambda: torch.empty(20, dtype=f64).normal_(-1.0, 3.0)),
        ("uniform_.5", lambda: torch.empty(5).uniform_(-2.0, 3.0)),
        ("uniform_.2x2.f64", lambda: torch.empty(2, 2, dtype=f64).uniform_()),
        ("randn.3.after", lambda: torch.randn(3)),
    ]


def main():
    r = []
    for i, (s, e, st) in enumerate(ARANGE):
        r.append((f"args.arange.{i}", torch.tensor([s, e, st], dtype=torch.float64)))
        for dtype, tag in DTYPES:
            r.append((f"arange.{i}.{tag}", torch.arange(s, e, st, dtype=dtype)))
    for i, (s, e, n) in enumerate(LINSPACE):
        r.append((f"args.linspace.{i}", torch.tensor([s, e, n], dtype=torch.float64)))
        for dtype, tag in DTYPES:
            r.append((f"linspace.{i}.{tag}", torch.linspace(s, e, n, dtype=dtype)))
    for i, (s, e, n, b) in enumerate(LOGSPACE):
        r.append((f"args.logspace.{i}", torch.tensor([s, e, n, b], dtype=torch.float64)))
        for dtype, tag in DTYPES:
            r.append((f"logspace.{i}.{tag}", torch.logspace(s, e, n, b, dtype=dtype)))
    for n, m in EYE:
        r.append((f"eye.{n}.{m}", torch.eye(n, m)))
    for seed in SEEDS:
        torch.manual_seed(seed)
        for name, draw in sequence():
            got = draw()
            parts = got.items() if isinstance(got, dict) else [(None, got)]
            for part, t in parts:
                r.append((f"seq.{seed}.{name}" + (f".{part}" if part else ""), t))
    r.append(("bernoulli_p.f32", BERNOULLI_P))
    with open(os.path.join(HERE, "factories.txt"), "w") as f:
        f.write(f"# Written by make_factories_goldens.py with torch {torch.__version__}.\n")
        for name, t in r:
            f.write(golden_line(name, t) + "\n")


main()
