"""Writes the PyTorch goldens for tests/ops/test_{leaky_relu,elu,softplus,mish,gelu}.cpp.

Run with /usr/bin/python3 (Debian's python3-torch 1.13). activations2.txt holds one tensor a line
in the format of ../golden_format.py (values exact, as float.hex()), as activations.txt does; a
file of its own so that activations.txt stays as it was. For each op, arguments and dtype: the
input, an upstream gradient dy, torch's output y and the gradient torch.autograd.grad gives for dy.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261127)


def unary(records, name, fn, dtype, tag):
    # Values across the interesting range in a [3, 4, 5] tensor, with the kinks (0 and -0), both
    # sides of softplus's threshold (20 stays on the log1p side: the test is beta·x > threshold)
    # and large magnitudes, where exp overflows or underflows.
    x = torch.randn(3, 4, 5, dtype=torch.float64) * 4
    x.view(-1)[:8] = torch.tensor([0.0, -0.0, 20.0, -20.0, 20.5, 10.0, 100.0, -100.0],
                                  dtype=torch.float64)
    x = x.to(dtype).requires_grad_(True)
    dy = torch.randn(3, 4, 5, dtype=torch.float64).to(dtype)
    y = fn(x)
    (dx,) = torch.autograd.grad(y, (x,), dy)
    name = f"{name}.{tag}"
    records += [(name + ".x", x), (name + ".dy", dy), (name + ".y", y), (name + ".dx", dx)]


def main():
    records = []
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        unary(records, "leaky_relu", F.leaky_relu, dtype, tag)
        unary(records, "leaky_relu_0.2", lambda x: F.leaky_relu(x, 0.2), dtype, tag)
        unary(records, "elu", F.elu, dtype, tag)
        unary(records, "elu_alpha0.5", lambda x: F.elu(x, 0.5), dtype, tag)
        unary(records, "softplus", F.softplus, dtype, tag)
        unary(records, "softplus_beta2_threshold10", lambda x: F.softplus(x, 2.0, 10.0), dtype,
              tag)
        unary(records, "mish", F.mish, dtype, tag)
    # Drawn after the others, so that their inputs stay as they were.
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        unary(records, "gelu_none", F.gelu, dtype, tag)
    with open(os.path.join(HERE, "activations2.txt"), "w") as f:
        f.write(f"# Written by make_activations2_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


main()
