"""Writes the PyTorch goldens for cummax, cummin and logcumsumexp (tests/ops/test_cummax_cummin.cpp,
test_logcumsumexp.cpp).

Run with /usr/bin/python3 (Debian's python3-torch 1.13). cumulative.txt holds one tensor a line,
    name dtype shape values (the format of ../golden_format.py)
For each case and dtype (tag f32, f64): the input x (ties from small integers, NaN and ±inf where
the case says), an upstream gradient dy, torch's values y, its indices (i64; cummax and cummin
only) and torch.autograd.grad's dx.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261127)
INF = float("inf")
NAN = float("nan")


def case(records, name, shape, fn, ties=True, special=(), positive_dy=False):
    base = torch.randint(-3, 4, shape).double() if ties else torch.randn(shape, dtype=torch.float64)
    flat = base.reshape(-1)
    for i, v in special:
        flat[i] = v
    dy_base = None
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        prefix = f"{name}.{tag}"
        x = base.to(dtype).requires_grad_(True)
        out = fn(x)
        values, indices = (out.values, out.indices) if isinstance(out, tuple) else (out, None)
        if dy_base is None:
            dy_base = torch.randn(values.shape, dtype=torch.float64)
            if positive_dy:
                dy_base = dy_base.abs() + 0.1
        dy = dy_base.to(dtype)
        (dx,) = torch.autograd.grad(values, (x,), dy)
        records += [(prefix + ".x", x), (prefix + ".dy", dy), (prefix + ".y", values)]
        if indices is not None:
            records.append((prefix + ".indices", indices))
        records.append((prefix + ".dx", dx))


def main():
    r = []
    for op in ("cummax", "cummin"):
        f = getattr(torch, op)
        case(r, op, (3, 7), lambda x: f(x, 1))
        case(r, op + "_nan", (3, 7), lambda x: f(x, 1),
             special=((2, NAN), (4, NAN), (8, INF), (9, -INF), (15, NAN), (20, NAN)))
        case(r, op + "_dim0", (5, 2, 3), lambda x: f(x, 0), special=((7, NAN),))
        case(r, op + "_neg_dim", (2, 3, 4), lambda x: f(x, -2), ties=False)
        case(r, op + "_0d", (), lambda x: f(x, 0))
        case(r, op + "_empty", (0, 3), lambda x: f(x, 0))
        case(r, op + "_empty_dim", (2, 0), lambda x: f(x, 1))
    lcse = torch.logcumsumexp
    case(r, "logcumsumexp", (3, 6), lambda x: lcse(x, 1), ties=False, positive_dy=True)
    case(r, "logcumsumexp_ties", (4, 5), lambda x: lcse(x, 0), positive_dy=True)
    case(r, "logcumsumexp_long", (2, 40), lambda x: lcse(x, -1), ties=False, positive_dy=True)
    case(r, "logcumsumexp_mixed_dy", (3, 5), lambda x: lcse(x, 1), ties=False)
    case(r, "logcumsumexp_inf", (4, 5), lambda x: lcse(x, 1), ties=False, positive_dy=True,
         special=((0, -INF), (1, -INF), (5, INF), (7, INF), (8, -INF), (11, NAN), (15, -INF),
                  (16, INF), (17, -INF)))
    case(r, "logcumsumexp_0d", (), lambda x: lcse(x, 0), ties=False)
    case(r, "logcumsumexp_empty", (2, 0), lambda x: lcse(x, 1))
    with open(os.path.join(HERE, "cumulative.txt"), "w") as f:
        f.write(f"# Written by make_cumulative_goldens.py with torch {torch.__version__}.\n")
        for name, t in r:
            f.write(golden_line(name, t) + "\n")


main()
