"""Writes the PyTorch goldens for tests/ops/test_group_norm.cpp and tests/nn/test_norms.cpp.

Run with /usr/bin/python3 (Debian's python3-torch 1.13). norms.txt holds one tensor a line in the
format of ../golden_format.py. For each group_norm case and dtype: the input x, weight w and bias b
(when the case has them), an upstream gradient dy, torch's output y and the gradients
torch.autograd.grad gives for dy. For each BatchNorm case and dtype: the module's weight and bias
(when affine), the inputs of two training steps and an eval step, the training outputs and first
step's gradients, the running statistics after each step, and the eval output.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261127)

# name: (input shape, num_groups, affine, eps)
GROUP_NORM_CASES = {
    "g3_affine": ((2, 6, 3, 3), 3, True, 1e-5),
    "g2_plain": ((2, 4, 5), 2, False, 1e-5),
    "rank2_g2": ((3, 4), 2, True, 1e-5),
    "g1_eps": ((2, 3, 2, 2, 2), 1, True, 1e-3),
}


def group_norm(records, name, shape, groups, affine, eps, dtype, tag):
    channels = shape[1]
    # An offset mean and a spread, so the normalisation does real work.
    x = (torch.randn(*shape, dtype=torch.float64) * 3 + 2).to(dtype).requires_grad_(True)
    inputs = [x]
    w = b = None
    if affine:
        w = torch.randn(channels, dtype=torch.float64).to(dtype).requires_grad_(True)
        b = torch.randn(channels, dtype=torch.float64).to(dtype).requires_grad_(True)
        inputs += [w, b]
    dy = torch.randn(*shape, dtype=torch.float64).to(dtype)
    y = F.group_norm(x, groups, w, b, eps)
    grads = torch.autograd.grad(y, inputs, dy)
    key = f"group_norm.{name}.{tag}"
    records += [(key + ".x", x), (key + ".dy", dy), (key + ".y", y), (key + ".dx", grads[0])]
    if affine:
        records += [(key + ".w", w), (key + ".b", b), (key + ".dw", grads[1]),
                    (key + ".db", grads[2])]


# name: (module class, num_features, input shape, keyword arguments)
BATCH_NORM_CASES = {
    "bn2d": (torch.nn.BatchNorm2d, 3, (4, 3, 2, 2), {}),
    "bn1d_cumulative": (torch.nn.BatchNorm1d, 4, (5, 4), {"momentum": None}),
    "bn1d_rank3_plain": (torch.nn.BatchNorm1d, 3, (2, 3, 4), {"affine": False, "eps": 1e-3}),
    "bn1d_untracked": (torch.nn.BatchNorm1d, 3, (4, 3), {"track_running_stats": False}),
}


def batch_norm(records, name, cls, features, shape, kwargs, dtype, tag):
    m = cls(features, dtype=dtype, **kwargs)
    key = f"batch_norm.{name}.{tag}"
    if m.affine:
        with torch.no_grad():
            m.weight.copy_(torch.randn(features, dtype=torch.float64))
            m.bias.copy_(torch.randn(features, dtype=torch.float64))
        records += [(key + ".weight", m.weight), (key + ".bias", m.bias)]
    for step in (1, 2):
        x = (torch.randn(*shape, dtype=torch.float64) * 2 + 1).to(dtype).requires_grad_(True)
        dy = torch.randn(*shape, dtype=torch.float64).to(dtype)
        y = m(x)
        params = [x] + ([m.weight, m.bias] if m.affine else [])
        grads = torch.autograd.grad(y, params, dy)
        s = f"{key}.step{step}"
        records += [(s + ".x", x), (s + ".dy", dy), (s + ".y", y), (s + ".dx", grads[0])]
        if m.affine:
            records += [(s + ".dweight", grads[1]), (s + ".dbias", grads[2])]
        if m.track_running_stats:
            records += [(s + ".running_mean", m.running_mean.clone()),
                        (s + ".running_var", m.running_var.clone())]
    m.eval()
    x = torch.randn(*shape, dtype=torch.float64).to(dtype)
    with torch.no_grad():
        records += [(key + ".eval.x", x), (key + ".eval.y", m(x))]


def main():
    records = []
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        for name, (shape, groups, affine, eps) in GROUP_NORM_CASES.items():
            group_norm(records, name, shape, groups, affine, eps, dtype, tag)
    # Drawn after the group_norm cases, so that theirs stay as they were.
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        for name, (cls, features, shape, kwargs) in BATCH_NORM_CASES.items():
            batch_norm(records, name, cls, features, shape, kwargs, dtype, tag)
    with open(os.path.join(HERE, "norms.txt"), "w") as f:
        f.write(f"# Written by make_norms_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


main()
