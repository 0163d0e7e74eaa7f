"""Writes the PyTorch goldens for tests/ops/test_losses.cpp and test_binary_cross_entropy.cpp.

Run with /usr/bin/python3 (Debian's python3-torch 1.13). losses.txt holds one tensor a line in the
format of ../golden_format.py. For each case and dtype (tag f32 or f64): the differentiable
inputs (.x, .t, .x1, .x2), the constants (.w weights, .pw pos_weight, .y a ±1 target, .ids class
targets as i64), an upstream gradient .dy of the loss's shape, torch's loss .out and the gradients
torch.autograd.grad gives for dy (.dx, .dt, .dx1, .dx2). Elementwise losses are elementwise in
BLAS-free code, so the BLAS alternative does not matter here.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261127)
REDUCTIONS = ("none", "mean", "sum")


def leaf(t, dtype):
    return t.detach().clone().to(dtype).requires_grad_(True)


def run(records, name, fn, grads, consts):
    """grads: (suffix, tensor requiring grad) in order; consts: (suffix, tensor) written as is."""
    out = fn()
    dy = torch.randn(out.shape, dtype=torch.float64).to(out.dtype)
    got = torch.autograd.grad(out, [t for _, t in grads], dy)
    records += [(f"{name}.{s}", t) for s, t in grads]
    records += [(f"{name}.{s}", t) for s, t in consts]
    records += [(f"{name}.dy", dy), (f"{name}.out", out)]
    records += [(f"{name}.d{s}", g) for (s, _), g in zip(grads, got)]


def regression_pair(dtype):
    # [4, 5] with equal pairs (the kinks at 0) and differences of exactly ±0.5, ±1, ±2 (the
    # boundaries of smooth_l1 and huber with beta/delta 0.5, 1, 2).
    x = torch.randn(4, 5, dtype=torch.float64) * 2
    t = torch.randn(4, 5, dtype=torch.float64) * 2
    t[0, 0] = x[0, 0]
    t[0, 1] = x[0, 1]
    for k, d in enumerate((0.5, -0.5, 1.0, -1.0, 2.0, -2.0)):
        x[1 + k // 5, k % 5] = 0.25
        t[1 + k // 5, k % 5] = 0.25 - d
    return leaf(x, dtype), leaf(t, dtype)


def main():
    records = []
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        for r in REDUCTIONS:
            x, t = regression_pair(dtype)
            run(records, f"mse.{r}.{tag}", lambda: F.mse_loss(x, t, reduction=r),
                [("x", x), ("t", t)], [])
            run(records, f"l1.{r}.{tag}", lambda: F.l1_loss(x, t, reduction=r),
                [("x", x), ("t", t)], [])
            for beta in (1.0, 0.5, 0.0):
                run(records, f"smooth_l1_b{beta}.{r}.{tag}",
                    lambda: F.smooth_l1_loss(x, t, reduction=r, beta=beta), [("x", x), ("t", t)], [])
            for delta in (1.0, 2.0):
                run(records, f"huber_d{delta}.{r}.{tag}",
                    lambda: F.huber_loss(x, t, reduction=r, delta=delta), [("x", x), ("t", t)], [])

            # binary_cross_entropy: probabilities with 0 and 1 (the clamped logs) and a weight [5].
            p = torch.rand(4, 5, dtype=torch.float64)
            p[0, 0], p[0, 1], p[0, 2] = 0.0, 1.0, 1e-50 if dtype == torch.float64 else 1e-30
            q = torch.rand(4, 5, dtype=torch.float64)
            q[0, 3], q[0, 4] = 0.0, 1.0
            x, t = leaf(p, dtype), leaf(q, dtype)
            w = (torch.rand(5, dtype=torch.float64) + 0.5).to(dtype)
            run(records, f"bce.{r}.{tag}", lambda: F.binary_cross_entropy(x, t, reduction=r),
                [("x", x), ("t", t)], [])
            run(records, f"bce_w.{r}.{tag}",
                lambda: F.binary_cross_entropy(x, t, weight=w, reduction=r), [("x", x), ("t", t)],
                [("w", w)])

            # with logits: large |x| (the stable form), weight [5] and pos_weight [5].
            z = torch.randn(4, 5, dtype=torch.float64) * 4
            z[0, 0], z[0, 1], z[0, 2] = 40.0, -40.0, 0.0
            x, t = leaf(z, dtype), leaf(torch.rand(4, 5, dtype=torch.float64), dtype)
            pw = (torch.rand(5, dtype=torch.float64) * 3).to(dtype)
            run(records, f"bce_logits.{r}.{tag}",
                lambda: F.binary_cross_entropy_with_logits(x, t, reduction=r),
                [("x", x), ("t", t)], [])
            run(records, f"bce_logits_w_pw.{r}.{tag}",
                lambda: F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw,
                                                           reduction=r),
                [("x", x), ("t", t)], [("w", w), ("pw", pw)])

            # nll_loss and cross_entropy: [6, 5] with an ignored target, and [2, 4, 3, 2].
            cw = (torch.rand(5, dtype=torch.float64) + 0.5).to(dtype)
            ids = torch.tensor([3, 0, -100, 4, 1, 3])
            x = leaf(torch.randn(6, 5, dtype=torch.float64) * 2, dtype)
            lp = leaf(torch.log_softmax(torch.randn(6, 5, dtype=torch.float64), 1), dtype)
            run(records, f"nll.{r}.{tag}", lambda: F.nll_loss(lp, ids, reduction=r), [("x", lp)],
                [("ids", ids)])
            run(records, f"nll_w.{r}.{tag}", lambda: F.nll_loss(lp, ids, weight=cw, reduction=r),
                [("x", lp)], [("ids", ids), ("w", cw)])
            for ls in (0.0, 0.2):
                run(records, f"ce_ls{ls}.{r}.{tag}",
                    lambda: F.cross_entropy(x, ids, reduction=r, label_smoothing=ls), [("x", x)],
                    [("ids", ids)])
                run(records, f"ce_w_ls{ls}.{r}.{tag}",
                    lambda: F.cross_entropy(x, ids, weight=cw, reduction=r, label_smoothing=ls),
                    [("x", x)], [("ids", ids), ("w", cw)])
            ids4 = torch.randint(0, 4, (2, 3, 2))
            ids4[1, 2, 0] = -100
            x4 = leaf(torch.randn(2, 4, 3, 2, dtype=torch.float64), dtype)
            cw4 = cw[:4].clone()
            run(records, f"ce4d_w_ls0.1.{r}.{tag}",
                lambda: F.cross_entropy(x4, ids4, weight=cw4, reduction=r, label_smoothing=0.1),
                [("x", x4)], [("ids", ids4), ("w", cw4)])
            run(records, f"nll4d.{r}.{tag}", lambda: F.nll_loss(x4, ids4, reduction=r),
                [("x", x4)], [("ids", ids4)])
            # probability targets (differentiable), with weight and smoothing.
            pt = leaf(torch.softmax(torch.randn(6, 5, dtype=torch.float64), 1), dtype)
            run(records, f"ce_prob.{r}.{tag}", lambda: F.cross_entropy(x, pt, reduction=r),
                [("x", x), ("t", pt)], [])
            run(records, f"ce_prob_w_ls0.3.{r}.{tag}",
                lambda: F.cross_entropy(x, pt, weight=cw, reduction=r, label_smoothing=0.3),
                [("x", x), ("t", pt)], [("w", cw)])

            # cosine_embedding_loss [4, 6] with y ±1, margin_ranking_loss [6].
            x1 = leaf(torch.randn(4, 6, dtype=torch.float64), dtype)
            x2 = leaf(torch.randn(4, 6, dtype=torch.float64), dtype)
            y = torch.tensor([1.0, -1.0, -1.0, 1.0], dtype=dtype)
            run(records, f"cosine_embedding_m0.2.{r}.{tag}",
                lambda: F.cosine_embedding_loss(x1, x2, y, margin=0.2, reduction=r),
                [("x1", x1), ("x2", x2)], [("y", y)])
            a = leaf(torch.randn(6, dtype=torch.float64), dtype)
            b = leaf(torch.randn(6, dtype=torch.float64), dtype)
            yr = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0, -1.0], dtype=dtype)
            run(records, f"margin_ranking_m0.1.{r}.{tag}",
                lambda: F.margin_ranking_loss(a, b, yr, margin=0.1, reduction=r),
                [("x1", a), ("x2", b)], [("y", yr)])

        # kl_div: every reduction, batchmean included, target with a zero; log_target.
        for r in REDUCTIONS + ("batchmean",):
            x = leaf(torch.log_softmax(torch.randn(3, 4, dtype=torch.float64), 1), dtype)
            pt = torch.softmax(torch.randn(3, 4, dtype=torch.float64), 1)
            pt[1, 2] = 0.0
            t = leaf(pt, dtype)
            run(records, f"kl_div.{r}.{tag}", lambda: F.kl_div(x, t, reduction=r), [("x", x)],
                [("t", t)])
            lt = leaf(torch.log(pt[:, :] + 0.1), dtype)
            run(records, f"kl_div_log.{r}.{tag}",
                lambda: F.kl_div(x, lt, reduction=r, log_target=True), [("x", x), ("t", lt)], [])

        x1 = leaf(torch.randn(4, 6, dtype=torch.float64), dtype)
        x2 = leaf(torch.randn(4, 6, dtype=torch.float64), dtype)
        run(records, f"cosine_similarity.{tag}", lambda: F.cosine_similarity(x1, x2, dim=1),
            [("x1", x1), ("x2", x2)], [])

    with open(os.path.join(HERE, "losses.txt"), "w") as f:
        f.write(f"# Written by make_losses_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


main()
