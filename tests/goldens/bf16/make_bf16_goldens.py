#!/usr/bin/python3
"""Writes gemm_bf16_goldens.txt: torch's bf16 matrix products, for tests/kernels/gemm/test_gemm_bf16.cpp.

Run with Debian's torch 1.13 (CPU): /usr/bin/python3 make_bf16_goldens.py
Format: the suite's one golden format (tests/goldens/golden_format.py, read by tests/goldens.h).
The operands are not stored: both sides make them from the same integer hash (operand() below,
exact in float64 and rounded once to float32), so only torch's products are written:
torch.matmul(a.bfloat16(), b.bfloat16()), its bfloat16 result widened to float32.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402

SHAPES = [(16, 64, 48), (33, 96, 40), (24, 160, 32), (8, 768, 16)]  # (m, k, n)


def operand(rows, cols, seed):
    """x[i, j] = 2·h/2^32 − 1 with h = (index·2654435761 + seed·40503) mod 2^32, as float32."""
    values = []
    for index in range(rows * cols):
        h = (index * 2654435761 + seed * 40503) % (1 << 32)
        values.append(2.0 * h / float(1 << 32) - 1.0)
    return torch.tensor(values, dtype=torch.float64).reshape(rows, cols).float()


torch.set_num_threads(1)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gemm_bf16_goldens.txt"), "w") as out:
    out.write(f"# torch {torch.__version__}: torch.matmul(a.bfloat16(), b.bfloat16()).float()\n")
    for m, k, n in SHAPES:
        a = operand(m, k, 1)
        b = operand(k, n, 2)
        c = torch.matmul(a.bfloat16(), b.bfloat16()).float()
        out.write(golden_line(f"c_{m}_{k}_{n}", c) + "\n")
