#!/usr/bin/python3
"""Writes vmath_goldens.txt: torch's values for the kernels of kernels/vmath/vmath.h.

Run with Debian's torch 1.13 (CPU): /usr/bin/python3 make_vmath_goldens.py
Format, one record per line (lines starting with '#' are comments):
    name dtype shape v1 v2 ... vn
dtype is f32 or f64; shape is comma-separated dims; values are float.hex() of each element
(exact for both dtypes). Inputs are written too (names ending in ".x", ".dy", ".w", ".b"), so
the test feeds exactly what torch saw. The arrays' lengths are not multiples of 16, so the
vectorised kernels' tails are covered.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vmath_goldens.txt")
lines = []


def emit(name, t):
    lines.append(golden_line(name, t))


N = 401  # elementwise inputs per function
ROWS, COLS = 6, 77  # row-wise kernels
gen = torch.Generator().manual_seed(16)

for dt, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
    def grid(lo, hi):
        # An even grid plus a few random points: both signs, the small and the large.
        even = torch.linspace(lo, hi, N - 41, dtype=torch.float64)
        rand = (torch.rand(41, generator=gen, dtype=torch.float64) * (hi - lo) + lo)
        return torch.cat([even, rand]).to(dt)

    x = grid(-87.0, 88.0)
    emit(f"exp.{tag}.x", x)
    emit(f"exp.{tag}", torch.exp(x))
    x = grid(-20.0, 20.0)
    emit(f"expm1.{tag}.x", x)
    emit(f"expm1.{tag}", torch.expm1(x))
    x = grid(1e-3, 1e3)
    emit(f"log.{tag}.x", x)
    emit(f"log.{tag}", torch.log(x))
    x = grid(-10.0, 10.0)
    emit(f"tanh.{tag}.x", x)
    emit(f"tanh.{tag}", torch.tanh(x))
    x = grid(-30.0, 30.0)
    emit(f"sigmoid.{tag}.x", x)
    emit(f"sigmoid.{tag}", torch.sigmoid(x))

    x = grid(-8.0, 8.0).requires_grad_()
    y = torch.nn.functional.gelu(x, approximate="tanh")
    dy = torch.randn(N, generator=gen, dtype=torch.float64).to(dt)
    (dx,) = torch.autograd.grad(y, x, dy)
    emit(f"gelu.{tag}.x", x)
    emit(f"gelu.{tag}", y)
    emit(f"gelu.{tag}.dy", dy)
    emit(f"gelu_backward.{tag}", dx)

    x = (torch.randn(ROWS, COLS, generator=gen, dtype=torch.float64) * 3).to(dt)
    emit(f"rows.{tag}.x", x)
    emit(f"softmax.{tag}", torch.softmax(x, dim=-1))
    emit(f"logsumexp.{tag}", torch.logsumexp(x, dim=-1))
    emit(f"log_softmax.{tag}", torch.log_softmax(x, dim=-1))

    x = (torch.randn(ROWS, COLS, generator=gen, dtype=torch.float64) * 2 + 0.5).to(dt)
    x.requires_grad_()
    w = (torch.randn(COLS, generator=gen, dtype=torch.float64) * 0.5 + 1).to(dt).requires_grad_()
    b = (torch.randn(COLS, generator=gen, dtype=torch.float64) * 0.1).to(dt).requires_grad_()
    y = torch.nn.functional.layer_norm(x, (COLS,), w, b, eps=1e-5)
    dy = torch.randn(ROWS, COLS, generator=gen, dtype=torch.float64).to(dt)
    dx, dw, db = torch.autograd.grad(y, (x, w, b), dy)
    emit(f"layer_norm.{tag}.x", x)
    emit(f"layer_norm.{tag}.w", w)
    emit(f"layer_norm.{tag}.b", b)
    emit(f"layer_norm.{tag}.dy", dy)
    emit(f"layer_norm.{tag}", y)
    emit(f"layer_norm.{tag}.dx", dx)
    emit(f"layer_norm.{tag}.dw", dw)
    emit(f"layer_norm.{tag}.db", db)

# vmath::sum: torch.sum of n elements (one thread, as tapegrad sums), n across the cascade's
# vectors, rows of four and levels. The inputs are a formula both sides compute alike (k / 1009 in
# float64, correctly rounded, times a power of two, then rounded to the dtype), so only the sums
# are written.
SUM_SIZES = [0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129,
             255, 256, 257, 511, 512, 513, 1000, 4095, 4096, 4097, 8191, 8192, 8193, 20000, 65537]
torch.set_num_threads(1)
for dt, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
    sums = []
    for n in SUM_SIZES:
        i = torch.arange(n, dtype=torch.int64)
        k = ((i * 7919) % 1009 - 504).to(torch.float64)
        x = k / 1009.0 * torch.pow(2.0, (i % 13 - 6).to(torch.float64))
        sums.append(x.to(dt).sum())
    emit(f"sum.{tag}", torch.stack(sums))

capability = [ln.strip() for ln in torch.__config__.show().splitlines() if "CPU capability" in ln]
with open(OUT, "w") as f:
    f.write(f"# torch {torch.__version__}; {capability[0] if capability else ''}\n")
    f.write("# written by make_vmath_goldens.py\n")
    for line in lines:
        f.write(line + "\n")
