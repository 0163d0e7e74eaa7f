"""Writes the PyTorch goldens for tests/ops/test_{relu,tanh,sigmoid,silu,log_softmax,where}.cpp.

Run with /usr/bin/python3 (Debian's python3-torch 1.13). activations.txt holds one tensor a line:
    name dtype shape values (the format of ../golden_format.py)
every value written exactly as float.hex() (float32 values widened to double, so still exact).
For each op and dtype: the input(s), an upstream gradient dy, torch's output y and the gradients
torch.autograd.grad gives for dy. where_scalar.<tag>.*: torch.where with a Python number for a
branch (other, self, both), fixed values written after the drawn ones, so those stayed as they were.
softmax_0d / log_softmax_0d.<tag>.*: the ops on 0-D tensors (x of 1, ±inf, nan; dim 0 and -1),
y and dx for dy = 2.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261122)


def leaf(t, dtype):
    return t.detach().clone().to(dtype).requires_grad_(True)


def unary(records, op, fn, dtype, tag):
    # Values across the interesting range, zeros included, in a [3, 4, 5] tensor.
    x = leaf(torch.randn(3, 4, 5, dtype=torch.float64) * 4, dtype)
    with torch.no_grad():
        x[0, 0, 0] = 0.0
        x[0, 0, 1] = 20.0
        x[0, 0, 2] = -20.0
    dy = torch.randn(3, 4, 5, dtype=torch.float64).to(dtype)
    y = fn(x)
    (dx,) = torch.autograd.grad(y, (x,), dy)
    name = f"{op}.{tag}"
    records += [(name + ".x", x), (name + ".dy", dy), (name + ".y", y), (name + ".dx", dx)]


def main():
    records = []
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        unary(records, "relu", torch.relu, dtype, tag)
        unary(records, "tanh", torch.tanh, dtype, tag)
        unary(records, "sigmoid", torch.sigmoid, dtype, tag)
        unary(records, "silu", torch.nn.functional.silu, dtype, tag)
        for dim in (-1, 1):
            unary(records, f"log_softmax_dim{dim}", lambda x: torch.log_softmax(x, dim), dtype, tag)
        # where: cond [4, 1], a [4, 5], b [5] broadcast to [4, 5].
        cond = (torch.rand(4, 1) > 0.5).to(dtype)
        a = leaf(torch.randn(4, 5, dtype=torch.float64), dtype)
        b = leaf(torch.randn(5, dtype=torch.float64), dtype)
        dy = torch.randn(4, 5, dtype=torch.float64).to(dtype)
        y = torch.where(cond != 0, a, b)
        da, db = torch.autograd.grad(y, (a, b), dy)
        records += [(f"where.{tag}.cond", cond), (f"where.{tag}.a", a), (f"where.{tag}.b", b),
                    (f"where.{tag}.dy", dy), (f"where.{tag}.y", y), (f"where.{tag}.da", da),
                    (f"where.{tag}.db", db)]
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        # cond [2, 1] against x [3]; 0.1 is rounded to x's dtype, as torch's wrapped number is.
        cond = torch.tensor([[1.0], [0.0]], dtype=dtype)
        x = leaf(torch.tensor([1.5, -2.0, float("nan")], dtype=torch.float64), dtype)
        dy = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=dtype)
        p = f"where_scalar.{tag}"
        y_other = torch.where(cond != 0, x, 0.1)
        (dx_other,) = torch.autograd.grad(y_other, (x,), dy)
        y_self = torch.where(cond != 0, -0.1, x)
        (dx_self,) = torch.autograd.grad(y_self, (x,), dy)
        records += [(f"{p}.cond", cond), (f"{p}.x", x), (f"{p}.dy", dy),
                    (f"{p}.y_other", y_other), (f"{p}.dx_other", dx_other),
                    (f"{p}.y_self", y_self), (f"{p}.dx_self", dx_self)]
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        for op in ("softmax", "log_softmax"):
            for i, v in enumerate((1.0, float("inf"), float("-inf"), float("nan"))):
                for dim in (0, -1):
                    x = torch.tensor(v, dtype=dtype, requires_grad=True)
                    y = getattr(torch, op)(x, dim)
                    (dx,) = torch.autograd.grad(y, (x,), torch.tensor(2.0, dtype=dtype))
                    p = f"{op}_0d.{tag}.{i}.dim{dim}"
                    records += [(f"{p}.x", x), (f"{p}.y", y), (f"{p}.dx", dx)]
    both = torch.where(torch.tensor([1.0, 0.0, 1.0]) != 0, 0.1, -2.5)  # float32, torch's default
    records.append(("where_scalar.both", both))
    with open(os.path.join(HERE, "activations.txt"), "w") as f:
        f.write(f"# Written by make_activations_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


main()
