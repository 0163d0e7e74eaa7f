"""Writes the PyTorch goldens for lerp, pow with a tensor exponent (or a number base),
logical_and/or/xor/not, any/all and isclose (tests/ops/test_{lerp,pow_tensor,logical,any_all,isclose}.cpp).

Run with /usr/bin/python3 (Debian's python3-torch 1.13). elementwise3.txt holds one tensor a line,
    name dtype shape values (the format of ../golden_format.py)
For each case and dtype (tag f32, f64): the float inputs (a, b, w, x, ...), an upstream gradient
dy, torch's output y (bool results as 0/1 of the inputs' dtype) and, for the differentiable ops,
torch.autograd.grad's gradient of each input (da, db, ...).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261128)
NAN, INF = float("nan"), float("inf")


def case(records, name, fn, inputs, grad=True):
    """inputs: (key, float64 tensor) pairs, the same values for both dtypes."""
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        prefix = f"{name}.{tag}"
        ts = []
        for key, base in inputs:
            t = base.to(dtype).requires_grad_(grad)
            ts.append(t)
            records.append((f"{prefix}.{key}", t))
        y = fn(*ts)
        if y.dtype == torch.bool:
            y = y.to(dtype)
        records.append((prefix + ".y", y))
        if grad:
            dy = torch.randn(y.shape, dtype=torch.float64).to(dtype)
            grads = torch.autograd.grad(y, ts, dy, allow_unused=True)
            records.append((prefix + ".dy", dy))
            for (key, _), g in zip(inputs, grads):
                records.append((f"{prefix}.d{key}", g if g is not None else torch.zeros_like(ts[0])))


def randn(*shape):
    return torch.randn(*shape, dtype=torch.float64)


def main():
    r = []
    # lerp: weights on both sides of 0.5, negative, beyond 1; broadcast
    for w in (0.3, 0.5, 0.7, -0.6, 1.5):
        case(r, f"lerp_scalar_{w}", lambda a, b: torch.lerp(a, b, w),
             [("a", randn(3, 4)), ("b", randn(4))])
    case(r, "lerp_tensor", lambda a, b, w: torch.lerp(a, b, w),
         [("a", randn(2, 3, 4)), ("b", randn(3, 1)),
          ("w", torch.tensor([-0.7, 0.2, 0.5, 0.49, 0.51, 1.3, -0.3, 0.9, 0.0, 1.0, 0.25,
                              -0.5]).reshape(3, 4).double())])
    # pow: bases with zeros (exponents positive, zero and negative), negative bases with integer
    # exponents, broadcast
    base = torch.tensor([[0.0, 0.0, 0.0, 1.7, 0.3, 2.5], [-1.5, -2.0, 0.8, 0.0, 3.1, 1.0]]).double()
    expo = torch.tensor([[2.0, 0.0, 1.5, -0.5, 0.0, 3.0], [2.0, 3.0, -1.2, 1.0, 0.7, 0.3]]).double()
    case(r, "pow_tensor", torch.pow, [("x", base), ("p", expo)])
    case(r, "pow_tensor_broadcast", torch.pow, [("x", randn(3, 1).abs() + 0.1), ("p", randn(4))])
    # logical, any/all, isclose: no gradient
    special = torch.tensor([[0.0, -0.0, 1.0, NAN, -2.5, INF], [0.0, 3.0, 0.0, 0.0, NAN, -1.0]])
    other = torch.tensor([[0.0, 1.0, 0.0, 0.0, 2.0, 0.0], [NAN, 0.5, -0.0, 4.0, 0.0, 0.0]])
    for op in ("logical_and", "logical_or", "logical_xor"):
        fn = getattr(torch, op)
        case(r, op, fn, [("a", special.double()), ("b", other.double())], grad=False)
        case(r, op + "_broadcast", fn, [("a", special.double()), ("b", other[1].double())],
             grad=False)
    case(r, "logical_not", torch.logical_not, [("x", special.double())], grad=False)
    zeros_rows = torch.tensor([[0.0, 0.0, 0.0], [0.0, NAN, 0.0], [1.0, 2.0, -3.0],
                               [0.0, 5.0, 0.0]]).double()
    case(r, "any", torch.any, [("x", zeros_rows)], grad=False)
    case(r, "all", torch.all, [("x", zeros_rows)], grad=False)
    case(r, "any_dim1", lambda x: torch.any(x, 1), [("x", zeros_rows)], grad=False)
    case(r, "all_dim1", lambda x: torch.all(x, 1), [("x", zeros_rows)], grad=False)
    case(r, "any_dim0_keepdim", lambda x: torch.any(x, 0, keepdim=True), [("x", zeros_rows)],
         grad=False)
    case(r, "all_dim0_keepdim", lambda x: torch.all(x, 0, keepdim=True), [("x", zeros_rows)],
         grad=False)
    case(r, "any_empty", torch.any, [("x", torch.zeros(0, 3).double())], grad=False)
    case(r, "all_empty", torch.all, [("x", torch.zeros(0, 3).double())], grad=False)
    case(r, "all_dim1_empty", lambda x: torch.all(x, 1), [("x", torch.zeros(2, 0).double())],
         grad=False)
    a = torch.tensor([1.0, 1.0, 1e-9, 0.0, INF, INF, -INF, NAN, NAN, 100.0, 100.0, 1.0,
                      1e10, 3.0]).double()
    b = torch.tensor([1.0, 1.0 + 1e-6, 0.0, 1e-8, INF, -INF, 1e308, NAN, 1.0, 100.001, 100.01,
                      1.00001, 1e10 + 1e5, 3.0 + 3e-5]).double()
    case(r, "isclose", torch.isclose, [("a", a), ("b", b)], grad=False)
    case(r, "isclose_equal_nan", lambda a, b: torch.isclose(a, b, equal_nan=True),
         [("a", a), ("b", b)], grad=False)
    case(r, "isclose_tols", lambda a, b: torch.isclose(a, b, rtol=1e-3, atol=1e-4),
         [("a", a), ("b", b)], grad=False)
    case(r, "isclose_exact", lambda a, b: torch.isclose(a, b, rtol=0.0, atol=0.0),
         [("a", a), ("b", b)], grad=False)
    rand_a = randn(3, 5)
    case(r, "isclose_broadcast", lambda a, b: torch.isclose(a, b, rtol=0.1, atol=0.05),
         [("a", rand_a), ("b", rand_a[1] + 0.05 * randn(5))], grad=False)
    # pow with a number base (torch.pow(base, p), Python's base ** p); last, so that the draws above
    # kept their values.
    expo_special = torch.tensor([0.0, -1.0, 2.5, 3.0, -0.5, NAN, INF, -INF, 1.0, 0.5]).double()
    for b in (2.0, 0.5, 0.0, 1.0, -2.0):
        case(r, f"pow_scalar_base_{b}", lambda p, b=b: torch.pow(b, p), [("p", expo_special)])
    with open(os.path.join(HERE, "elementwise3.txt"), "w") as f:
        f.write(f"# Written by make_elementwise3_goldens.py with torch {torch.__version__}.\n")
        for name, t in r:
            f.write(golden_line(name, t) + "\n")


main()
