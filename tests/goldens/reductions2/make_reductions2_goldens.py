"""Writes the PyTorch goldens for the reductions of issue #35 (tests/ops/test_{amax_amin,max_min,
min_dim,argmin,sum_dims,mean_dims,var_std,logsumexp,prod,norm,
cumsum,cumprod}.cpp).

Run with /usr/bin/python3 (Debian's python3-torch 1.13). reductions2.txt holds one tensor a line,
    name dtype shape values (the format of ../golden_format.py)
every value written exactly as float.hex() (float32 values widened to double, so still exact).
For each case and dtype (tag f32, f64): the input x, an upstream gradient dy, torch's output y and
the gradient dx torch.autograd.grad gives for dy. The cases hold a 0-D input, zero-size dims
(where torch returns a result; where it raises, the C++ tests check tapegrad's Error), ties,
zeros, nan and ±inf. argmin's indices are written as i64, without gradient.
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20260352)

NAN, INF = math.nan, math.inf

# [3, 4]: a row with a tie for the max and the min, a row with ±inf, a row with a nan.
SPECIAL = [[1.0, 3.0, 3.0, -2.0],
           [INF, -INF, 0.5, 2.0],
           [0.25, NAN, -1.0, 4.0]]
# [3, 4] finite: ties (the max twice in row 0, the min twice in row 2, a column with a tie).
TIES = [[1.0, 3.0, 3.0, -2.0],
        [2.0, -1.5, 0.5, 2.0],
        [0.25, -1.5, -1.5, 4.0]]


def random_values(shape, scale=1.0):
    return (torch.randn(shape, dtype=torch.float64) * scale).tolist()


def case(records, name, fn, values, dtype, tag, shape=None):
    x = torch.tensor(values, dtype=torch.float64)
    if shape is not None:
        x = x.reshape(shape)
    x = x.to(dtype).requires_grad_(True)
    y = fn(x)
    dy = torch.randn(y.shape, dtype=torch.float64).to(dtype)
    (dx,) = torch.autograd.grad(y, (x,), dy, allow_unused=True)
    if dx is None:
        dx = torch.zeros_like(x)
    prefix = f"{name}.{tag}"
    records += [(prefix + ".x", x), (prefix + ".dy", dy), (prefix + ".y", y), (prefix + ".dx", dx)]


def no_grad_case(records, name, fn, values, dtype, tag):
    x = torch.tensor(values, dtype=torch.float64).to(dtype)
    records += [(f"{name}.{tag}.x", x), (f"{name}.{tag}.y", fn(x))]


def main():
    records = []
    empty = torch.zeros(0, 3, dtype=torch.float64).tolist()  # [0] rows: reshaped below
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        def c(name, fn, values, shape=None):
            case(records, name, fn, values, dtype, tag, shape)

        # amax / amin: one dim, several, all (the empty list), keepdim, 0-D, an empty output.
        for op in ("amax", "amin"):
            f = getattr(torch, op)
            c(op + "_dim1", lambda x: f(x, 1), SPECIAL)
            c(op + "_dim0_keep", lambda x: f(x, 0, True), TIES)
            c(op + "_all", lambda x: f(x, ()), TIES)
            c(op + "_all_nan", lambda x: f(x, ()), SPECIAL)
            c(op + "_dims02", lambda x: f(x, (0, -1), True), random_values([2, 3, 4]))
            c(op + "_scalar", lambda x: f(x, 0), 2.5)
            c(op + "_empty_out", lambda x: f(x, 1), empty, (0, 3))
        # max / min of all elements: ties share dy, a nan takes it (split among nans), 0-D.
        for op in ("max", "min"):
            f = getattr(torch, op)
            c(op + "_all_ties", lambda x: f(x), TIES)
            c(op + "_all_nan", lambda x: f(x), [1.0, NAN, 3.0, NAN, -INF])
            c(op + "_all_inf", lambda x: f(x), [INF, -INF, 0.0, INF, -INF])
            c(op + "_all_scalar", lambda x: f(x), -1.5)
        # min along a dim: the first minimum (or first nan) gets dy.
        c("min_dim1", lambda x: torch.min(x, 1)[0], SPECIAL)
        c("min_dim0_keep", lambda x: torch.min(x, 0, True)[0], TIES)
        c("min_dim_scalar", lambda x: torch.min(x, 0)[0], 2.5)
        c("min_dim_empty_out", lambda x: torch.min(x, 1)[0], empty, (0, 3))
        for name, values in (("argmin_special", SPECIAL), ("argmin_ties", TIES)):
            for dim in (0, 1):
                no_grad_case(records, f"{name}_dim{dim}", lambda x: torch.argmin(x, dim), values,
                             dtype, tag)
        # sum / mean over a list of dims.
        for op in ("sum", "mean"):
            f = getattr(torch, op)
            x3 = random_values([2, 3, 4])
            c(op + "_dims02", lambda x: f(x, (0, 2)), x3)
            c(op + "_dims_neg_keep", lambda x: f(x, (-1, 0), True), x3)
            c(op + "_dims_all", lambda x: f(x, ()), x3)
            c(op + "_dims1_keep", lambda x: f(x, (1,), True), SPECIAL)
            c(op + "_dims_scalar", lambda x: f(x, (0,)), 2.5)
            c(op + "_dims_empty", lambda x: f(x, (0,)), empty, (0, 3))
        # var / std: dims, all, correction 0 and 2, keepdim, n = 1, 0-D, nan/inf, empty.
        for op in ("var", "std"):
            f = getattr(torch, op)
            x35 = random_values([3, 5], 2.0)
            c(op + "_dim1", lambda x: f(x, 1), x35)
            c(op + "_dim0_keep_c0", lambda x: f(x, 0, correction=0, keepdim=True), x35)
            c(op + "_all", lambda x: f(x), x35)
            c(op + "_all_c2", lambda x: f(x, None, correction=2), x35)
            c(op + "_dims_c2", lambda x: f(x, (0, 1), correction=2), x35)
            c(op + "_special", lambda x: f(x, 1), SPECIAL)
            c(op + "_constant_rows", lambda x: f(x, 1), [[2.0, 2.0, 2.0], [1.0, -1.0, 0.0]])
            c(op + "_n1", lambda x: f(x, 0), [[1.0, 2.0, -3.0]])
            c(op + "_scalar", lambda x: f(x), 2.5)
            c(op + "_empty", lambda x: f(x, 0), empty, (0, 3))
        # logsumexp: −inf rows give −inf, +inf gives +inf, nan gives nan.
        lse = [[1.0, 2.0, 3.0, 4.0], [-INF, -INF, -INF, -INF], [INF, 1.0, 2.0, -INF],
               [NAN, 1.0, 2.0, 3.0], [1000.0, 1000.0, -1000.0, 0.5]]
        c("logsumexp_dim1", lambda x: torch.logsumexp(x, 1), lse)
        c("logsumexp_dim0_keep", lambda x: torch.logsumexp(x, 0, True), random_values([3, 4], 3))
        c("logsumexp_dims", lambda x: torch.logsumexp(x, (0, 2)), random_values([2, 3, 4], 3))
        c("logsumexp_scalar", lambda x: torch.logsumexp(x, 0), 2.5)
        c("logsumexp_empty", lambda x: torch.logsumexp(x, 0), empty, (0, 3))
        c("logsumexp_empty_out", lambda x: torch.logsumexp(x, 1), empty, (0, 3))
        # prod: no zeros, one zero, two zeros; along a dim with a zero in one row; 0-D; empty.
        c("prod_all", lambda x: torch.prod(x), [1.5, -2.0, 0.5, 3.0, -0.75, 1.25])
        c("prod_all_zero", lambda x: torch.prod(x), [1.5, -2.0, 0.0, 3.0, -0.75, 1.25])
        c("prod_all_zeros", lambda x: torch.prod(x), [1.5, 0.0, 0.0, 3.0])
        c("prod_dim1", lambda x: torch.prod(x, 1), random_values([3, 4]))
        c("prod_dim1_zero", lambda x: torch.prod(x, 1), [[1.5, 0.0, 2.0], [0.5, -2.0, 3.0]])
        c("prod_dim0_keep_zeros", lambda x: torch.prod(x, 0, True),
          [[1.5, 0.0, 2.0], [0.0, -2.0, 3.0], [0.0, 4.0, 0.5]])
        c("prod_inf", lambda x: torch.prod(x, 1), [[INF, 2.0], [NAN, 1.0], [-INF, 0.5]])
        c("prod_scalar", lambda x: torch.prod(x), 2.5)
        c("prod_dim_scalar", lambda x: torch.prod(x, 0), 2.5)
        c("prod_empty", lambda x: torch.prod(x), empty, (0, 3))
        c("prod_empty_dim0", lambda x: torch.prod(x, 0), empty, (0, 3))
        # norm, p = 1, 2, inf: zero rows (gradient 0), ties of |x| for inf, nan, 0-D, empty.
        zrows = [[0.0, 0.0, 0.0], [3.0, -4.0, 0.0], [-2.0, 2.0, 1.0], [NAN, 1.0, -1.0]]
        for p, pname in ((1.0, "1"), (2.0, "2"), (INF, "inf")):
            c(f"norm{pname}_dim1", lambda x: torch.norm(x, p, 1), zrows)
            c(f"norm{pname}_all", lambda x: torch.norm(x, p), random_values([3, 4]))
            c(f"norm{pname}_dims_keep", lambda x: torch.norm(x, p, (0, 2), True),
              random_values([2, 3, 4]))
            c(f"norm{pname}_scalar", lambda x: torch.norm(x, p), -2.5)
            c(f"norm{pname}_empty", lambda x: torch.norm(x, p, 0), empty, (0, 3))
        # cumsum / cumprod: along each dim, nan/±inf, zeros (one and two in a row), 0-D, empty.
        c("cumsum_dim1", lambda x: torch.cumsum(x, 1), SPECIAL)
        c("cumsum_dim0", lambda x: torch.cumsum(x, 0), random_values([3, 4]))
        c("cumsum_dims3", lambda x: torch.cumsum(x, -2), random_values([2, 5, 3]))
        c("cumsum_scalar", lambda x: torch.cumsum(x, 0), 2.5)
        c("cumsum_empty", lambda x: torch.cumsum(x, 1), empty, (0, 3))
        c("cumprod_dim1", lambda x: torch.cumprod(x, 1), random_values([3, 5]))
        c("cumprod_dim0", lambda x: torch.cumprod(x, 0), random_values([4, 3]))
        c("cumprod_zeros", lambda x: torch.cumprod(x, 1),
          [[1.5, 0.0, 2.0, -1.0], [0.5, -2.0, 3.0, 1.25], [2.0, 0.0, 3.0, 0.0], [0.0, 1.0, 2.0, 3.0]])
        c("cumprod_special", lambda x: torch.cumprod(x, 1), SPECIAL)
        c("cumprod_scalar", lambda x: torch.cumprod(x, 0), 2.5)
        c("cumprod_empty", lambda x: torch.cumprod(x, 0), empty, (0, 3))
    with open(os.path.join(HERE, "reductions2.txt"), "w") as f:
        f.write(f"# Written by make_reductions2_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


main()
