"""Writes the PyTorch goldens for integer arithmetic on Ids and randint with a float dtype
(tests/ops/test_ids_arithmetic.cpp).

Run with /usr/bin/python3 (Debian's python3-torch 1.13). integer.txt holds one tensor a line,
    name dtype shape values (the format of ../golden_format.py)
Arithmetic, per case: int64 operands a and b and torch's result per op (bool results as 0/1);
small values, which the format's float64 holds exactly (the wrap at 2^63 is tested in C++).
randint: per case, torch.randint(low, high, shape, dtype, generator seeded with 20261130) for
float32, float64 and int64 (the test holds low, high and shape).
to_ids.<tag>.x / .y: x.long() of a float tensor (truncation toward zero, -0.0, an arange) as int64.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261130)

OPS = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "floor_divide": torch.floor_divide,
    "remainder": torch.remainder, "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le,
    "gt": torch.gt, "ge": torch.ge,
}

RANDINT = [("small", 0, 10, (7,)), ("negative", -50, 13, (3, 4)), ("wide", -5, 2**31 + 7, (6,)),
           ("huge", -5, 2**40, (5,))]


def main():
    r = []
    nonzero = torch.randint(1, 9, (3, 4)) * (torch.randint(0, 2, (3, 4)) * 2 - 1)
    cases = {
        "same": (torch.randint(-20, 21, (3, 4)), nonzero),
        "broadcast": (torch.randint(-20, 21, (2, 1, 3)), torch.tensor([[-7], [3], [5], [-1]])),
        "scalar": (torch.randint(-9, 10, (5,)), torch.tensor(-4)),
        "empty": (torch.zeros(0, 3, dtype=torch.int64), torch.tensor([1, -2, 3])),
    }
    for name, (a, b) in cases.items():
        r += [(f"{name}.a", a), (f"{name}.b", b)]
        for op, f in OPS.items():
            r.append((f"{name}.{op}", f(a, b)))
    for name, low, high, shape in RANDINT:
        for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64"), (torch.int64, "i64")):
            if tag == "f32" and high - low >= 2**32:
                continue  # torch's float32 stream differs there; tapegrad refuses it
            g = torch.Generator().manual_seed(20261130)
            r.append((f"randint_{name}.{tag}", torch.randint(low, high, shape, dtype=dtype, generator=g)))
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        x = torch.cat([torch.tensor([1.7, -1.7, 2.5, -0.0, -2.5, 1e9, -3.99], dtype=dtype),
                       torch.arange(0.0, 5.0, 1.0, dtype=dtype)]).reshape(3, 4)
        r += [(f"to_ids.{tag}.x", x), (f"to_ids.{tag}.y", x.long())]
    with open(os.path.join(HERE, "integer.txt"), "w") as f:
        f.write(f"# Written by make_integer_goldens.py with torch {torch.__version__}.\n")
        for name, t in r:
            f.write(golden_line(name, t) + "\n")


main()
