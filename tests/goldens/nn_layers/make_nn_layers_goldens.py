"""Writes the PyTorch goldens for tests/nn/test_nn_layers.cpp (issue #36's remaining layers).

Run with /usr/bin/python3 (Debian's python3-torch 1.13). nn_layers.txt holds one tensor a line in
the format of ../golden_format.py:
- torch.nn.LayerNorm cases (normalized_shape of one or two dims, with and without weight and
  bias): input x, weight w, bias b, upstream gradient dy, output y and the gradients.
- RMSNorm cases: torch 1.13 has no nn.RMSNorm, so torch 2.4's formula is written out:
  x * rsqrt(mean(x², the last dims, keepdim) + eps) * weight, eps None = finfo(dtype).eps.
- nn.Embedding with padding_idx (the initial weight from manual_seed, output, weight gradient)
  and max_norm (the weight before and after the forward's renorm, the output, the gradient).
- The elementwise regression losses on an input and a target of different shapes that broadcast
  (torch warns and broadcasts): each reduction's loss and both gradients.
- cross_entropy with probability targets and a class weight that requires grad (torch's
  composite differentiates it; with class indices torch refuses): the loss and the gradients.
- Conv1d and Conv2d with each padding_mode, and ConvTranspose1d (module and functional): the
  weights from manual_seed (torch's init), the output and the gradients of input and parameters.
- random_split with fractions: each part's indices.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = ((torch.float32, "f32"), (torch.float64, "f64"))

# name: (input shape, normalized_shape, eps, has weight, has bias)
LAYER_NORM_CASES = {
    "ln_last": ((2, 3, 5), (5,), 1e-5, True, True),
    "ln_two_dims": ((2, 3, 4), (3, 4), 1e-5, True, True),
    "ln_no_bias": ((4, 6), (6,), 1e-5, True, False),
    "ln_plain": ((2, 2, 3), (2, 3), 1e-3, False, False),
}

# name: (input shape, normalized_shape, eps (None: finfo eps), has weight)
RMS_NORM_CASES = {
    "rms_last": ((3, 8), (8,), None, True),
    "rms_two_dims": ((3, 2, 4), (2, 4), 1e-6, True),
    "rms_plain": ((2, 5), (5,), None, False),
}


def randn(shape, dtype, scale=1.0, shift=0.0):
    return (torch.randn(tuple(shape), dtype=torch.float64) * scale + shift).to(dtype)


def layer_norm(records, name, shape, normalized, eps, has_w, has_b, dtype, tag):
    x = randn(shape, dtype, 2.0, 1.0).requires_grad_(True)
    inputs = [x]
    w = b = None
    if has_w:
        w = randn(normalized, dtype).requires_grad_(True)
        inputs.append(w)
    if has_b:
        b = randn(normalized, dtype).requires_grad_(True)
        inputs.append(b)
    dy = randn(shape, dtype)
    # bias=False (torch 2.1's nn.LayerNorm option) is F.layer_norm with bias None.
    y = F.layer_norm(x, normalized, w, b, eps)
    grads = torch.autograd.grad(y, inputs, dy)
    key = f"layer_norm.{name}.{tag}"
    records += [(key + ".x", x), (key + ".dy", dy), (key + ".y", y), (key + ".dx", grads[0])]
    if has_w:
        records += [(key + ".w", w), (key + ".dw", grads[1])]
    if has_b:
        records += [(key + ".b", b), (key + ".db", grads[2])]


def rms_norm(records, name, shape, normalized, eps, has_w, dtype, tag):
    x = randn(shape, dtype, 2.0, 0.5).requires_grad_(True)
    inputs = [x]
    w = None
    if has_w:
        w = randn(normalized, dtype).requires_grad_(True)
        inputs.append(w)
    dy = randn(shape, dtype)
    # torch 2.4's aten rms_norm: input.mul(rsqrt(pow(input, 2).mean(dims, keepdim).add_(eps)))
    e = torch.finfo(dtype).eps if eps is None else eps
    dims = tuple(range(-len(normalized), 0))
    y = x.mul(torch.rsqrt(torch.pow(x, 2).mean(dims, keepdim=True).add(e)))
    if has_w:
        y = y.mul(w)
    grads = torch.autograd.grad(y, inputs, dy)
    key = f"rms_norm.{name}.{tag}"
    records += [(key + ".x", x), (key + ".dy", dy), (key + ".y", y), (key + ".dx", grads[0])]
    if has_w:
        records += [(key + ".w", w), (key + ".dw", grads[1])]


def embedding_padding(records, dtype, tag):
    for name, padding_idx in (("pad2", 2), ("pad_last", -1)):
        torch.manual_seed(36)
        m = torch.nn.Embedding(10, 4, padding_idx=padding_idx, dtype=dtype)
        key = f"embedding.{name}.{tag}"
        records.append((key + ".init", m.weight.detach().clone()))
        with torch.no_grad():  # a nonzero padding row: its values are read, not trained
            m.weight[m.padding_idx].fill_(0.5)
        ids = torch.tensor([[2, 5, 2], [1, 9, 9]])
        y = m(ids)
        dy = randn(y.shape, dtype)
        y.backward(dy)
        records += [(key + ".ids", ids), (key + ".y", y), (key + ".dy", dy),
                    (key + ".dweight", m.weight.grad)]


def embedding_max_norm(records, dtype, tag):
    for name, max_norm, norm_type in (("l2", 1.0, 2.0), ("l1", 1.5, 1.0), ("linf", 0.75, float("inf")),
                                      ("p3", 1.2, 3.0)):
        torch.manual_seed(7)
        m = torch.nn.Embedding(6, 3, max_norm=max_norm, norm_type=norm_type, dtype=dtype)
        key = f"embedding.{name}.{tag}"
        records.append((key + ".before", m.weight.detach().clone()))
        ids = torch.tensor([0, 3, 3, 5, 1])
        y = m(ids)
        dy = randn(y.shape, dtype)
        y.backward(dy)
        records += [(key + ".ids", ids), (key + ".after", m.weight), (key + ".y", y),
                    (key + ".dy", dy), (key + ".dweight", m.weight.grad)]


# name: (input shape, target shape)
BROADCAST_CASES = {"target_row": ((4, 3), (3,)), "both_expand": ((4, 1), (2, 1, 3))}
REGRESSION_LOSSES = {
    "mse": lambda x, t, r: F.mse_loss(x, t, reduction=r),
    "l1": lambda x, t, r: F.l1_loss(x, t, reduction=r),
    "smooth_l1": lambda x, t, r: F.smooth_l1_loss(x, t, reduction=r, beta=0.5),
    "huber": lambda x, t, r: F.huber_loss(x, t, reduction=r, delta=0.7),
}


def loss_broadcast(records, dtype, tag):
    import warnings
    for case, (xs, ts) in BROADCAST_CASES.items():
        x = randn(xs, dtype).requires_grad_(True)
        t = randn(ts, dtype).requires_grad_(True)
        records += [(f"broadcast.{case}.{tag}.x", x), (f"broadcast.{case}.{tag}.t", t)]
        for loss, f in REGRESSION_LOSSES.items():
            for reduction in ("none", "mean", "sum"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # torch's "Using a target size ..."
                    y = f(x, t, reduction)
                dy = randn(y.shape, dtype)
                dx, dt = torch.autograd.grad(y, (x, t), dy)
                key = f"broadcast.{case}.{tag}.{loss}.{reduction}"
                records += [(key + ".dy", dy), (key + ".y", y), (key + ".dx", dx),
                            (key + ".dt", dt)]


def ce_probability_weight(records, dtype, tag):
    x = randn((4, 3, 2), dtype).requires_grad_(True)
    p = torch.softmax(randn((4, 3, 2), dtype), 1)
    w = torch.rand(3, dtype=torch.float64).to(dtype).add(0.5).requires_grad_(True)
    records += [(f"ce_weight.{tag}.x", x), (f"ce_weight.{tag}.p", p), (f"ce_weight.{tag}.w", w)]
    for ls in (0.0, 0.2):
        for reduction in ("none", "mean", "sum"):
            y = F.cross_entropy(x, p, weight=w, reduction=reduction, label_smoothing=ls)
            dy = randn(y.shape, dtype)
            dx, dw = torch.autograd.grad(y, (x, w), dy)
            key = f"ce_weight.{tag}.ls{ls}.{reduction}"
            records += [(key + ".dy", dy), (key + ".y", y), (key + ".dx", dx), (key + ".dw", dw)]


# name: (module constructor, input shape)
CONV_CASES = {
    "c2d_reflect": (lambda: torch.nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="reflect"),
                    (2, 2, 5, 6)),
    "c2d_replicate_same": (lambda: torch.nn.Conv2d(2, 2, (3, 4), padding="same", dilation=(1, 2),
                                                   padding_mode="replicate"), (1, 2, 4, 7)),
    "c2d_circular_stride": (lambda: torch.nn.Conv2d(3, 4, 3, stride=2, padding=2,
                                                    padding_mode="circular", bias=False),
                            (2, 3, 5, 5)),
    "c1d_reflect": (lambda: torch.nn.Conv1d(2, 3, 3, padding=2, padding_mode="reflect"), (2, 2, 6)),
    "c1d_circular_same": (lambda: torch.nn.Conv1d(2, 2, 4, padding="same", padding_mode="circular"),
                          (3, 2, 5)),
    "c1d_replicate_groups": (lambda: torch.nn.Conv1d(4, 2, 2, padding=1, groups=2,
                                                     padding_mode="replicate"), (1, 4, 3)),
    "ct1d": (lambda: torch.nn.ConvTranspose1d(3, 4, 3), (2, 3, 5)),
    "ct1d_strided": (lambda: torch.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1,
                                                      output_padding=1, groups=2, dilation=2),
                     (2, 4, 4)),
    "ct1d_unbatched": (lambda: torch.nn.ConvTranspose1d(2, 3, 2, stride=3, bias=False), (2, 4)),
}


def conv_modules(records, dtype, tag):
    for i, (name, (make, shape)) in enumerate(CONV_CASES.items()):
        torch.manual_seed(100 + i)
        m = make().to(dtype)
        key = f"conv.{name}.{tag}"
        x = randn(shape, dtype).requires_grad_(True)
        y = m(x)
        dy = randn(y.shape, dtype)
        params = [m.weight] + ([m.bias] if m.bias is not None else [])
        grads = torch.autograd.grad(y, [x] + params, dy)
        records += [(key + ".weight", m.weight), (key + ".x", x), (key + ".y", y),
                    (key + ".dy", dy), (key + ".dx", grads[0]), (key + ".dweight", grads[1])]
        if m.bias is not None:
            records += [(key + ".bias", m.bias), (key + ".dbias", grads[2])]


# name: (rows, fractions, seed)
SPLIT_CASES = {
    "n10_70_20_10": (10, [0.7, 0.2, 0.1], 42),
    "n11_50_50": (11, [0.5, 0.5], 0),
    "n7_third": (7, [1 / 3, 1 / 3, 1 / 3], 5),
    "n5_zero": (5, [0.0, 0.9, 0.1], 3),
}


def random_split_fractions(records):
    from torch.utils.data import TensorDataset, random_split
    import warnings
    for name, (n, fractions, seed) in SPLIT_CASES.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns about an empty part
            parts = random_split(TensorDataset(torch.arange(n)), fractions,
                                 generator=torch.Generator().manual_seed(seed))
        for i, part in enumerate(parts):
            records.append((f"split.{name}.p{i}", torch.tensor(part.indices, dtype=torch.int64)))


def main():
    records = []
    torch.manual_seed(20261127)
    for dtype, tag in DTYPES:
        for name, (shape, normalized, eps, has_w, has_b) in LAYER_NORM_CASES.items():
            layer_norm(records, name, shape, normalized, eps, has_w, has_b, dtype, tag)
        for name, (shape, normalized, eps, has_w) in RMS_NORM_CASES.items():
            rms_norm(records, name, shape, normalized, eps, has_w, dtype, tag)
    for dtype, tag in DTYPES:
        embedding_padding(records, dtype, tag)
        embedding_max_norm(records, dtype, tag)
    torch.manual_seed(3636)
    for dtype, tag in DTYPES:
        loss_broadcast(records, dtype, tag)
        ce_probability_weight(records, dtype, tag)
    for dtype, tag in DTYPES:
        conv_modules(records, dtype, tag)
    random_split_fractions(records)
    with open(os.path.join(HERE, "nn_layers.txt"), "w") as f:
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


if __name__ == "__main__":
    main()
