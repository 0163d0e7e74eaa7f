"""Writes the PyTorch goldens for tests/ops/test_{max_pool2d,max_pool1d,avg_pool2d,avg_pool1d,
adaptive_avg_pool2d,adaptive_max_pool2d,interpolate}.cpp.

Run with /usr/bin/python3 (Debian's python3-torch 1.13). pool.txt holds one tensor a line in the
format of ../golden_format.py. For each case and dtype (tag f32 or f64): the input .x, an upstream
gradient .dy of the output's shape, torch's output .y, the gradient .dx torch.autograd.grad gives
for dy, and for the max poolings the indices .idx (return_indices=True, as i64). The loops are
BLAS-free, so the BLAS alternative does not matter here.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261127)
NAN = float("nan")
INF = float("inf")


def randn(*shape):
    return torch.randn(*shape, dtype=torch.float64)


def ties(*shape):
    # Small integers: many equal values in every window.
    return torch.randint(-2, 3, shape).to(torch.float64)


def with_nans(*shape):
    x = randn(*shape)
    flat = x.view(-1)
    flat[3] = NAN
    flat[4] = NAN  # two NaNs in one window: torch keeps the last
    flat[17] = NAN
    flat[9] = -INF
    return x


# (name, input, function of x returning y or (y, indices)); the C++ tests call the same cases.
def cases():
    return [
        ("max_pool2d.k2", randn(2, 3, 6, 7), lambda x: F.max_pool2d(x, 2, return_indices=True)),
        ("max_pool2d.k3s2p1", randn(2, 2, 7, 6),
         lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True)),
        ("max_pool2d.dilation", randn(1, 2, 8, 7),
         lambda x: F.max_pool2d(x, (3, 2), (1, 2), (1, 0), (2, 1), return_indices=True)),
        ("max_pool2d.ceil", randn(2, 2, 6, 7),
         lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True, return_indices=True)),
        ("max_pool2d.ceil_pad", randn(1, 2, 5, 5),
         lambda x: F.max_pool2d(x, 2, 2, 1, ceil_mode=True, return_indices=True)),
        ("max_pool2d.ties", ties(2, 2, 6, 6),
         lambda x: F.max_pool2d(x, 3, 1, 1, return_indices=True)),
        ("max_pool2d.nan", with_nans(1, 2, 6, 6),
         lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True)),
        ("max_pool2d.unbatched", randn(3, 5, 5),
         lambda x: F.max_pool2d(x, 2, 1, return_indices=True)),
        ("max_pool1d.k3s2p1", randn(2, 3, 9), lambda x: F.max_pool1d(x, 3, 2, 1, return_indices=True)),
        ("max_pool1d.dilation_ceil", randn(2, 2, 10),
         lambda x: F.max_pool1d(x, 2, 2, 0, 3, ceil_mode=True, return_indices=True)),
        ("max_pool1d.ties", ties(2, 2, 9), lambda x: F.max_pool1d(x, 3, 1, 1, return_indices=True)),
        ("max_pool1d.nan", with_nans(1, 2, 12), lambda x: F.max_pool1d(x, 4, 3, return_indices=True)),
        ("max_pool1d.unbatched", randn(3, 8), lambda x: F.max_pool1d(x, 2, return_indices=True)),
        ("avg_pool2d.k2", randn(2, 3, 6, 7), lambda x: F.avg_pool2d(x, 2)),
        ("avg_pool2d.k3s2p1", randn(2, 2, 7, 6), lambda x: F.avg_pool2d(x, 3, 2, 1)),
        ("avg_pool2d.exclude_pad", randn(2, 2, 7, 6),
         lambda x: F.avg_pool2d(x, (3, 2), (2, 1), (1, 1), count_include_pad=False)),
        ("avg_pool2d.ceil", randn(1, 2, 6, 7), lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True)),
        ("avg_pool2d.ceil_exclude", randn(1, 2, 6, 7),
         lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
        ("avg_pool2d.divisor", randn(1, 2, 6, 7),
         lambda x: F.avg_pool2d(x, 3, 2, 1, divisor_override=5)),
        ("avg_pool2d.unbatched", randn(3, 5, 5), lambda x: F.avg_pool2d(x, 2, 1)),
        ("avg_pool1d.k3s2p1", randn(2, 3, 9), lambda x: F.avg_pool1d(x, 3, 2, 1)),
        ("avg_pool1d.exclude_pad", randn(2, 3, 9),
         lambda x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False)),
        ("avg_pool1d.ceil", randn(2, 2, 10), lambda x: F.avg_pool1d(x, 4, 3, 1, ceil_mode=True)),
        ("avg_pool1d.unbatched", randn(3, 8), lambda x: F.avg_pool1d(x, 2)),
        ("adaptive_avg_pool2d.down", randn(2, 3, 7, 5), lambda x: F.adaptive_avg_pool2d(x, (3, 2))),
        ("adaptive_avg_pool2d.up", randn(1, 2, 3, 4), lambda x: F.adaptive_avg_pool2d(x, (5, 7))),
        ("adaptive_avg_pool2d.one", randn(2, 3, 4, 6), lambda x: F.adaptive_avg_pool2d(x, 1)),
        ("adaptive_avg_pool2d.unbatched", randn(3, 6, 6), lambda x: F.adaptive_avg_pool2d(x, 4)),
        ("adaptive_max_pool2d.down", randn(2, 3, 7, 5),
         lambda x: F.adaptive_max_pool2d(x, (3, 2), return_indices=True)),
        ("adaptive_max_pool2d.ties", ties(1, 2, 6, 5),
         lambda x: F.adaptive_max_pool2d(x, (4, 3), return_indices=True)),
        ("adaptive_max_pool2d.unbatched", randn(3, 6, 6),
         lambda x: F.adaptive_max_pool2d(x, 4, return_indices=True)),
        ("interpolate.nearest_size", randn(2, 3, 5, 7),
         lambda x: F.interpolate(x, size=(9, 4), mode="nearest")),
        ("interpolate.nearest_x2", randn(1, 2, 3, 4),
         lambda x: F.interpolate(x, scale_factor=2, mode="nearest")),
        ("interpolate.nearest_scale", randn(1, 2, 5, 6),
         lambda x: F.interpolate(x, scale_factor=(1.7, 0.6), mode="nearest")),
        ("interpolate.nearest_recompute", randn(1, 2, 5, 6),
         lambda x: F.interpolate(x, scale_factor=(1.7, 0.6), mode="nearest",
                                 recompute_scale_factor=True)),
        ("interpolate.bilinear_size", randn(2, 3, 5, 7),
         lambda x: F.interpolate(x, size=(9, 4), mode="bilinear", align_corners=False)),
        ("interpolate.bilinear_corners", randn(2, 3, 5, 7),
         lambda x: F.interpolate(x, size=(9, 4), mode="bilinear", align_corners=True)),
        ("interpolate.bilinear_scale", randn(1, 2, 5, 6),
         lambda x: F.interpolate(x, scale_factor=(1.7, 0.6), mode="bilinear")),
        ("interpolate.bilinear_x2_corners", randn(1, 2, 3, 4),
         lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)),
        ("interpolate.bilinear_same", randn(1, 2, 3, 4),
         lambda x: F.interpolate(x, size=(3, 8), mode="bilinear")),
    ]


def main():
    records = []
    for name, x0, fn in cases():
        for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
            x = x0.detach().clone().to(dtype).requires_grad_(True)
            out = fn(x)
            y, idx = out if isinstance(out, tuple) else (out, None)
            dy = randn(*y.shape).to(dtype)
            (dx,) = torch.autograd.grad(y, (x,), dy)
            base = f"{name}.{tag}"
            records += [(base + ".x", x), (base + ".dy", dy), (base + ".y", y), (base + ".dx", dx)]
            if idx is not None:
                records.append((base + ".idx", idx))
    with open(os.path.join(HERE, "pool.txt"), "w") as f:
        f.write(f"# Written by make_pool_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


main()
