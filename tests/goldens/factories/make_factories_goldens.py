"""Writes the PyTorch goldens for graph/factory.cpp's torch factories (tests/graph/
test_factories_torch.cpp): arange, linspace, eye and the random ones from a seed.

Run with /usr/bin/python3 (Debian's python3-torch 1.13, x86-64, AVX2 kernels). factories.txt holds
one tensor a line, name dtype shape values (the format of ../golden_format.py). Every case stays
below 32768 values, torch's grain: the kernels then run on one thread whatever torch's count.
  arange.<i>.<tag>    torch.arange(start, end, step, dtype) for ARANGE[i] (args.arange.<i>)
  linspace.<i>.<tag>  torch.linspace(start, end, steps, dtype) for LINSPACE[i]
  eye.<n>.<m>         torch.eye(n, m)
  seq.<seed>.<k>      the k-th draw of SEQUENCE after torch.manual_seed(seed)
"""
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
EYE = [(0, 0), (1, 1), (3, 3), (2, 4), (4, 2), (0, 3)]
SEEDS = (0, 123, 20261127)


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
    for n, m in EYE:
        r.append((f"eye.{n}.{m}", torch.eye(n, m)))
    for seed in SEEDS:
        torch.manual_seed(seed)
        for name, draw in sequence():
            r.append((f"seq.{seed}.{name}", draw()))
    with open(os.path.join(HERE, "factories.txt"), "w") as f:
        f.write(f"# Written by make_factories_goldens.py with torch {torch.__version__}.\n")
        for name, t in r:
            f.write(golden_line(name, t) + "\n")


main()
