"""Writes the PyTorch goldens for tests/ops/test_grad_goldens.cpp: second derivatives.

Run with /usr/bin/python3 (Debian's python3-torch 1.13) and the reference BLAS selected
(docs/testing.md). grad.txt holds one tensor a line (the format of ../golden_format.py), all in
float64. For each case: the inputs, the output gradient v and a direction u; torch's first
gradients g = grad(f(x), x, v, create_graph=True), and the second-order products
d⟨g, u⟩/dx = grad(g, x, u) (for every input x). Then the HVP of a small MLP's loss w.r.t. its
parameters, a gradient penalty's gradient w.r.t. a critic's parameters, and a MAML outer gradient.
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261127)
D = torch.float64


def leaf(*shape, scale=1.0):
    return (torch.randn(*shape, dtype=D) * scale).requires_grad_(True)


def causal_attention(q, k, v, heads):
    # The book's MultiHeadAttention on q, k, v already projected: [B, T, C] -> [B, T, C].
    b, t, c = q.shape
    split = lambda x: x.view(b, t, heads, c // heads).transpose(1, 2)  # noqa: E731
    qh, kh, vh = split(q), split(k), split(v)
    scores = qh @ kh.transpose(2, 3)
    mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(mask, -torch.inf)
    weights = torch.softmax(scores / kh.shape[-1] ** 0.5, dim=-1)
    return (weights @ vh).transpose(1, 2).contiguous().view(b, t, c)


CASES = {
    "softmax": (lambda x: torch.softmax(x[0], -1), [(3, 4)]),
    "log_softmax": (lambda x: torch.log_softmax(x[0], 0), [(3, 4)]),
    "layer_norm": (lambda x: F.layer_norm(x[0], (5,), x[1], x[2], 1e-5), [(2, 3, 5), (5,), (5,)]),
    "gelu": (lambda x: F.gelu(x[0], approximate="tanh"), [(3, 4)]),
    "matmul": (lambda x: x[0] @ x[1], [(2, 3, 4), (4, 2)]),
    "tanh": (lambda x: torch.tanh(x[0]), [(2, 3)]),
    "div": (lambda x: x[0] / x[1], [(2, 3), (3,)]),
    "cross_entropy": (lambda x: F.cross_entropy(x[0], torch.tensor([2, 0, 3])), [(3, 4)]),
    "causal_attention": (lambda x: causal_attention(x[0], x[1], x[2], 2),
                         [(2, 3, 4), (2, 3, 4), (2, 3, 4)]),
    # Drawn after the MAML case (main), so that the cases above keep their inputs.
    "gelu_erf": (lambda x: F.gelu(x[0]), [(3, 4)]),
}
LATE_CASES = ("gelu_erf",)


def op_case(records, name):
    fn, shapes = CASES[name]
    xs = [leaf(*s) for s in shapes]
    if name == "div":
        with torch.no_grad():
            xs[1].copy_(xs[1].abs() + 0.5)
    y = fn(xs)
    v = torch.randn_like(y)
    u = [torch.randn_like(x) for x in xs]
    g = torch.autograd.grad(y, xs, v, create_graph=True)
    # An input no first gradient depends on (layer_norm's bias) has a zero second derivative.
    h = torch.autograd.grad(g, xs, u, allow_unused=True)
    h = [torch.zeros_like(x) if r is None else r for x, r in zip(xs, h)]
    for i, x in enumerate(xs):
        records += [(f"{name}.x{i}", x), (f"{name}.u{i}", u[i]), (f"{name}.g{i}", g[i]),
                    (f"{name}.h{i}", h[i])]
    records.append((f"{name}.v", v))


def mlp_hvp(records):
    # Linear(3, 4) -> tanh -> Linear(4, 2), MSE against targets: H·v w.r.t. all four parameters.
    w1, b1, w2, b2 = leaf(4, 3, scale=0.5), leaf(4), leaf(2, 4, scale=0.5), leaf(2)
    params = [w1, b1, w2, b2]
    x, target = torch.randn(5, 3, dtype=D), torch.randn(5, 2, dtype=D)
    loss = F.mse_loss(F.linear(torch.tanh(F.linear(x, w1, b1)), w2, b2), target)
    vs = [torch.randn_like(p) for p in params]
    g = torch.autograd.grad(loss, params, create_graph=True)
    hv = torch.autograd.grad(g, params, vs)
    records += [("mlp.x", x), ("mlp.target", target), ("mlp.loss", loss)]
    for name, p, v, r in zip(("w1", "b1", "w2", "b2"), params, vs, hv):
        records += [(f"mlp.{name}", p), (f"mlp.v_{name}", v), (f"mlp.hv_{name}", r)]


def gradient_penalty(records):
    # WGAN-GP: critic Linear(3, 8) -> tanh -> Linear(8, 1); penalty = mean((‖∇ₓ critic(x)‖ − 1)²).
    w1, b1, w2, b2 = leaf(8, 3, scale=0.5), leaf(8), leaf(1, 8, scale=0.5), leaf(1)
    x = torch.randn(4, 3, dtype=D).requires_grad_(True)
    score = F.linear(torch.tanh(F.linear(x, w1, b1)), w2, b2).sum()
    (dx,) = torch.autograd.grad(score, x, create_graph=True)
    penalty = ((dx.pow(2).sum(1).sqrt() - 1) ** 2).mean()
    # The penalty does not depend on the last bias (∇ₓ does not see it): three gradients.
    grads = torch.autograd.grad(penalty, [w1, b1, w2])
    records += [("gp.x", x), ("gp.penalty", penalty), ("gp.b2", b2)]
    for name, p, r in zip(("w1", "b1", "w2"), (w1, b1, w2), grads):
        records += [(f"gp.{name}", p), (f"gp.grad_{name}", r)]


def maml(records):
    # One inner SGD step (lr 0.1) on a support set, then the query loss's gradient w.r.t. w.
    w = leaf(3, 2, scale=0.5)
    xs, ys = torch.randn(4, 3, dtype=D), torch.randn(4, 2, dtype=D)
    xq, yq = torch.randn(4, 3, dtype=D), torch.randn(4, 2, dtype=D)
    inner = F.mse_loss(torch.tanh(xs @ w), ys)
    (dw,) = torch.autograd.grad(inner, w, create_graph=True)
    adapted = w - 0.1 * dw
    outer = F.mse_loss(torch.tanh(xq @ adapted), yq)
    (grad_w,) = torch.autograd.grad(outer, w)
    records += [("maml.w", w), ("maml.xs", xs), ("maml.ys", ys), ("maml.xq", xq),
                ("maml.yq", yq), ("maml.outer", outer), ("maml.grad_w", grad_w)]


def main():
    records = []
    for name in CASES:
        if name not in LATE_CASES:
            op_case(records, name)
    mlp_hvp(records)
    gradient_penalty(records)
    maml(records)
    for name in LATE_CASES:
        op_case(records, name)
    with open(os.path.join(HERE, "grad.txt"), "w") as f:
        f.write("# Written by make_grad_goldens.py (torch %s); do not edit.\n" % torch.__version__)
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


if __name__ == "__main__":
    main()
