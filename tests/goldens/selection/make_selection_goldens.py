"""Writes the PyTorch goldens for tests/ops/test_{argmax,topk,multinomial}.cpp.

Run with /usr/bin/python3 (Debian's python3-torch 1.13). selection.txt holds one tensor a line:
    name dtype shape values (the format of ../golden_format.py)
every value written exactly as float.hex() (ids too: small integers are exact in a double).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261122)
MULTINOMIAL_SEEDS = 200


def main():
    records = []
    # argmax with ties (first index wins) along each dim, keepdim both ways.
    x = torch.randint(0, 3, (3, 4, 5)).to(torch.float32)
    records.append(("argmax.x", x))
    for dim in (0, 1, 2, -1):
        records.append((f"argmax.dim{dim}", torch.argmax(x, dim)))
        records.append((f"argmax.dim{dim}.keepdim", torch.argmax(x, dim, keepdim=True)))
    # topk: distinct values (gradient too), then ties, on both of torch's sort paths
    # (k * 64 <= n: partial_sort; else nth_element + sort).
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        x = torch.randn(3, 7, 5, dtype=torch.float64).to(dtype).requires_grad_(True)
        for k, dim in ((3, 1), (2, -1), (3, 0)):
            v, i = torch.topk(x, k, dim)
            dy = torch.randn(v.shape, dtype=torch.float64).to(dtype)
            (dx,) = torch.autograd.grad(v, (x,), dy)
            name = f"topk.{tag}.k{k}.dim{dim}"
            records += [(name + ".x", x), (name + ".dy", dy), (name + ".values", v),
                        (name + ".indices", i), (name + ".dx", dx)]
    for n, k in ((10, 4), (200, 3), (130, 2)):
        x = torch.randint(0, 4, (2, n)).to(torch.float32)
        v, i = torch.topk(x, k)
        name = f"topk.ties.n{n}.k{k}"
        records += [(name + ".x", x), (name + ".values", v), (name + ".indices", i)]
    # multinomial from each of MULTINOMIAL_SEEDS seeds: float32 [V] peaked (a softmax of logits
    # over 1000 categories), float64 [N, V] with 1 and 3 samples.
    p32 = torch.softmax(torch.randn(1000) * 3, -1)
    p64 = torch.rand(4, 9, dtype=torch.float64)
    p64[1, 3] = 0.0
    records += [("multinomial.p32", p32), ("multinomial.p64", p64)]
    one32, one64, three64 = [], [], []
    for seed in range(MULTINOMIAL_SEEDS):
        torch.manual_seed(seed)
        one32.append(torch.multinomial(p32, 1))
        torch.manual_seed(seed)
        one64.append(torch.multinomial(p64, 1))
        torch.manual_seed(seed)
        three64.append(torch.multinomial(p64, 3))
    records += [("multinomial.p32.one", torch.stack(one32)),
                ("multinomial.p64.one", torch.stack(one64)),
                ("multinomial.p64.three", torch.stack(three64))]
    # Two draws in a row from one seed: the stream advances as torch's.
    g = torch.Generator().manual_seed(7)
    first = torch.multinomial(p64, 1, generator=g)
    second = torch.multinomial(p64, 1, generator=g)
    records += [("multinomial.seed7.first", first), ("multinomial.seed7.second", second)]
    with open(os.path.join(HERE, "selection.txt"), "w") as f:
        f.write(f"# Written by make_selection_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


main()
