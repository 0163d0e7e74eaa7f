"""Writes torch's print of int64 tensors for tests/graph/test_ids.cpp (Ids::str()).

Run with /usr/bin/python3 (Debian's python3-torch 1.13). ids_print.txt holds pairs of lines:
    ids <rank> <dims...> <ids...>
    <str(torch.tensor(ids))> with each newline written as '|'
"""
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = [
    torch.tensor([[15496, 11, 314, 716]]),
    torch.tensor([[6109, 3626, 6100, 345], [6109, 1110, 6622, 257]]),
    torch.tensor([15496, 11, 314, 716, 27018, 24086, 47843, 30961, 42348, 7267]),
    torch.tensor(7),
    torch.tensor([-3, 12, 0]),
    torch.arange(24).reshape(2, 3, 4),
    torch.arange(40) * 1000,
    torch.tensor([[5]]),
]


def main():
    with open(os.path.join(HERE, "ids_print.txt"), "w") as f:
        f.write(f"# Written by make_ids_goldens.py with torch {torch.__version__}.\n")
        for t in CASES:
            dims = [str(d) for d in t.shape]
            ids = [str(v) for v in t.reshape(-1).tolist()]
            f.write(" ".join(["ids", str(t.dim())] + dims + ids) + "\n")
            assert "|" not in str(t)
            f.write(str(t).replace("\n", "|") + "\n")


main()
