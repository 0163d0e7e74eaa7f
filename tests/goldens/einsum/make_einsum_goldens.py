"""Writes the PyTorch goldens for einsum (tests/ops/test_einsum.cpp).

Run with /usr/bin/python3 (Debian's python3-torch 1.13, without opt_einsum: operands contracted
left to right). einsum.txt holds one tensor a line,
    name dtype shape values (the format of ../golden_format.py)
For each case and dtype (tag f32, f64): the operands x0, x1, .., an upstream gradient dy, torch's
output y and torch.autograd.grad's dx0, dx1, ..; the equation is in the test.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261129)

CASES = [
    ("matmul", "ij,jk->ik", [(3, 4), (4, 5)]),
    ("batched", "bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("trace", "ii", [(4, 4)]),
    ("diag", "ii->i", [(3, 3)]),
    ("outer", "i,j->ij", [(3,), (4,)]),
    ("sum_all", "ij->", [(2, 3)]),
    ("transpose", "ij->ji", [(2, 3)]),
    ("ellipsis", "...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),
    ("broadcast_label", "bi,bi->b", [(2, 3), (1, 3)]),
    ("repeated_sum", "iij->ji", [(2, 2, 3)]),
    ("implicit_case", "Ab,ba", [(2, 3), (3, 4)]),
    ("chain", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("attention", "bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("hadamard", "ij,ij->ij", [(2, 3), (2, 3)]),
    ("scalar", ",i->i", [(), (3,)]),
    ("bilinear", "bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("zero_size", "ij,jk->ik", [(0, 3), (3, 2)]),
    ("zero_contraction", "ij,jk->ik", [(2, 0), (0, 3)]),
    ("nan_inf", "i,i->i", [(5,), (5,)]),
]


def main():
    r = []
    for name, equation, shapes in CASES:
        bases = [torch.randn(s, dtype=torch.float64) for s in shapes]
        if name == "nan_inf":
            bases[0][1] = float("nan")
            bases[0][2] = float("inf")
            bases[1][3] = float("-inf")
        dy_base = None
        for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
            prefix = f"{name}.{tag}"
            xs = [b.to(dtype).requires_grad_(True) for b in bases]
            y = torch.einsum(equation, *xs)
            if dy_base is None:
                dy_base = torch.randn(y.shape, dtype=torch.float64)
            dy = dy_base.to(dtype)
            dxs = torch.autograd.grad(y, xs, dy)
            for k, x in enumerate(xs):
                r.append((f"{prefix}.x{k}", x))
            r += [(prefix + ".dy", dy), (prefix + ".y", y)]
            for k, dx in enumerate(dxs):
                r.append((f"{prefix}.dx{k}", dx))
    with open(os.path.join(HERE, "einsum.txt"), "w") as f:
        f.write(f"# Written by make_einsum_goldens.py with torch {torch.__version__}.\n")
        for name, t in r:
            f.write(golden_line(name, t) + "\n")


main()
