"""Writes the PyTorch goldens for the shape and indexing ops of issue #35 (tests/ops/test_{squeeze,
unsqueeze,flatten,unflatten,permute,movedim,stack,split,flip,roll,repeat,repeat_interleave,
index_select,gather,scatter,scatter_add,index_add,take_along_dim}.cpp).

Run with /usr/bin/python3 (Debian's python3-torch 1.13). indexing.txt holds one tensor a line,
    name dtype shape values (the format of ../golden_format.py)
For each case and dtype (tag f32, f64): the float inputs (x, src, ...), the integer indices (i64),
an upstream gradient dy for each output (dy0, dy1, ... when the op returns several), torch's
outputs (y, or y0, y1, ...) and torch.autograd.grad's gradient of each float input (dx, dsrc,
...). The cases hold a zero-size dim, negative dims, repeated indices (scatter_add and index_add
add them up) and a 0-dim tensor where torch allows one.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20260435)


def ids(values):
    if isinstance(values, torch.Tensor):
        return values.to(torch.int64)
    return torch.tensor(values, dtype=torch.int64)


def case(records, name, fn, floats, indices=(), integer_dy=False):
    """floats: (key, shape) pairs, random inputs; indices: (key, values) pairs. integer_dy: dy of
    small integers, for a gradient that sums several dy terms in an order other than torch's
    reduction (repeat): every order then gives the same, exact sum."""
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        prefix = f"{name}.{tag}"
        inputs = {}
        for key, shape in floats:
            t = torch.randn(shape, dtype=torch.float64).to(dtype).requires_grad_(True)
            inputs[key] = t
            records.append((f"{prefix}.{key}", t))
        for key, values in indices:
            inputs[key] = ids(values)
            records.append((f"{prefix}.{key}", inputs[key]))
        out = fn(**inputs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if integer_dy:
            dys = [torch.randint(-8, 9, y.shape).to(dtype) for y in outs]
        else:
            dys = [torch.randn(y.shape, dtype=torch.float64).to(dtype) for y in outs]
        wrt = [inputs[key] for key, _ in floats]
        grads = torch.autograd.grad(outs, wrt, dys, allow_unused=True)
        if len(outs) == 1:
            records += [(prefix + ".dy", dys[0]), (prefix + ".y", outs[0])]
        else:
            for i, (y, dy) in enumerate(zip(outs, dys)):
                records += [(f"{prefix}.dy{i}", dy), (f"{prefix}.y{i}", y)]
        for (key, _), g in zip(floats, grads):
            if g is None:
                g = torch.zeros_like(inputs[key])
            records.append((f"{prefix}.d{key}", g))


def main():
    r = []
    x = [("x", (2, 1, 3, 1))]
    # --- reshapes, permutations ---
    case(r, "squeeze", lambda x: torch.squeeze(x), x)
    case(r, "squeeze_dim1", lambda x: torch.squeeze(x, 1), x)
    case(r, "squeeze_dim_neg1", lambda x: torch.squeeze(x, -1), x)
    case(r, "squeeze_dim0_kept", lambda x: torch.squeeze(x, 0), x)
    case(r, "squeeze_0d", lambda x: torch.squeeze(x, 0), [("x", ())])
    case(r, "squeeze_empty", lambda x: torch.squeeze(x), [("x", (0, 1, 2))])
    case(r, "unsqueeze_dim0", lambda x: torch.unsqueeze(x, 0), [("x", (2, 3))])
    case(r, "unsqueeze_dim1", lambda x: torch.unsqueeze(x, 1), [("x", (2, 3))])
    case(r, "unsqueeze_dim_neg1", lambda x: torch.unsqueeze(x, -1), [("x", (2, 3))])
    case(r, "unsqueeze_0d", lambda x: torch.unsqueeze(x, 0), [("x", ())])
    case(r, "unsqueeze_empty", lambda x: torch.unsqueeze(x, 1), [("x", (0, 3))])
    case(r, "flatten", lambda x: torch.flatten(x), [("x", (2, 3, 4))])
    case(r, "flatten_1_2", lambda x: torch.flatten(x, 1, 2), [("x", (2, 3, 4, 2))])
    case(r, "flatten_neg", lambda x: torch.flatten(x, -2, -1), [("x", (2, 3, 4))])
    case(r, "flatten_0d", lambda x: torch.flatten(x), [("x", ())])
    case(r, "flatten_empty", lambda x: torch.flatten(x, 0, 1), [("x", (2, 0, 3))])
    case(r, "unflatten", lambda x: x.unflatten(1, (2, 3)), [("x", (2, 6))])
    case(r, "unflatten_infer", lambda x: x.unflatten(-1, (-1, 2)), [("x", (2, 6))])
    case(r, "unflatten_empty", lambda x: x.unflatten(1, (2, 2)), [("x", (0, 4))])
    case(r, "permute", lambda x: x.permute(2, 0, 1), [("x", (2, 3, 4))])
    case(r, "permute_neg", lambda x: x.permute(-1, -3, -2), [("x", (2, 3, 4))])
    case(r, "permute_4d", lambda x: x.permute(3, 1, 0, 2), [("x", (2, 3, 1, 2))])
    case(r, "permute_0d", lambda x: x.permute(()), [("x", ())])
    case(r, "permute_empty", lambda x: x.permute(1, 2, 0), [("x", (0, 2, 3))])
    case(r, "movedim", lambda x: torch.movedim(x, 0, -1), [("x", (2, 3, 4))])
    case(r, "movedim_list", lambda x: torch.movedim(x, (0, 1), (2, 3)), [("x", (2, 3, 4, 5))])
    case(r, "movedim_back", lambda x: torch.movedim(x, -1, 0), [("x", (2, 3, 4))])
    case(r, "movedim_0d", lambda x: torch.movedim(x, 0, 0), [("x", ())])
    # --- joining, splitting, reordering, repeating ---
    abc = [("a", (2, 3)), ("b", (2, 3)), ("c", (2, 3))]
    case(r, "stack_dim0", lambda a, b, c: torch.stack([a, b, c], 0), abc)
    case(r, "stack_dim1", lambda a, b, c: torch.stack([a, b, c], 1), abc)
    case(r, "stack_dim_neg1", lambda a, b, c: torch.stack([a, b, c], -1), abc)
    case(r, "stack_0d", lambda a, b: torch.stack([a, b]), [("a", ()), ("b", ())])
    case(r, "stack_empty", lambda a, b: torch.stack([a, b], 1), [("a", (0, 2)), ("b", (0, 2))])
    case(r, "split", lambda x: torch.split(x, 2), [("x", (5, 2))])
    case(r, "split_sizes", lambda x: torch.split(x, [1, 3, 1]), [("x", (5, 2))])
    case(r, "split_neg", lambda x: torch.split(x, 3, -1), [("x", (3, 4))])
    case(r, "split_empty", lambda x: torch.split(x, 2, 0), [("x", (4, 0))])
    case(r, "chunk", lambda x: torch.chunk(x, 3), [("x", (5, 2))])
    case(r, "chunk_fewer", lambda x: torch.chunk(x, 4), [("x", (6,))])
    case(r, "chunk_neg", lambda x: torch.chunk(x, 2, -1), [("x", (3, 4))])
    case(r, "unbind", lambda x: torch.unbind(x), [("x", (3, 2))])
    case(r, "unbind_neg", lambda x: torch.unbind(x, -1), [("x", (2, 3))])
    case(r, "flip", lambda x: torch.flip(x, (0, 2)), [("x", (2, 3, 4))])
    case(r, "flip_neg", lambda x: torch.flip(x, (-1,)), [("x", (2, 3))])
    case(r, "flip_none", lambda x: torch.flip(x, ()), [("x", (2, 3))])
    case(r, "flip_0d", lambda x: torch.flip(x, (0,)), [("x", ())])
    case(r, "flip_empty", lambda x: torch.flip(x, (0, 1)), [("x", (0, 3))])
    case(r, "roll_flat", lambda x: torch.roll(x, 1), [("x", (2, 3))])
    case(r, "roll_dims", lambda x: torch.roll(x, (1, -1), (0, 1)), [("x", (2, 3))])
    case(r, "roll_large", lambda x: torch.roll(x, 5, 1), [("x", (3, 4))])
    case(r, "roll_neg", lambda x: torch.roll(x, -2, -1), [("x", (3, 4))])
    case(r, "roll_0d", lambda x: torch.roll(x, 3), [("x", ())])
    case(r, "roll_empty", lambda x: torch.roll(x, 1, 1), [("x", (0, 3))])
    case(r, "repeat", lambda x: x.repeat(2, 1), [("x", (2, 3))], integer_dy=True)
    case(r, "repeat_new_dim", lambda x: x.repeat(2, 2, 3), [("x", (2, 3))], integer_dy=True)
    case(r, "repeat_0d", lambda x: x.repeat(3), [("x", ())], integer_dy=True)
    case(r, "repeat_empty", lambda x: x.repeat(2, 2), [("x", (0, 2))], integer_dy=True)
    case(r, "repeat_zero", lambda x: x.repeat(1, 0), [("x", (2, 3))], integer_dy=True)
    case(r, "repeat_interleave", lambda x: torch.repeat_interleave(x, 2, 0), [("x", (2, 3))])
    case(r, "repeat_interleave_neg", lambda x: torch.repeat_interleave(x, 3, -1),
         [("x", (2, 3))])
    case(r, "repeat_interleave_flat", lambda x: torch.repeat_interleave(x, 2), [("x", (2, 3))])
    case(r, "repeat_interleave_zero", lambda x: torch.repeat_interleave(x, 0, 1), [("x", (2, 3))])
    case(r, "repeat_interleave_0d", lambda x: torch.repeat_interleave(x, 3), [("x", ())])
    # --- indexing; repeated indices add up where the op adds ---
    case(r, "index_select", lambda x, index: torch.index_select(x, 0, index), [("x", (4, 3))],
         [("index", [2, 0, 2, 3])])
    case(r, "index_select_neg", lambda x, index: torch.index_select(x, -1, index),
         [("x", (4, 3))], [("index", [1])])
    case(r, "index_select_none", lambda x, index: torch.index_select(x, 1, index),
         [("x", (4, 3))], [("index", [])])
    case(r, "index_select_0d", lambda x, index: torch.index_select(x, 0, index), [("x", ())],
         [("index", 0)])
    case(r, "gather", lambda x, index: torch.gather(x, 1, index), [("x", (3, 4))],
         [("index", [[0, 0], [1, 3], [3, 2]])])
    case(r, "gather_dim0", lambda x, index: torch.gather(x, 0, index), [("x", (3, 4))],
         [("index", [[2, 0, 1, 2], [1, 1, 0, 0]])])
    case(r, "gather_smaller", lambda x, index: torch.gather(x, -2, index), [("x", (3, 4))],
         [("index", [[2, 2], [0, 1]])])
    case(r, "gather_3d", lambda x, index: torch.gather(x, 2, index), [("x", (2, 3, 4))],
         [("index", [[[3, 0], [1, 1], [2, 0]], [[0, 0], [3, 2], [1, 3]]])])
    case(r, "gather_empty", lambda x, index: torch.gather(x, 0, index), [("x", (3, 4))],
         [("index", torch.zeros(0, 4, dtype=torch.int64))])
    case(r, "gather_0d", lambda x, index: torch.gather(x, 0, index), [("x", ())], [("index", 0)])
    case(r, "scatter", lambda x, index, src: torch.scatter(x, 1, index, src),
         [("x", (3, 5)), ("src", (3, 2))], [("index", [[0, 1], [4, 2], [3, 0]])])
    case(r, "scatter_dim0", lambda x, index, src: torch.scatter(x, 0, index, src),
         [("x", (3, 4)), ("src", (2, 4))], [("index", [[2, 0, 1, 2], [1, 1, 0, 0]])])
    case(r, "scatter_value", lambda x, index: torch.scatter(x, -1, index, 2.5), [("x", (3, 4))],
         [("index", [[1], [0], [3]])])
    case(r, "scatter_0d", lambda x, index, src: torch.scatter(x, 0, index, src),
         [("x", ()), ("src", ())], [("index", 0)])
    case(r, "scatter_add", lambda x, index, src: torch.scatter_add(x, 1, index, src),
         [("x", (3, 4)), ("src", (3, 3))], [("index", [[0, 0, 1], [3, 3, 3], [2, 1, 2]])])
    case(r, "scatter_add_dim0", lambda x, index, src: torch.scatter_add(x, 0, index, src),
         [("x", (3, 4)), ("src", (4, 4))],
         [("index", [[2, 0, 2, 2], [2, 1, 0, 2], [0, 0, 0, 2], [1, 2, 0, 2]])])
    case(r, "scatter_add_empty", lambda x, index, src: torch.scatter_add(x, 1, index, src),
         [("x", (3, 4)), ("src", (3, 0))], [("index", torch.zeros(3, 0, dtype=torch.int64))])
    case(r, "scatter_add_0d", lambda x, index, src: torch.scatter_add(x, 0, index, src),
         [("x", ()), ("src", ())], [("index", 0)])
    case(r, "index_add", lambda x, index, src: torch.index_add(x, 0, index, src),
         [("x", (5, 3)), ("src", (4, 3))], [("index", [0, 2, 0, 4])])
    case(r, "index_add_alpha", lambda x, index, src: torch.index_add(x, -1, index, src, alpha=2.0),
         [("x", (2, 4)), ("src", (2, 3))], [("index", [3, 3, 1])])
    case(r, "index_add_empty", lambda x, index, src: torch.index_add(x, 0, index, src),
         [("x", (5, 3)), ("src", (0, 3))], [("index", [])])
    case(r, "index_add_0d", lambda x, index, src: torch.index_add(x, 0, index, src),
         [("x", ()), ("src", ())], [("index", [0])])
    case(r, "take_along_dim", lambda x, index: torch.take_along_dim(x, index, 1), [("x", (3, 4))],
         [("index", [[0, 0], [1, 3], [3, 2]])])
    case(r, "take_along_dim_broadcast", lambda x, index: torch.take_along_dim(x, index, -1),
         [("x", (3, 4))], [("index", [[3, 1]])])
    case(r, "take_along_dim_flat", lambda x, index: torch.take_along_dim(x, index),
         [("x", (3, 4))], [("index", [11, 0, 5, 5])])
    case(r, "take_along_dim_0d", lambda x, index: torch.take_along_dim(x, index), [("x", ())],
         [("index", 0)])
    with open(os.path.join(HERE, "indexing.txt"), "w") as f:
        f.write(f"# Written by make_indexing_goldens.py with torch {torch.__version__}.\n")
        for name, t in r:
            f.write(golden_line(name, t) + "\n")


main()
