#!/usr/bin/python3
"""Writes gemm_bf16_goldens.txt: torch's bf16 matrix products, for tests/kernels/test_gemm_bf16.cpp.

Run with Debian's torch 1.13 (CPU): /usr/bin/python3 make_bf16_goldens.py
Format (tests/ops/hex_goldens.h), one tensor a line: name rank dims... float.hex() values.
The operands are not stored: both sides make them from the same integer hash (operand() below,
exact in float64 and rounded once to float32), so only torch's products are written:
torch.matmul(a.bfloat16(), b.bfloat16()), its bfloat16 result widened to float32.
"""
import torch

SHAPES = [(16, 64, 48), (33, 96, 40), (24, 160, 32), (8, 768, 16)]  # (m, k, n)


def operand(rows, cols, seed):
    """x[i, j] = 2·h/2^32 − 1 with h = (index·2654435761 + seed·40503) mod 2^32, as float32."""
    values = []
    for index in range(rows * cols):
        h = (index * 2654435761 + seed * 40503) % (1 << 32)
        values.append(2.0 * h / float(1 << 32) - 1.0)
    return torch.tensor(values, dtype=torch.float64).reshape(rows, cols).float()


def line(name, t):
    dims = " ".join(str(d) for d in t.shape)
    values = " ".join(float(v).hex() for v in t.reshape(-1).tolist())
    return f"{name} {t.dim()} {dims} {values}\n"


torch.set_num_threads(1)
with open("gemm_bf16_goldens.txt", "w") as out:
    out.write(f"# torch {torch.__version__}: torch.matmul(a.bfloat16(), b.bfloat16()).float()\n")
    for m, k, n in SHAPES:
        a = operand(m, k, 1)
        b = operand(k, n, 2)
        c = torch.matmul(a.bfloat16(), b.bfloat16()).float()
        out.write(line(f"c_{m}_{k}_{n}", c))
