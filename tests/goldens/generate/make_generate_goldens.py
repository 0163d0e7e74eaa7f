#!/usr/bin/python3
"""Goldens for nn/generate.* (tests/nn/test_generate.cpp), computed by PyTorch.

Run with Debian's python3-torch (1.13):
    /usr/bin/python3 tests/goldens/generate/make_generate_goldens.py \
        > tests/goldens/generate/generate.txt
The model is tests/goldens/gpt/gpt_reference.py's copy of the book's GPTModel (SMALL config:
V = 50, context_length 8), built after torch.manual_seed(123) and put in eval mode. The loops
below restate the book's generate_text_simple (ch04) and generate (ch05, gpt_generate.py); the
one change is min_val[:, None] in the top-k filter, so that it also works for more than one row
(the book's min_val broadcasts only for one row; for one row both are the same).
Output: the suite's one golden format (tests/goldens/golden_format.py, read by
tests/goldens.h): each sequence an i64 record `name i64 B,T ids`, eos_id an i64 scalar.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpt"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format
from gpt_reference import GPTModel, SMALL  # noqa: E402


def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx[:, -context_size:])[:, -1, :]
        probas = torch.softmax(logits, dim=-1)
        idx = torch.cat((idx, torch.argmax(probas, dim=-1, keepdim=True)), dim=1)
    return idx


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx[:, -context_size:])[:, -1, :]
        if top_k is not None:
            min_val = torch.topk(logits, top_k).values[:, -1]
            logits = torch.where(logits < min_val[:, None], torch.tensor(float("-inf")), logits)
        if temperature > 0.0:
            probs = torch.softmax(logits / temperature, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if eos_id is not None and bool((idx_next == eos_id).all()):
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


def show(name, ids):
    print(golden_line(name, ids))


def main():
    torch.manual_seed(123)
    model = GPTModel(SMALL)
    model.eval()
    ctx = SMALL["context_length"]
    prompt = torch.tensor([[6, 49, 0, 17, 33, 2], [41, 8, 8, 30, 12, 25]])  # [2, 6]
    one = prompt[:1]
    # 10 new tokens: the sequences outgrow context_length 8, so the context is cropped.
    show("prompt", prompt)
    show("greedy", generate_text_simple(model, prompt, 10, ctx))
    show("greedy_context_4", generate_text_simple(model, prompt, 10, 4))
    show("argmax", generate(model, prompt, 10, ctx))  # temperature 0: argmax of the logits
    torch.manual_seed(7)
    show("sampled_seed7_t1.4_k25", generate(model, one, 12, ctx, temperature=1.4, top_k=25))
    torch.manual_seed(7)
    show("sampled_seed7_t1.4_k25_batch", generate(model, prompt, 12, ctx, temperature=1.4, top_k=25))
    torch.manual_seed(11)
    show("sampled_seed11_t0.7", generate(model, one, 12, ctx, temperature=0.7))
    torch.manual_seed(11)
    show("sampled_seed11_t1.0_k1", generate(model, one, 6, ctx, temperature=1.0, top_k=1))
    # eos: the 4th token the seed-7 run samples; the run stops before appending it.
    torch.manual_seed(7)
    full = generate(model, one, 12, ctx, temperature=1.4, top_k=25)
    eos = int(full[0, one.shape[1] + 3])
    print(golden_line("eos_id", torch.tensor(eos)))
    torch.manual_seed(7)
    show("sampled_seed7_t1.4_k25_eos", generate(model, one, 12, ctx, temperature=1.4, top_k=25,
                                                  eos_id=eos))


if __name__ == "__main__":
    main()
