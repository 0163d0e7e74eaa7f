"""Writes the PyTorch goldens for tests/ops/test_{layer_norm,gelu,cross_entropy,embedding}.cpp.

Run with /usr/bin/python3 (Debian's python3-torch). Each output file holds one tensor a line:
    name dtype shape values (the format of ../golden_format.py)
with every value written exactly as float.hex(). Inputs are small and fixed (seeded); the
gradients are torch.autograd.grad of the output against a given upstream gradient `dy`.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20240613)
DT = torch.float64


def write(filename, records):
    with open(os.path.join(HERE, filename), "w") as f:
        f.write(f"# Written by make_reductions_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


def leaf(t):
    return t.detach().clone().to(DT).requires_grad_(True)


def layer_norm():
    records = []
    # With weight and bias, rank 3.
    x = leaf(torch.randn(2, 3, 5, dtype=DT) * 2 + 0.5)
    w = leaf(torch.randn(5, dtype=DT))
    b = leaf(torch.randn(5, dtype=DT))
    dy = torch.randn(2, 3, 5, dtype=DT)
    eps = 1e-5
    y = F.layer_norm(x, (5,), w, b, eps)
    dx, dw, db = torch.autograd.grad(y, (x, w, b), dy)
    records += [("affine.eps", torch.tensor(eps, dtype=DT)), ("affine.x", x), ("affine.weight", w),
                ("affine.bias", b), ("affine.dy", dy), ("affine.y", y), ("affine.dx", dx),
                ("affine.dweight", dw), ("affine.dbias", db)]
    # Without weight and bias, rank 2, a large mean and a larger eps.
    x = leaf(torch.randn(4, 6, dtype=DT) * 3 + 10)
    dy = torch.randn(4, 6, dtype=DT)
    eps = 1e-3
    y = F.layer_norm(x, (6,), None, None, eps)
    (dx,) = torch.autograd.grad(y, (x,), dy)
    records += [("plain.eps", torch.tensor(eps, dtype=DT)), ("plain.x", x), ("plain.dy", dy),
                ("plain.y", y), ("plain.dx", dx)]
    write("layer_norm.txt", records)


def gelu():
    x = leaf(torch.linspace(-5, 5, 24, dtype=DT).reshape(4, 6) + 0.01 * torch.randn(4, 6, dtype=DT))
    dy = torch.randn(4, 6, dtype=DT)
    y = F.gelu(x, approximate="tanh")
    (dx,) = torch.autograd.grad(y, (x,), dy)
    write("gelu.txt", [("x", x), ("dy", dy), ("y", y), ("dx", dx)])


def cross_entropy():
    records = []
    cases = [
        ("batch", torch.randn(4, 5, dtype=DT) * 3, torch.tensor([0, 4, 2, 2])),
        ("single", torch.randn(5, dtype=DT), torch.tensor(3)),
        ("large", 1000 + torch.randn(3, 4, dtype=DT) * 5, torch.tensor([1, 3, 0])),
    ]
    for name, logits, targets in cases:
        logits = leaf(logits)
        dy = torch.tensor(0.75, dtype=DT)
        loss = F.cross_entropy(logits, targets)
        (dlogits,) = torch.autograd.grad(loss, (logits,), dy)
        records += [(f"{name}.logits", logits), (f"{name}.targets", targets.reshape(-1)),
                    (f"{name}.dy", dy), (f"{name}.loss", loss), (f"{name}.dlogits", dlogits)]
    write("cross_entropy.txt", records)


def embedding():
    weight = leaf(torch.randn(6, 3, dtype=DT))
    ids = torch.tensor([[1, 5, 1, 0], [5, 5, 2, 1]])
    dy = torch.randn(2, 4, 3, dtype=DT)
    y = F.embedding(ids, weight)
    (dweight,) = torch.autograd.grad(y, (weight,), dy)
    write("embedding.txt", [("weight", weight), ("ids", ids), ("dy", dy), ("y", y),
                            ("dweight", dweight)])


if __name__ == "__main__":
    layer_norm()
    gelu()
    cross_entropy()
    embedding()
