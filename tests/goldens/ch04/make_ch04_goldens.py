#!/usr/bin/env python3
"""Goldens for examples/ch04_gpt.cpp: what chapter 4 of *Build a Large Language Model (From
Scratch)* prints for GPT_CONFIG_124M, computed with Debian's python3-torch (1.13, reference BLAS).

The model is tests/goldens/gpt/gpt_reference.py's GPTModel (the book's classes, same names and
construction order, so torch.manual_seed(123) draws the same weights); greedy() is the book's
generate_text_simple (softmax, then argmax).

Run: /usr/bin/python3 tests/goldens/ch04/make_ch04_goldens.py > tests/goldens/ch04/ch04_gpt.txt
Output: the suite's one golden format (tests/goldens/golden_format.py, read by tests/goldens.h):
    parameters, parameters_without_out_head   i64 scalars
    size_mb                                   txt, as the book prints it ("%.2f")
    logits_shape                              i64 [3]
    logits                                    txt, the logits as torch prints them
    logits_corners                            f32 [2,4,6]: each logits row's first and last three
    greedy                                    i64 [10]: the prompt and the 6 greedy ids
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpt"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line, text_line  # noqa: E402  the one golden format
from gpt_reference import GPTModel  # noqa: E402

CONFIG_124M = dict(vocab_size=50257, context_length=1024, emb_dim=768, n_heads=12, n_layers=12,
                   drop_rate=0.1, qkv_bias=False)


def greedy(model, ids, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(ids[:, -context_size:])[:, -1, :]
        probas = torch.softmax(logits, dim=-1)
        ids = torch.cat((ids, torch.argmax(probas, dim=-1, keepdim=True)), dim=1)
    return ids


def main():
    torch.manual_seed(123)
    model = GPTModel(CONFIG_124M)
    batch = torch.tensor([[6109, 3626, 6100, 345], [6109, 1110, 6622, 257]])
    with torch.no_grad():
        out = model(batch)  # training mode: dropout active, as the book's first call
    total = sum(p.numel() for p in model.parameters())
    print(golden_line("parameters", torch.tensor(total)))
    print(golden_line("parameters_without_out_head",
                      torch.tensor(total - model.out_head.weight.numel())))
    print(text_line("size_mb", "%.2f" % (total * 4 / (1024 * 1024))))
    print(golden_line("logits_shape", torch.tensor(list(out.shape))))
    print(text_line("logits", repr(out)))
    # The printed corners at full float32 precision, for comparisons at 1e-5 relative.
    print(golden_line("logits_corners", torch.cat((out[:, :, :3], out[:, :, -3:]), dim=-1)))
    model.eval()
    ids = greedy(model, torch.tensor([[15496, 11, 314, 716]]), 6, CONFIG_124M["context_length"])
    print(golden_line("greedy", ids[0]))


if __name__ == "__main__":
    main()
