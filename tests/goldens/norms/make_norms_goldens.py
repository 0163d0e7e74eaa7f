"""Writes the PyTorch goldens for tests/ops/test_group_norm.cpp and tests/nn/test_norms.cpp.

Run with /usr/bin/python3 (Debian's python3-torch 1.13). norms.txt holds one tensor a line in the
format of ../golden_format.py. For each group_norm case and dtype: the input x, weight w and bias b
(when the case has them), an upstream gradient dy, torch's output y and the gradients
torch.autograd.grad gives for dy.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261127)

# name: (input shape, num_groups, affine, eps)
GROUP_NORM_CASES = {
    "g3_affine": ((2, 6, 3, 3), 3, True, 1e-5),
    "g2_plain": ((2, 4, 5), 2, False, 1e-5),
    "rank2_g2": ((3, 4), 2, True, 1e-5),
    "g1_eps": ((2, 3, 2, 2, 2), 1, True, 1e-3),
}


def group_norm(records, name, shape, groups, affine, eps, dtype, tag):
    channels = shape[1]
    # An offset mean and a spread, so the normalisation does real work.
    x = (torch.randn(*shape, dtype=torch.float64) * 3 + 2).to(dtype).requires_grad_(True)
    inputs = [x]
    w = b = None
    if affine:
        w = torch.randn(channels, dtype=torch.float64).to(dtype).requires_grad_(True)
        b = torch.randn(channels, dtype=torch.float64).to(dtype).requires_grad_(True)
        inputs += [w, b]
    dy = torch.randn(*shape, dtype=torch.float64).to(dtype)
    y = F.group_norm(x, groups, w, b, eps)
    grads = torch.autograd.grad(y, inputs, dy)
    key = f"group_norm.{name}.{tag}"
    records += [(key + ".x", x), (key + ".dy", dy), (key + ".y", y), (key + ".dx", grads[0])]
    if affine:
        records += [(key + ".w", w), (key + ".b", b), (key + ".dw", grads[1]),
                    (key + ".db", grads[2])]


def main():
    records = []
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        for name, (shape, groups, affine, eps) in GROUP_NORM_CASES.items():
            group_norm(records, name, shape, groups, affine, eps, dtype, tag)
    with open(os.path.join(HERE, "norms.txt"), "w") as f:
        f.write(f"# Written by make_norms_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


main()
