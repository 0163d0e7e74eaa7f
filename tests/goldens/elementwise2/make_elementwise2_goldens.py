"""Writes the PyTorch goldens for the elementwise ops of issue #35 (tests/ops/test_{abs,sign,clamp,
maximum_minimum,sin,cos,rsqrt,exp2,log2,log10,rounding,square,compare,classify}.cpp, into
elementwise2.txt; tan to erfc, trunc, frac, atan2, logaddexp, fmod and remainder, their tests
in tests/ops/, into math.txt; clamp with tensor bounds, tests/ops/test_clamp.cpp, into
clamp_tensor.txt).

Run with /usr/bin/python3 (Debian's python3-torch 1.13). elementwise2.txt holds one tensor a line,
    name dtype shape values (the format of ../golden_format.py)
every value written exactly as float.hex() (float32 values widened to double, so still exact).
For each case and dtype (tag f32, f64): the inputs, an upstream gradient dy, torch's output y and
the gradients torch.autograd.grad gives for dy. The inputs hold the kinks and ties (0, the clamp
bounds, equal operands), nan and ±inf, halves for round, and random values. Comparisons and
isnan/isinf/isfinite return bool in torch: y is written converted to the inputs' dtype (0/1),
what tapegrad returns, and they have no dx.
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20260335)

NAN, INF = math.nan, math.inf
# Kinks, ties with the clamp bounds (-1, 1, 0.5, -0.5), halves, signed zeros, nan and ±inf.
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, 2.0, -3.0, 1e-3, -7.25,
           NAN, INF, -INF, 100.0]


def leaf(values, dtype, shape=None):
    t = torch.tensor(values, dtype=torch.float64)
    if shape is not None:
        t = t.reshape(shape)
    return t.to(dtype).requires_grad_(True)


def unary_input():
    return SPECIAL + (torch.randn(30, dtype=torch.float64) * 3).tolist()


def unary(records, name, fn, dtype, tag, values=None):
    x = leaf(values if values is not None else unary_input(), dtype)
    dy = torch.randn(x.shape, dtype=torch.float64).to(dtype)
    y = fn(x)
    (dx,) = torch.autograd.grad(y, (x,), dy)
    prefix = f"{name}.{tag}"
    records += [(prefix + ".x", x), (prefix + ".dy", dy), (prefix + ".y", y),
                (prefix + ".dx", dx)]


def binary_inputs(dtype):
    # a [3, 4] against b [4] (broadcast), with ties, a nan on each side and infinities.
    b = [0.5, -1.0, INF, 2.0]
    a = [[0.5, 3.0, INF, -2.0],
         [1.0, -1.0, -INF, 2.0],
         [NAN, -2.0, 7.0, 2.0]]
    b2 = [0.5, NAN, -INF, 2.0]
    return leaf(a, dtype), leaf(b, dtype), leaf(b2, dtype)


def binary(records, name, fn, dtype, tag, a, b):
    a = a.detach().clone().requires_grad_(True)
    b = b.detach().clone().requires_grad_(True)
    y = fn(a, b)
    dy = torch.randn(y.shape, dtype=torch.float64).to(dtype)
    da, db = torch.autograd.grad(y, (a, b), dy)
    prefix = f"{name}.{tag}"
    records += [(prefix + ".a", a), (prefix + ".b", b), (prefix + ".dy", dy), (prefix + ".y", y),
                (prefix + ".da", da), (prefix + ".db", db)]


def no_grad_case(records, name, y, dtype, inputs):
    for key, t in inputs:
        records.append((f"{name}.{key}", t))
    records.append((f"{name}.y", y.to(dtype)))


def main():
    records = []
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        for name, fn in (("abs", torch.abs), ("sign", torch.sign), ("sin", torch.sin),
                         ("cos", torch.cos), ("rsqrt", torch.rsqrt), ("exp2", torch.exp2),
                         ("log2", torch.log2), ("log10", torch.log10), ("floor", torch.floor),
                         ("ceil", torch.ceil), ("round", torch.round), ("square", torch.square)):
            unary(records, name, fn, dtype, tag)
        # Positive inputs too, where the logarithms and rsqrt are finite.
        positive = [0.25, 1.0, 2.0, 3.0, 10.0, 1e-3, 1e3] + (torch.rand(20, dtype=torch.float64) * 5
                                                            + 1e-3).tolist()
        for name, fn in (("rsqrt", torch.rsqrt), ("log2", torch.log2), ("log10", torch.log10)):
            unary(records, name + "_positive", fn, dtype, tag, positive)
        # clamp's bounds are in the C++ test: both, min only, max only, and min > max.
        unary(records, "clamp", lambda x: torch.clamp(x, -1.0, 1.0), dtype, tag)
        unary(records, "clamp_min", lambda x: torch.clamp_min(x, 0.5), dtype, tag)
        unary(records, "clamp_max", lambda x: torch.clamp_max(x, -0.5), dtype, tag)
        unary(records, "clamp_crossed", lambda x: torch.clamp(x, 2.0, 1.0), dtype, tag)
        a, b, b2 = binary_inputs(dtype)
        for name, fn in (("maximum", torch.maximum), ("minimum", torch.minimum)):
            binary(records, name, fn, dtype, tag, a, b)
            binary(records, name + "_nan", fn, dtype, tag, a, b2)
            same = leaf([1.0, 2.0, -3.0, 0.0, 4.0, NAN], dtype)
            other = leaf([1.0, -2.0, -3.0, 5.0, 4.0, 1.0], dtype)
            binary(records, name + "_same", fn, dtype, tag, same, other)
        x = leaf(unary_input(), dtype).detach()
        for name, fn in (("eq", torch.eq), ("ne", torch.ne), ("lt", torch.lt), ("le", torch.le),
                         ("gt", torch.gt), ("ge", torch.ge)):
            no_grad_case(records, f"{name}.{tag}", fn(a, b), dtype, [("a", a), ("b", b)])
            no_grad_case(records, f"{name}_nan.{tag}", fn(a, b2), dtype, [("a", a), ("b", b2)])
            # 0.1 is rounded to x's dtype first, so float32's 0.1 equals it.
            x01 = torch.cat([x, torch.tensor([0.1], dtype=torch.float64).to(dtype)])
            no_grad_case(records, f"{name}_scalar.{tag}", fn(x01, 0.1), dtype, [("x", x01)])
        for name, fn in (("isnan", torch.isnan), ("isinf", torch.isinf),
                         ("isfinite", torch.isfinite)):
            no_grad_case(records, f"{name}.{tag}", fn(x), dtype, [("x", x)])
    write(records, "elementwise2.txt")
    write(math_records(), "math.txt")
    write(clamp_tensor_records(), "clamp_tensor.txt")


def math_records():
    """The trigonometric, hyperbolic, error and rounding functions (math.txt), from a seed of
    their own, so that adding them left elementwise2.txt as it was."""
    torch.manual_seed(20260336)
    records = []
    inside = SPECIAL + (torch.rand(30, dtype=torch.float64) * 1.9 - 0.95).tolist()
    above_one = SPECIAL + (torch.rand(20, dtype=torch.float64) * 5 + 1).tolist()
    above_minus_one = SPECIAL + (torch.rand(20, dtype=torch.float64) * 5 - 0.99).tolist()
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        for name, fn, values in (
                ("tan", torch.tan, None), ("asin", torch.asin, inside),
                ("acos", torch.acos, inside), ("atan", torch.atan, None),
                ("sinh", torch.sinh, None), ("cosh", torch.cosh, None),
                ("asinh", torch.asinh, None), ("acosh", torch.acosh, above_one),
                ("atanh", torch.atanh, inside), ("log1p", torch.log1p, above_minus_one),
                ("expm1", torch.expm1, None), ("erf", torch.erf, None),
                ("erfc", torch.erfc, None), ("trunc", torch.trunc, None),
                ("frac", torch.frac, None)):
            unary(records, name, fn, dtype, tag, values)
        a, b, _ = binary_inputs(dtype)
        # Both signs on each side, for the remainders' quotient rounding, and a zero divisor.
        p = leaf([[5.5, -5.5, 5.5, -5.5, 7.0, 0.0], [1.25, -3.0, 0.3, -0.3, 2.0, 1.0]], dtype)
        q = leaf([2.0, 2.0, -2.0, -2.0, 0.0, 0.7], dtype)
        for name, fn in (("atan2", torch.atan2), ("logaddexp", torch.logaddexp),
                         ("fmod", torch.fmod), ("remainder", torch.remainder)):
            binary(records, name, fn, dtype, tag, a, b)
            binary(records, name + "_signs", fn, dtype, tag, p, q)
    return records


def clamp_tensor_records():
    """torch.clamp(x, min, max) with tensor bounds, either None: per case and dtype x, min, max (a
    bound that is None is not written), dy, y and the gradients (dmin, dmax as for the bounds
    given). Fixed values, no draws: ties with the bounds, min > max, min == max, nan in x and in
    each bound, ±inf, broadcasting, a 0-D tensor and a zero-size dim. dy holds small halves, so
    the sums over broadcast dims are exact."""
    records = []
    cases = {
        "both": ([[-2.0, 0.0, 1.0, 3.0], [NAN, 0.5, INF, -INF], [2.0, 1.0, 0.0, 0.25]],
                 [0.0, 0.0, NAN, 0.5], [[1.0], [2.0], [-1.0]]),
        "both_nan_max": ([[-2.0, 0.5, 4.0], [1.0, 2.0, 3.0]], [[0.0], [NAN]], [1.0, NAN, 2.0]),
        "min_equal_max": ([-1.0, 0.0, 0.5, 1.0, 2.0], [0.5], [0.5]),
        "min_only": ([[-2.0, 0.0, 1.0, 3.0], [NAN, 0.5, INF, -INF]], [0.0, 0.5, NAN, 0.0], None),
        "max_only": ([[-2.0, 0.0, 1.0], [3.0, NAN, -INF]], None, [[1.0], [NAN]]),
        "scalar_bounds": ([1.5, -1.0, NAN, 0.5], 0.0, 1.0),
        "all_scalar": (1.5, 0.0, 1.0),
        "empty": ([[0.0] * 3][:0], [0.0, 1.0, 2.0], [[1.0]]),
    }
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        for name, (xv, lov, hiv) in cases.items():
            x = leaf(xv, dtype, (0, 3) if name == "empty" else None)
            lo = None if lov is None else leaf(lov, dtype)
            hi = None if hiv is None else leaf(hiv, dtype)
            y = torch.clamp(x, lo, hi)
            dy = (torch.arange(y.numel(), dtype=torch.float64) * 0.5 - 2.0).reshape(y.shape)
            dy = dy.to(dtype)
            inputs = [t for t in (x, lo, hi) if t is not None]
            grads = torch.autograd.grad(y, inputs, dy)
            prefix = f"clamp_tensor.{name}.{tag}"
            records += [(prefix + ".x", x), (prefix + ".dy", dy), (prefix + ".y", y),
                        (prefix + ".dx", grads[0])]
            k = 1
            for key, t in (("min", lo), ("max", hi)):
                if t is not None:
                    records += [(f"{prefix}.{key}", t), (f"{prefix}.d{key}", grads[k])]
                    k += 1
    return records


def write(records, file_name):
    with open(os.path.join(HERE, file_name), "w") as f:
        f.write(f"# Written by make_elementwise2_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


main()
