"""Writes the PyTorch goldens for tests/ops/test_conv2d.cpp, test_conv1d.cpp,
test_conv_transpose2d.cpp and tests/nn/test_conv.cpp.

Run with /usr/bin/python3 (Debian's python3-torch 1.13). conv.txt holds one tensor a line (the
format of ../golden_format.py). For each case and dtype: the input x, weight w, bias b (when the
case has one), an upstream gradient dy, torch's output y and the gradients dx, dw, db that
torch.autograd.grad gives for dy. Then the modules' initial weights after manual_seed(123).
Written with the reference BLAS (docs/testing.md); for one run without changing the system's
alternative: LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas /usr/bin/python3 make_conv_goldens.py
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261127)

# name: (function, x shape, w shape, bias?, keyword arguments)
CONV2D = {
    "plain": (F.conv2d, (2, 3, 6, 5), (4, 3, 3, 3), True, {}),
    "stride2": (F.conv2d, (2, 3, 7, 6), (4, 3, 3, 2), True, {"stride": 2}),
    "padding1": (F.conv2d, (2, 2, 5, 5), (3, 2, 3, 3), True, {"padding": 1}),
    "pair": (F.conv2d, (1, 2, 6, 7), (3, 2, 2, 3), True,
             {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2)}),
    "dilation2": (F.conv2d, (2, 2, 7, 7), (3, 2, 3, 3), True, {"dilation": 2, "padding": 1}),
    "groups2": (F.conv2d, (2, 4, 5, 5), (6, 2, 3, 3), True, {"groups": 2, "padding": 1}),
    "same": (F.conv2d, (2, 3, 5, 6), (2, 3, 4, 3), True, {"padding": "same"}),
    "same_dilated": (F.conv2d, (1, 2, 6, 6), (2, 2, 2, 3), True,
                     {"padding": "same", "dilation": 3}),
    "valid": (F.conv2d, (1, 2, 5, 5), (2, 2, 3, 3), True, {"padding": "valid"}),
    "unbatched": (F.conv2d, (3, 5, 5), (2, 3, 3, 3), True, {"padding": 1}),
    "no_bias": (F.conv2d, (2, 3, 5, 5), (4, 3, 3, 3), False, {"stride": 2, "padding": 1}),
    "pointwise": (F.conv2d, (2, 4, 3, 3), (5, 4, 1, 1), True, {}),
    "depthwise": (F.conv2d, (2, 3, 5, 5), (3, 1, 3, 3), True, {"groups": 3, "padding": 1}),
}
CONV1D = {
    "plain": (F.conv1d, (2, 3, 9), (4, 3, 3), True, {}),
    "stride2_padding1": (F.conv1d, (2, 3, 9), (4, 3, 3), True, {"stride": 2, "padding": 1}),
    "same": (F.conv1d, (2, 2, 8), (3, 2, 4), True, {"padding": "same", "dilation": 2}),
    "groups2": (F.conv1d, (1, 4, 7), (2, 2, 3), False, {"groups": 2}),
    "unbatched": (F.conv1d, (3, 6), (2, 3, 2), True, {}),
}
CONV_TRANSPOSE2D = {
    "plain": (F.conv_transpose2d, (2, 3, 4, 4), (3, 2, 3, 3), True, {}),
    "stride2": (F.conv_transpose2d, (2, 3, 3, 4), (3, 2, 3, 3), True,
                {"stride": 2, "padding": 1, "output_padding": 1}),
    "groups2": (F.conv_transpose2d, (1, 4, 3, 3), (4, 3, 2, 2), True,
                {"stride": (2, 1), "groups": 2}),
    "dilation2": (F.conv_transpose2d, (1, 2, 4, 3), (2, 3, 3, 2), False,
                  {"dilation": 2, "padding": (1, 0), "stride": 2, "output_padding": (1, 0)}),
    "unbatched": (F.conv_transpose2d, (2, 3, 3), (2, 2, 2, 2), True, {"stride": 2}),
}


def leaf(shape, dtype):
    return torch.randn(*shape, dtype=torch.float64).to(dtype).requires_grad_(True)


def cases(records, op, table):
    for name, (fn, xs, ws, has_bias, kwargs) in table.items():
        for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
            x, w = leaf(xs, dtype), leaf(ws, dtype)
            out_channels = ws[1] * kwargs.get("groups", 1) if fn is F.conv_transpose2d else ws[0]
            b = leaf((out_channels,), dtype) if has_bias else None
            y = fn(x, w, b, **kwargs)
            dy = torch.randn(*y.shape, dtype=torch.float64).to(dtype)
            inputs = (x, w, b) if has_bias else (x, w)
            grads = torch.autograd.grad(y, inputs, dy)
            base = f"{op}.{name}.{tag}"
            records += [(base + ".x", x), (base + ".w", w)]
            if has_bias:
                records.append((base + ".b", b))
            records += [(base + ".dy", dy), (base + ".y", y), (base + ".dx", grads[0]),
                        (base + ".dw", grads[1])]
            if has_bias:
                records.append((base + ".db", grads[2]))


def modules(records):
    # nn.Conv2d / Conv1d / ConvTranspose2d's reset_parameters after manual_seed(123), in the order
    # the C++ test builds them.
    torch.manual_seed(123)
    built = [
        ("Conv2d.a", torch.nn.Conv2d(3, 8, 3)),
        ("Conv2d.b", torch.nn.Conv2d(4, 6, (3, 2), stride=2, padding=1, groups=2, bias=False)),
        ("Conv2d.c", torch.nn.Conv2d(2, 4, 5, padding="same", dilation=2, dtype=torch.float64)),
        ("Conv1d.a", torch.nn.Conv1d(4, 6, 3, groups=2)),
        ("ConvTranspose2d.a", torch.nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2)),
    ]
    for name, m in built:
        records.append((f"module.{name}.weight", m.weight))
        if m.bias is not None:
            records.append((f"module.{name}.bias", m.bias))
    # One forward of the first module, to check the module's forward is the functional one.
    x = torch.randn(2, 3, 6, 6)
    records += [("module.Conv2d.a.x", x), ("module.Conv2d.a.y", built[0][1](x))]


def main():
    records = []
    cases(records, "conv2d", CONV2D)
    cases(records, "conv1d", CONV1D)
    cases(records, "conv_transpose2d", CONV_TRANSPOSE2D)
    modules(records)
    with open(os.path.join(HERE, "conv.txt"), "w") as f:
        f.write(f"# Written by make_conv_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


main()
