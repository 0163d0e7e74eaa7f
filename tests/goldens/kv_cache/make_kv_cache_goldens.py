#!/usr/bin/python3
"""Goldens for the KV cache (nn/attention.*, nn/gpt.*, tests/nn/test_kv_cache.cpp), computed by
PyTorch with the book's KV-cache GPT.

Run with Debian's python3-torch (1.13), the reference BLAS selected:
    /usr/bin/python3 tests/goldens/kv_cache/make_kv_cache_goldens.py \
        > tests/goldens/kv_cache/kv_cache.txt
The model is the optimized variant of rasbt/LLMs-from-scratch, ch04/03_kv-cache
(gpt_with_kv_cache_optimized.py, Apache License 2.0): its MultiHeadAttention keeps cache_k /
cache_v of [B, H, window, D_h], shifts them left when new tokens would overflow the window, and
masks with the diagonal offset by the tokens already cached; its GPTModel continues the
positions (ptr_current_pos). It lives in tests/goldens/gpt/gpt_kv_reference.py, with the weights of gpt_reference's GPTModel(SMALL) after torch.manual_seed(123) (the same
names), in eval mode. The loop is the book's generate_text_simple_cached.
Output: the suite's one golden format (tests/goldens/golden_format.py, read by
tests/goldens.h): each sequence an i64 record `name i64 B,T ids`.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpt"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format
from gpt_reference import GPTModel, SMALL  # noqa: E402
from gpt_kv_reference import KVGPTModel, generate_text_simple_cached  # noqa: E402


def kv_model(window_size):
    torch.manual_seed(123)
    reference = GPTModel(SMALL)
    model = KVGPTModel(SMALL, window_size)
    missing, unexpected = model.load_state_dict(reference.state_dict(), strict=False)
    assert not missing and all(k.endswith(".mask") for k in unexpected), (missing, unexpected)
    return model.eval()


def show(name, ids):
    print(golden_line(name, ids))


def main():
    ctx = SMALL["context_length"]
    prompt = torch.tensor([[6, 49, 0, 17, 33, 2], [41, 8, 8, 30, 12, 25]])  # [2, 6]
    show("prompt", prompt)
    # Greedy to the context's end: prefill 6 tokens, then positions 6 and 7.
    show("cached_greedy", generate_text_simple_cached(kv_model(ctx), prompt, 2))
    # The sliding window: window 4 < context 8, a 3-token prompt, positions up to 7.
    short = prompt[:, :3]
    show("window_prompt", short)
    show("window4_greedy", generate_text_simple_cached(kv_model(4), short, 5))
    # Prefill in chunks no longer than the window: 6 tokens as 4 + 2, then 2 steps.
    model = kv_model(4)
    with torch.no_grad():
        model.reset_kv_cache()
        model(prompt[:, :4])
        logits = model(prompt[:, 4:])
        idx = prompt
        for step in range(2):
            next_idx = logits[:, -1].argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, next_idx], dim=1)
            if step == 0:
                logits = model(next_idx)
    show("window4_chunked_greedy", idx)


if __name__ == "__main__":
    main()
