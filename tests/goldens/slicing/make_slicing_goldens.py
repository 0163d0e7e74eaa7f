"""Writes the PyTorch goldens for slice (x[start:end:step]), masked_select and nonzero
(tests/ops/test_slice.cpp, test_masked_select.cpp).

Run with /usr/bin/python3 (Debian's python3-torch 1.13). slicing.txt holds one tensor a line,
    name dtype shape values (the format of ../golden_format.py)
slice and masked_select, per case and dtype (tag f32, f64): the input x, an upstream gradient dy,
torch's output y and torch.autograd.grad's dx; masked_select's mask as 0/1 (f64, what tapegrad
takes: torch's bool). nonzero: the input x (f64) and torch's indices (i64).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261128)
INF = float("inf")
NAN = float("nan")


def graded(records, name, x_base, fn, extra=()):
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        prefix = f"{name}.{tag}"
        x = x_base.to(dtype).requires_grad_(True)
        y = fn(x)
        dy = torch.randn(y.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(len(records))).to(dtype)
        (dx,) = torch.autograd.grad(y, (x,), dy, allow_unused=True)
        if dx is None:
            dx = torch.zeros_like(x)
        records += [(prefix + ".x", x), (prefix + ".dy", dy), (prefix + ".y", y), (prefix + ".dx", dx)]
        records += [(prefix + "." + k, v) for k, v in extra]


def slice_case(records, name, shape, dim, start, end, step):
    x = torch.randn(shape, dtype=torch.float64)
    graded(records, name, x, lambda t: torch.ops.aten.slice(t, dim, start, end, step))


def masked_case(records, name, x_shape, mask_shape, special=()):
    x = torch.randn(x_shape, dtype=torch.float64)
    flat = x.reshape(-1)
    for i, v in special:
        flat[i] = v
    mask = torch.rand(mask_shape) < 0.5
    graded(records, name, x, lambda t: torch.masked_select(t, mask), extra=(("mask", mask.double()),))


def nonzero_case(records, name, x):
    records += [(name + ".x", x.double()), (name + ".indices", torch.nonzero(x))]


def main():
    r = []
    slice_case(r, "slice_step2", (4, 7), 1, 1, 6, 2)
    slice_case(r, "slice_neg_start", (5, 3), 0, -3, None, 1)
    slice_case(r, "slice_neg_end", (2, 6), -1, 0, -2, 1)
    slice_case(r, "slice_clamped", (3, 5), 1, -100, 100, 3)
    slice_case(r, "slice_past_end", (3, 4), 1, 7, 9, 1)
    slice_case(r, "slice_end_before_start", (3, 4), 1, 3, 1, 1)
    slice_case(r, "slice_big_step", (2, 5, 2), 1, 1, None, 10)
    slice_case(r, "slice_rank3_last", (2, 3, 8), -1, 2, 8, 3)
    slice_case(r, "slice_zero_size", (2, 0, 3), 2, 0, 3, 2)
    masked_case(r, "masked_select", (3, 4), (3, 4), special=((1, NAN), (5, INF), (6, -INF)))
    masked_case(r, "masked_select_mask_broadcast", (3, 4), (4,))
    masked_case(r, "masked_select_x_broadcast", (4,), (3, 4))
    masked_case(r, "masked_select_both_broadcast", (3, 1), (1, 5))
    masked_case(r, "masked_select_0d", (), (2, 3))
    masked_case(r, "masked_select_empty", (0, 3), (3,))
    x = torch.randint(-1, 2, (3, 4)).double()
    x[0, 1] = NAN
    nonzero_case(r, "nonzero", x)
    nonzero_case(r, "nonzero_rank3", torch.randint(0, 2, (2, 3, 2)).double())
    nonzero_case(r, "nonzero_0d", torch.tensor(3.0, dtype=torch.float64))
    nonzero_case(r, "nonzero_0d_zero", torch.tensor(0.0, dtype=torch.float64))
    nonzero_case(r, "nonzero_empty", torch.zeros(0, 3, dtype=torch.float64))
    nonzero_case(r, "nonzero_none", torch.zeros(2, 2, dtype=torch.float64))
    with open(os.path.join(HERE, "slicing.txt"), "w") as f:
        f.write(f"# Written by make_slicing_goldens.py with torch {torch.__version__}.\n")
        for name, t in r:
            f.write(golden_line(name, t) + "\n")


main()
