"""Writes the PyTorch goldens for nn/init.h's torch.nn.init functions (tests/nn/test_init.cpp).

Run with /usr/bin/python3 (Debian's python3-torch 1.13, x86-64, AVX2 kernels). init.txt holds one
tensor a line, name dtype shape values (the format of ../golden_format.py):
  <case>.<tag>  the tensor after torch.manual_seed(SEED) and the case's init function (tag f32,
                f64), the cases and their arguments as CASES lists them
  gain.<name>   torch.nn.init.calculate_gain(name[, param]) as a float64 scalar
  orthogonal.<i>.<tag>        orthogonal_(t, gain) for ORTHOGONAL[i] after the seed, the shape
                              and gain in args.orthogonal.<i>
  orthogonal.<i>.<tag>.after  torch.randn(5) drawn next: where orthogonal_ left the generator
"""
import math
import os
import sys

import torch
from torch.nn import init

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20261127

# name: (shape, function); tests/nn/test_init.cpp calls the same with the same arguments.
CASES = {
    "uniform": ((3, 4), lambda t: init.uniform_(t, -0.5, 2.0)),
    "normal": ((5, 7), lambda t: init.normal_(t, 1.0, 0.3)),
    "normal_small": ((2, 3), lambda t: init.normal_(t)),
    "constant": ((2, 2), lambda t: init.constant_(t, 0.1)),
    "zeros": ((3,), init.zeros_),
    "ones": ((2, 1), init.ones_),
    "xavier_uniform": ((4, 6), lambda t: init.xavier_uniform_(t, init.calculate_gain("relu"))),
    "xavier_uniform_conv": ((3, 2, 5), init.xavier_uniform_),
    "xavier_normal": ((20, 10), init.xavier_normal_),
    "kaiming_uniform": ((5, 4), init.kaiming_uniform_),
    "kaiming_uniform_sqrt5": ((6, 7), lambda t: init.kaiming_uniform_(t, a=math.sqrt(5))),
    "kaiming_uniform_conv": ((8, 3, 3, 3),
                             lambda t: init.kaiming_uniform_(t, mode="fan_out",
                                                             nonlinearity="relu")),
    "kaiming_normal": ((6, 5), init.kaiming_normal_),
    "kaiming_normal_fan_out": ((4, 2, 3),
                               lambda t: init.kaiming_normal_(t, a=0.2, mode="fan_out")),
    "trunc_normal": ((50, 40), init.trunc_normal_),
    "trunc_normal_args": ((7,), lambda t: init.trunc_normal_(t, 0.5, 2.0, -1.0, 3.0)),
    "trunc_normal_narrow": ((300,), lambda t: init.trunc_normal_(t, 0.0, 0.02, -0.04, 0.04)),
}
# (shape, gain): wide, tall, square, 3-D, a row, a column, under and over 16 elements (normal_'s
# scalar and vector paths).
ORTHOGONAL = [((3, 5), 1.0), ((5, 3), 1.5), ((4, 4), 1.0), ((2, 3, 4), 2.0), ((1, 7), 1.0),
              ((7, 1), 0.5), ((16, 16), 1.0), ((10, 3, 3), 1.0), ((6, 2), 1.0)]
GAINS = [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
         ("selu", None), ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5))]


def main():
    r = []
    for name, (shape, fn) in CASES.items():
        for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
            torch.manual_seed(SEED)
            t = torch.full(shape, 7.0, dtype=dtype)
            fn(t)
            r.append((f"{name}.{tag}", t))
    for i, (shape, gain) in enumerate(ORTHOGONAL):
        r.append((f"args.orthogonal.{i}", torch.tensor([*shape, gain], dtype=torch.float64)))
        for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
            torch.manual_seed(SEED)
            t = torch.full(shape, 7.0, dtype=dtype)
            init.orthogonal_(t, gain)
            r.append((f"orthogonal.{i}.{tag}", t))
            r.append((f"orthogonal.{i}.{tag}.after", torch.randn(5, dtype=dtype)))
    for name, param in GAINS:
        key = name if param is None else f"{name}.{param!r}"
        r.append((f"gain.{key}", torch.tensor(init.calculate_gain(name, param),
                                               dtype=torch.float64)))
    with open(os.path.join(HERE, "init.txt"), "w") as f:
        f.write(f"# Written by make_init_goldens.py with torch {torch.__version__}.\n")
        for name, t in r:
            f.write(golden_line(name, t) + "\n")


main()
