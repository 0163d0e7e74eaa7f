#!/usr/bin/python3
"""Writes attention_goldens.txt: torch's softmax, masking and dropout on the book's chapter-3 data.

Run with Debian's torch 1.13 (CPU): /usr/bin/python3 make_attention_goldens.py
Format, one record per line (lines starting with '#' are comments):
    name dtype shape v1 v2 ... vn
dtype is f32 or f64; shape is comma-separated dims ("6,6"); values are float.hex() of each
element (exact for both dtypes; -inf, inf and nan as Python spells them).
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention_goldens.txt")
lines = []


def emit(name, t):
    lines.append(golden_line(name, t))


# --- the book's input and its 6x6 attention scores (section 3.3) ---------------------------------
inputs = torch.tensor(
    [[0.43, 0.15, 0.89],   # Your     (x^1)
     [0.55, 0.87, 0.66],   # journey  (x^2)
     [0.57, 0.85, 0.64],   # starts   (x^3)
     [0.22, 0.58, 0.33],   # with     (x^4)
     [0.77, 0.25, 0.10],   # one      (x^5)
     [0.05, 0.80, 0.55]])  # step     (x^6)
emit("book.inputs", inputs)
scores = inputs @ inputs.T
emit("book.scores", scores)
emit("book.softmax.dim-1", torch.softmax(scores, dim=-1))
emit("book.softmax.dim0", torch.softmax(scores, dim=0))
emit("book.scores.f64", scores.double())
emit("book.softmax.f64.dim-1", torch.softmax(scores.double(), dim=-1))
emit("book.softmax.f64.dim0", torch.softmax(scores.double(), dim=0))

# --- stability: large entries, -inf entries, an all -inf row (torch gives nan) -------------------
inf = float("inf")
stable = [[1000.0, 1000.0, 0.0], [-inf, 1.0, -inf], [-inf, -inf, -inf], [-1000.0, -1000.0, -999.0],
          [88.0, 89.0, 90.0]]
for dtype in (torch.float32, torch.float64):
    tag = "f32" if dtype == torch.float32 else "f64"
    x = torch.tensor(stable, dtype=dtype)
    emit("stable.x." + tag, x)
    emit("stable.softmax." + tag, torch.softmax(x, dim=-1))

# --- rank 4 [B, H, T, T], softmax over the last dim and a middle dim, and its backward -------------
torch.manual_seed(2024)
for dtype in (torch.float32, torch.float64):
    tag = "f32" if dtype == torch.float32 else "f64"
    x = (torch.rand(2, 3, 4, 4, dtype=dtype) * 6 - 3)
    g = (torch.rand(2, 3, 4, 4, dtype=dtype) * 2 - 1)
    emit("rank4.x." + tag, x)
    emit("rank4.g." + tag, g)
    for dim in (-1, 1):
        xr = x.clone().requires_grad_()
        y = torch.softmax(xr, dim=dim)
        y.backward(g)
        emit("rank4.softmax.dim%d.%s" % (dim, tag), y)
        emit("rank4.softmax_grad.dim%d.%s" % (dim, tag), xr.grad)


# --- the book's causal attention (section 3.5) -----------------------------------------------------
class SelfAttention_v2(torch.nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)


torch.manual_seed(789)
sa_v2 = SelfAttention_v2(3, 2)
with torch.no_grad():
    queries = sa_v2.W_query(inputs)
    keys = sa_v2.W_key(inputs)
    attn_scores = queries @ keys.T
    scaled = attn_scores / keys.shape[-1] ** 0.5
    emit("causal.scaled_scores", scaled)
    # The first, renormalising way: softmax, zero above the diagonal, divide by the row sums.
    attn_weights = torch.softmax(scaled, dim=-1)
    emit("causal.softmax", attn_weights)
    mask_simple = torch.tril(torch.ones(6, 6))
    emit("causal.masked_simple", attn_weights * mask_simple)
    # The -inf way.
    mask = torch.triu(torch.ones(6, 6), diagonal=1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    emit("causal.masked_scaled", masked / keys.shape[-1] ** 0.5)
    attn_weights = torch.softmax(masked / keys.shape[-1] ** 0.5, dim=1)
    emit("causal.attn_weights", attn_weights)

    # --- dropout (section 3.5.2) -------------------------------------------------------------------
    torch.manual_seed(123)
    dropout = torch.nn.Dropout(0.5)
    example = torch.ones(6, 6)
    emit("dropout.book.ones", dropout(example))
    torch.manual_seed(123)
    emit("dropout.book.attn_weights", dropout(attn_weights))

# tril / triu with several diagonals on a non-square [2, 3, 5] block (torch's own semantics).
x = torch.arange(30, dtype=torch.float64).reshape(2, 3, 5) + 1
emit("tri.x", x)
for k in (-1, 0, 2):
    emit("tril.k%d" % k, torch.tril(x, diagonal=k))
    emit("triu.k%d" % k, torch.triu(x, diagonal=k))

# Dropout on other shapes, p and dtypes; the backward is dY * noise.
for name, shape, p, dtype, seed in (("f32.p015", (2, 3, 4, 5), 0.15, torch.float32, 7),
                                    ("f64.p01", (2, 3, 4, 5), 0.1, torch.float64, 0),
                                    ("f32.p09", (3, 40), 0.9, torch.float32, 11)):
    torch.manual_seed(seed + 1000)
    x = torch.randn(*shape, dtype=dtype)
    g = torch.randn(*shape, dtype=dtype)
    torch.manual_seed(seed)
    xr = x.clone().requires_grad_()
    y = torch.nn.functional.dropout(xr, p=p, training=True)
    y.backward(g)
    emit("dropout.%s.x" % name, x)
    emit("dropout.%s.g" % name, g)
    emit("dropout.%s.y" % name, y)
    emit("dropout.%s.grad" % name, xr.grad)

with open(OUT, "w") as f:
    f.write("# torch goldens for tests/ops/test_{softmax,masked_fill,causal_mask,tril,triu,dropout}.cpp;"
            " written by make_attention_goldens.py\n")
    f.write("# torch %s; format: name dtype shape values (float.hex)\n" % torch.__version__)
    for line in lines:
        f.write(line + "\n")
print("wrote %d records to %s" % (len(lines), OUT))
