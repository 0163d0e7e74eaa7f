#!/usr/bin/env python3
"""Goldens for examples/ch04_gpt.cpp: what chapter 4 of *Build a Large Language Model (From
Scratch)* prints for GPT_CONFIG_124M, computed with Debian's python3-torch (1.13, reference BLAS).

The model is tests/goldens/gpt/gpt_reference.py's GPTModel (the book's classes, same names and
construction order, so torch.manual_seed(123) draws the same weights); greedy() is the book's
generate_text_simple (softmax, then argmax).

Run: /usr/bin/python3 tests/goldens/ch04/make_ch04_goldens.py > tests/goldens/ch04/ch04_gpt.txt
Output: `key: value` lines; tensors as torch prints them.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpt"))
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
    print("parameters:", total)
    print("parameters_without_out_head:", total - model.out_head.weight.numel())
    print("size_mb: %.2f" % (total * 4 / (1024 * 1024)))
    print("logits_shape:", list(out.shape))
    print("logits:")
    print(out)
    # The printed corners at full float32 precision, for comparisons at 1e-5 relative.
    for b in range(out.shape[0]):
        for t in range(out.shape[1]):
            row = out[b, t]
            corners = torch.cat((row[:3], row[-3:])).tolist()
            print("logits_corners[%d][%d]:" % (b, t), " ".join("%.9g" % v for v in corners))
    model.eval()
    ids = greedy(model, torch.tensor([[15496, 11, 314, 716]]), 6, CONFIG_124M["context_length"])
    print("greedy:", ", ".join(str(i) for i in ids[0].tolist()))


if __name__ == "__main__":
    main()
