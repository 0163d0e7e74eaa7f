"""Writes the PyTorch goldens for sort, argsort and topk with largest=False (tests/ops/
test_sort.cpp, test_topk.cpp).

Run with /usr/bin/python3 (Debian's python3-torch 1.13). sorting.txt holds one tensor a line,
    name dtype shape values (the format of ../golden_format.py)
For each case and dtype (tag f32, f64): the input x (ties from small integers, NaN where the case
says), an upstream gradient dy for the values, torch's values y, its indices (i64) and
torch.autograd.grad's dx. Rows longer than 16 take std::sort's introsort path, shorter ones its
insertion sort; topk's k·64 <= n takes partial_sort, else nth_element.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261127)


def case(records, name, shape, fn, ties=True, nans=0):
    base = torch.randint(-4, 5, shape).double() if ties else torch.randn(shape, dtype=torch.float64)
    flat = base.reshape(-1)
    for i in range(min(nans, flat.numel())):
        flat[(7 * i + 3) % flat.numel()] = float("nan")
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        prefix = f"{name}.{tag}"
        x = base.to(dtype).requires_grad_(True)
        values, indices = fn(x)
        dy = torch.randn(values.shape, dtype=torch.float64).to(dtype)
        (dx,) = torch.autograd.grad(values, (x,), dy)
        records += [(prefix + ".x", x), (prefix + ".dy", dy), (prefix + ".y", values),
                    (prefix + ".indices", indices), (prefix + ".dx", dx)]


def main():
    r = []
    sort = torch.sort
    case(r, "sort", (3, 5), lambda x: sort(x))
    case(r, "sort_desc", (3, 5), lambda x: sort(x, descending=True))
    case(r, "sort_stable", (4, 9), lambda x: sort(x, stable=True))
    case(r, "sort_stable_desc", (4, 9), lambda x: sort(x, descending=True, stable=True))
    case(r, "sort_long", (2, 70), lambda x: sort(x), nans=5)
    case(r, "sort_long_desc", (2, 70), lambda x: sort(x, descending=True), nans=5)
    case(r, "sort_long_stable", (2, 70), lambda x: sort(x, stable=True), nans=5)
    case(r, "sort_long_stable_desc", (2, 70), lambda x: sort(x, dim=-1, descending=True, stable=True), nans=5)
    case(r, "sort_dim1", (2, 6, 3), lambda x: sort(x, 1), nans=2)
    case(r, "sort_dim0_desc", (5, 4), lambda x: sort(x, 0, True), ties=False)
    case(r, "sort_0d", (), lambda x: sort(x))
    case(r, "sort_empty", (0, 3), lambda x: sort(x, 0))
    case(r, "topk_smallest", (3, 8), lambda x: torch.topk(x, 3, largest=False), nans=3)
    case(r, "topk_smallest_partial", (2, 200),
         lambda x: torch.topk(x, 3, largest=False), nans=4)
    case(r, "topk_smallest_dim0", (6, 3), lambda x: torch.topk(x, 2, 0, largest=False),
         ties=False)
    case(r, "topk_smallest_all", (2, 5), lambda x: torch.topk(x, 5, largest=False), nans=1)
    with open(os.path.join(HERE, "sorting.txt"), "w") as f:
        f.write(f"# Written by make_sorting_goldens.py with torch {torch.__version__}.\n")
        for name, t in r:
            f.write(golden_line(name, t) + "\n")


main()
