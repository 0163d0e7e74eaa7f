#!/usr/bin/env python3
"""Goldens for examples/ch04_gpt.cpp: what chapter 4 of *Build a Large Language Model (From
Scratch)* prints for GPT_CONFIG_124M, computed with Debian's python3-torch (1.13, reference BLAS).

The PyTorch model below is tapegrad's own transcription of the book's architecture (same module
and parameter names, same construction order, so torch.manual_seed(123) draws the same weights),
written for this test; it is not the book's code.

Run: /usr/bin/python3 tests/goldens/ch04/make_ch04_goldens.py > tests/goldens/ch04/ch04_gpt.txt
Output: `key: value` lines; tensors as torch prints them.
"""
import math

import torch
from torch import nn

CONFIG_124M = dict(vocab_size=50257, context_length=1024, emb_dim=768, n_heads=12, n_layers=12,
                   drop_rate=0.1, qkv_bias=False)


class CausalSelfAttention(nn.Module):  # the book's MultiHeadAttention
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads, self.d_out = num_heads, d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(1))

    def forward(self, x):
        b, t, _ = x.shape
        split = lambda y: y.view(b, t, self.heads, -1).transpose(1, 2)  # [B, H, T, D_h]
        k, q, v = split(self.W_key(x)), split(self.W_query(x)), split(self.W_value(x))
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask.bool()[:t, :t], -math.inf)
        weights = self.dropout(torch.softmax(scores / k.shape[-1] ** 0.5, dim=-1))
        return self.out_proj((weights @ v).transpose(1, 2).contiguous().view(b, t, self.d_out))


class LayerNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(dim))
        self.shift = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        centred = x - x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return self.scale * (centred / torch.sqrt(var + self.eps)) + self.shift


class GELU(nn.Module):
    def forward(self, x):
        c = torch.sqrt(torch.tensor(2.0 / torch.pi))
        return 0.5 * x * (1 + torch.tanh(c * (x + 0.044715 * torch.pow(x, 3))))


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["emb_dim"]
        self.layers = nn.Sequential(nn.Linear(d, 4 * d), GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        return self.layers(x)


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["emb_dim"]
        self.att = CausalSelfAttention(d, d, cfg["context_length"], cfg["drop_rate"],
                                       cfg["n_heads"], cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(d)
        self.norm2 = LayerNorm(d)
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1])
        x = self.drop_emb(self.tok_emb(ids) + self.pos_emb(positions))  # [B, T, C]
        return self.out_head(self.final_norm(self.trf_blocks(x)))  # [B, T, V]


def greedy(model, ids, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(ids[:, -context_size:])[:, -1, :]
        ids = torch.cat((ids, torch.argmax(logits, dim=-1, keepdim=True)), dim=1)
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
