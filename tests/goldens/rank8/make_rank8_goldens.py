"""Writes the PyTorch goldens for tests/ops/test_rank8.cpp: one case per op family at ranks 5 to 8.

Run with /usr/bin/python3 (Debian's python3-torch 1.13). rank8.txt holds one tensor a line in the
format of ../golden_format.py. A case `c` records its float inputs c.x0, c.x1, .. (and index
tensors c.i0, ..), an upstream gradient c.dy, torch's output c.y and the gradients c.dx0, ..
that torch.autograd.grad gives for dy (one per float input). Elementwise results are float64 so
the C++ test can ask for them bit for bit; the mul case also runs in float32.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261127)


def case(records, name, fn, shapes, index=(), dtype=torch.float64):
    xs = [torch.randn(*s, dtype=torch.float64).to(dtype).requires_grad_(True) for s in shapes]
    y = fn(*xs, *index)
    dy = torch.randn(y.shape, dtype=torch.float64).to(dtype)
    grads = torch.autograd.grad(y, xs, dy)
    records += [(f"{name}.x{k}", x) for k, x in enumerate(xs)]
    records += [(f"{name}.i{k}", i) for k, i in enumerate(index)]
    records += [(f"{name}.dy", dy), (f"{name}.y", y)]
    records += [(f"{name}.dx{k}", g) for k, g in enumerate(grads)]


def main():
    r = []
    # Broadcast binary ops: rank 8 against rank 7, size-1 dims on both sides.
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        case(r, f"mul.{tag}", torch.mul, [(2, 1, 3, 1, 2, 1, 2, 3), (3, 1, 2, 1, 1, 2, 3)],
             dtype=dtype)
    case(r, "add", torch.add, [(3, 1, 2, 2, 1, 3, 1), (1, 3, 2, 1, 1, 2, 1, 3)])
    case(r, "sub", torch.sub, [(1, 2, 1, 2, 1, 3, 2, 1), (2, 3)])
    # where: cond rank 6, a rank 8, b rank 5.
    cond = (torch.rand(2, 1, 3, 1, 2, 1) > 0.5).to(torch.float64)
    case(r, "where", lambda a, b, c: torch.where(c != 0, a, b),
         [(2, 1, 2, 1, 3, 2, 2, 1), (2, 1, 1, 2, 3)], index=(cond,))
    # Reductions over dims, keepdim both ways.
    for keep in (False, True):
        k = "keep" if keep else "drop"
        case(r, f"sum_dims.{k}", lambda x: torch.sum(x, (1, 4, -2), keepdim=keep),
             [(2, 3, 2, 1, 3, 2, 2, 3)])
        case(r, f"mean_dims.{k}", lambda x: torch.mean(x, (0, 5), keepdim=keep),
             [(2, 3, 2, 2, 3, 2)])
        case(r, f"amax.{k}", lambda x: torch.amax(x, (2, 6), keepdim=keep),
             [(2, 2, 3, 1, 2, 2, 3)])
        case(r, f"sum_dim.{k}", lambda x: torch.sum(x, 3, keepdim=keep), [(2, 2, 1, 3, 2, 2, 2, 2)])
    # Layout ops.
    case(r, "permute", lambda x: x.permute(6, 0, 3, 1, 5, 2, 4), [(2, 3, 1, 2, 2, 3, 2)])
    case(r, "transpose", lambda x: x.transpose(1, 6), [(2, 3, 1, 2, 2, 1, 2, 3)])
    case(r, "transpose_last", lambda x: x.transpose(-1, -2), [(2, 1, 3, 2, 1, 2, 3, 2)])
    case(r, "movedim", lambda x: torch.movedim(x, (0, 5), (6, 1)), [(2, 3, 1, 2, 2, 3, 2)])
    case(r, "reshape", lambda x: x.reshape(2, 1, 3, 2, 1, 2, 2, 3), [(6, 4, 6)])
    case(r, "flatten", lambda x: x.flatten(2, 5), [(2, 3, 2, 1, 2, 3, 2, 2)])
    case(r, "unflatten", lambda x: x.unflatten(2, (2, 1, 3, 2)), [(2, 3, 12, 2, 2)])
    case(r, "squeeze", lambda x: x.squeeze(), [(2, 1, 3, 1, 2, 1, 2, 1)])
    case(r, "unsqueeze", lambda x: x.unsqueeze(4), [(2, 3, 1, 2, 2, 3, 2)])
    case(r, "cat", lambda a, b: torch.cat((a, b), 3), [(2, 1, 2, 3, 2, 1, 2, 2),
                                                       (2, 1, 2, 1, 2, 1, 2, 2)])
    case(r, "stack", lambda a, b: torch.stack((a, b), 5), [(2, 1, 3, 2, 2, 3, 2)] * 2)
    case(r, "split", lambda x: torch.split(x, (1, 2), 4)[1], [(2, 1, 2, 2, 3, 2, 1, 2)])
    case(r, "expand", lambda x: x.expand(2, 3, 2, 2, 3, 2, 2, 2), [(3, 1, 2, 3, 1, 1, 2)])
    case(r, "sum_to_size", lambda x: x.sum_to_size(2, 1, 2, 1, 3, 1), [(2, 3, 2, 2, 2, 2, 3, 1)])
    case(r, "repeat", lambda x: x.repeat(2, 1, 2, 1, 2, 1, 1, 2), [(2, 1, 3, 2, 2)])
    case(r, "roll", lambda x: torch.roll(x, (1, -2, 3), (1, 4, 7)), [(2, 3, 1, 2, 3, 1, 2, 3)])
    case(r, "roll_flat", lambda x: torch.roll(x, 5), [(2, 1, 3, 2, 1, 2)])
    case(r, "flip", lambda x: torch.flip(x, (0, 3, 6)), [(2, 3, 1, 2, 2, 1, 3, 2)])
    # Indexing at ranks 6 to 8.
    sel = torch.tensor([2, 0, 2, 1])
    case(r, "index_select", lambda x, i: torch.index_select(x, 4, i), [(2, 1, 2, 2, 3, 2, 2)],
         index=(sel,))
    gidx = torch.randint(0, 3, (2, 1, 2, 2, 2, 3))
    case(r, "gather", lambda x, i: torch.gather(x, 3, i), [(2, 2, 2, 3, 2, 3)], index=(gidx,))
    sidx = torch.stack([torch.randperm(3)[:2] for _ in range(2 * 2 * 2 * 2 * 3)]).reshape(
        2, 1, 2, 2, 2, 3, 2).transpose(-1, 4)
    sidx = sidx.contiguous()
    case(r, "scatter", lambda x, s, i: torch.scatter(x, 4, i, s),
         [(2, 1, 2, 2, 3, 3, 2), tuple(sidx.shape)], index=(sidx,))
    case(r, "scatter_add", lambda x, s, i: torch.scatter_add(x, 4, i, s),
         [(2, 1, 2, 2, 3, 3, 2), tuple(sidx.shape)], index=(sidx,))
    # Softmax over a middle dim.
    case(r, "softmax", lambda x: torch.softmax(x, 3), [(2, 1, 2, 3, 2, 2, 3)])
    case(r, "log_softmax", lambda x: torch.log_softmax(x, -5), [(2, 2, 1, 3, 2, 2, 3, 2)])
    # Matmul with three and four batch dims, broadcast both ways.
    case(r, "matmul", torch.matmul, [(2, 1, 3, 2, 4, 3), (1, 2, 1, 2, 3, 5)])
    case(r, "matmul_rank8", torch.matmul, [(2, 1, 2, 1, 2, 1, 3, 4), (2, 1, 2, 1, 2, 4, 2)])
    with open(os.path.join(HERE, "rank8.txt"), "w") as f:
        f.write(f"# Written by make_rank8_goldens.py with torch {torch.__version__}.\n")
        for name, t in r:
            f.write(golden_line(name, t) + "\n")


if __name__ == "__main__":
    main()
