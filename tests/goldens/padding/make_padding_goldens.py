"""Writes the PyTorch goldens for pad, diagonal, diag and one_hot (tests/ops/test_{pad,diagonal,
one_hot}.cpp).

Run with /usr/bin/python3 (Debian's python3-torch 1.13). padding.txt holds one tensor a line,
    name dtype shape values (the format of ../golden_format.py)
For each case and dtype (tag f32, f64): the input x, an upstream gradient dy, torch's output y and
torch.autograd.grad's dx. one_hot.<case> holds the ids (i64) and torch's result (i64).
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261129)


def case(records, name, fn, shape):
    x0 = torch.randn(shape, dtype=torch.float64)
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        prefix = f"{name}.{tag}"
        x = x0.to(dtype).requires_grad_(True)
        y = fn(x)
        dy = torch.randn(y.shape, dtype=torch.float64).to(dtype)
        (dx,) = torch.autograd.grad(y, (x,), dy)
        records += [(prefix + ".x", x), (prefix + ".dy", dy), (prefix + ".y", y),
                    (prefix + ".dx", dx)]


# name: (pad, mode, value, shape); tests/ops/test_pad.cpp lists the same.
PADS = {
    "pad_constant": ((1, 2), "constant", 0.0, (2, 3)),
    "pad_constant_value": ((0, 1, 2, 0), "constant", -1.5, (2, 3)),
    "pad_constant_crop": ((-1, 2, 1, -1), "constant", 0.25, (3, 4)),
    "pad_constant_3d": ((1, 1, 0, 0, 2, 1), "constant", 0.0, (2, 2, 3)),
    "pad_reflect_1d": ((2, 3), "reflect", 0.0, (2, 3, 4)),
    "pad_reflect_2d": ((1, 2, 2, 1), "reflect", 0.0, (1, 2, 3, 4)),
    "pad_reflect_negative": ((-1, 2), "reflect", 0.0, (2, 5)),
    "pad_replicate_1d": ((3, 1), "replicate", 0.0, (2, 3)),
    "pad_replicate_2d": ((2, 0, 1, 3), "replicate", 0.0, (2, 3, 2)),
    "pad_replicate_3d": ((1, 1, 1, 0, 0, 2), "replicate", 0.0, (1, 1, 2, 2, 3)),
    "pad_circular_1d": ((2, 3), "circular", 0.0, (1, 2, 4)),
    "pad_circular_2d": ((1, 2, 2, 1), "circular", 0.0, (1, 2, 3, 4)),
    "pad_circular_negative": ((-1, 2), "circular", 0.0, (1, 2, 5)),
}


def main():
    r = []
    for name, (pads, mode, value, shape) in PADS.items():
        if mode == "constant":
            case(r, name, lambda x: F.pad(x, pads, mode, value), shape)
        else:
            case(r, name, lambda x: F.pad(x, pads, mode), shape)
    case(r, "diagonal", lambda x: torch.diagonal(x), (3, 4))
    case(r, "diagonal_offset", lambda x: torch.diagonal(x, 1), (3, 4))
    case(r, "diagonal_below", lambda x: torch.diagonal(x, -2), (4, 3))
    case(r, "diagonal_dims", lambda x: torch.diagonal(x, 1, 2, 0), (3, 2, 4))
    case(r, "diagonal_negative_dims", lambda x: torch.diagonal(x, -1, -1, -2), (2, 3, 3))
    case(r, "diagonal_empty", lambda x: torch.diagonal(x, 5), (3, 4))
    case(r, "diag_matrix", lambda x: torch.diag(x), (3,))
    case(r, "diag_matrix_offset", lambda x: torch.diag(x, 2), (3,))
    case(r, "diag_matrix_below", lambda x: torch.diag(x, -1), (2,))
    case(r, "diag_vector", lambda x: torch.diag(x, -1), (4, 3))
    for name, ids, classes in (("one_hot", [[0, 2], [1, 4]], -1), ("one_hot_classes", [3, 0, 3], 5),
                               ("one_hot_0d", 2, 3)):
        t = torch.tensor(ids, dtype=torch.int64)
        r += [(name + ".ids", t), (name + ".y", F.one_hot(t, classes))]
    with open(os.path.join(HERE, "padding.txt"), "w") as f:
        f.write(f"# Written by make_padding_goldens.py with torch {torch.__version__}.\n")
        for name, t in r:
            f.write(golden_line(name, t) + "\n")


main()
