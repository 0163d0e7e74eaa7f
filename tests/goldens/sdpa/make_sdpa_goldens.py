#!/usr/bin/python3
"""Writes sdpa_goldens.txt: torch's attention core of the book's MultiHeadAttention, with dropout
and without (eval).

What causal_dot_product_attention computes (tests/ops/test_causal_dot_product_attention.cpp):
the projections q, k, v [2, 4, 6] split into 2 heads, q·kᵀ, the causal mask, softmax of
scores / √3, nn.Dropout(0.5) after torch.manual_seed(17), ·v, heads merged; then backward of an
upstream gradient g. Then the same ops without dropout (eval) on that case (sdpa.eval.*) and on
two more (sdpa.direct.*: [1, 24, 32], 2 heads, D = 16, the fused direct kernel's shapes;
sdpa.blocked.*: [1, 70, 8], 1 head, T across the blocked kernel's 32-row query blocks), whose
inputs are drawn after the first case's. Run with Debian's torch 1.13 (CPU) and the reference BLAS selected:
    /usr/bin/python3 make_sdpa_goldens.py
Format as tests/goldens/attention/attention_goldens.txt: `name dtype shape v1 ... vn`, values
as float.hex().
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sdpa_goldens.txt")
lines = []


def emit(name, t):
    lines.append(golden_line(name, t))


b, num_tokens, d_out, num_heads = 2, 4, 6, 2
data = torch.Generator().manual_seed(2024)  # inputs from their own stream
q = (torch.rand(b, num_tokens, d_out, generator=data) * 4 - 2).requires_grad_()
k = (torch.rand(b, num_tokens, d_out, generator=data) * 4 - 2).requires_grad_()
v = (torch.rand(b, num_tokens, d_out, generator=data) * 2 - 1).requires_grad_()
g = torch.rand(b, num_tokens, d_out, generator=data) * 2 - 1
for name, t in (("sdpa.q", q), ("sdpa.k", k), ("sdpa.v", v), ("sdpa.g", g)):
    emit(name, t)


def attention(q, k, v, num_heads, dropout):
    """The book's MultiHeadAttention.forward between the projections and out_proj."""
    b, num_tokens, d_out = q.shape
    head_dim = d_out // num_heads
    queries = q.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    keys = k.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    values = v.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    attn_scores = queries @ keys.transpose(2, 3)
    mask = torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1).bool()
    attn_scores.masked_fill_(mask, -torch.inf)
    attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
    if dropout is not None:
        torch.manual_seed(17)
        attn_weights = dropout(attn_weights)
    return (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, d_out)


def eval_case(prefix, q, k, v, g, num_heads):
    """Inputs, output and gradients of the attention without dropout (eval, or p = 0)."""
    q, k, v = (t.detach().clone().requires_grad_() for t in (q, k, v))
    out = attention(q, k, v, num_heads, None)
    out.backward(g)
    for name, t in (("q", q), ("k", k), ("v", v), ("g", g), ("out", out), ("dq", q.grad),
                    ("dk", k.grad), ("dv", v.grad)):
        emit(prefix + "." + name, t)


context_vec = attention(q, k, v, num_heads, torch.nn.Dropout(0.5))
context_vec.backward(g)
emit("sdpa.out", context_vec)
emit("sdpa.dq", q.grad)
emit("sdpa.dk", k.grad)
emit("sdpa.dv", v.grad)

eval_case("sdpa.eval", q, k, v, g, num_heads)
for prefix, shape, heads in (("sdpa.direct", (1, 24, 32), 2), ("sdpa.blocked", (1, 70, 8), 1)):
    cq = torch.rand(*shape, generator=data) * 4 - 2
    ck = torch.rand(*shape, generator=data) * 4 - 2
    cv = torch.rand(*shape, generator=data) * 2 - 1
    cg = torch.rand(*shape, generator=data) * 2 - 1
    eval_case(prefix, cq, ck, cv, cg, heads)

with open(OUT, "w") as f:
    f.write("# written by make_sdpa_goldens.py (torch %s)\n" % torch.__version__)
    f.write("\n".join(lines) + "\n")
