"""Writes torch's print of int64 tensors for tests/graph/test_ids.cpp (Ids::str()).

Run with /usr/bin/python3 (Debian's python3-torch 1.13). ids_print.txt is in the suite's one
golden format (tests/goldens/golden_format.py, read by tests/goldens.h), two records a case k:
    ids:<k> i64 <shape> <ids>
    print:<k> txt <str(torch.tensor(ids))>
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line, text_line  # noqa: E402  the one golden format

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
        for k, t in enumerate(CASES):
            f.write(golden_line("ids:%d" % k, t) + "\n")
            f.write(text_line("print:%d" % k, str(t)) + "\n")


main()
