#!/usr/bin/python3
"""Goldens for nn/gpt2_weights.* (tests/nn/test_gpt2_weights.cpp), computed by PyTorch.

Run with Debian's python3-torch (1.13):   /usr/bin/python3 make_gpt2_goldens.py
(Debian has no transformers or safetensors package, so everything here is plain torch.)

It rewrites, beside it:
  gpt2_tiny.safetensors   a GPT-2-shaped model with random weights (TINY below), in Hugging Face's
                          layout and names, as GPT2Model's model.safetensors: wte, wpe, h.N.ln_1,
                          h.N.attn.c_attn (Conv1D: weight [C, 3C], x @ W + b, q|k|v fused along
                          the last dim), h.N.attn.c_proj, h.N.ln_2, h.N.mlp.c_fc, h.N.mlp.c_proj,
                          ln_f, plus the attention buffers h.N.attn.bias ([1, 1, T, T] lower
                          triangle) and h.N.attn.masked_bias (-1e4) older HF files carry. No
                          lm_head: the output head is tied to wte.
  gpt2_tiny_goldens.safetensors
                          in_idx (I64 [2, 7]) and logits (F64 [2, 7, V]) in eval mode, computed
                          in float64 from the file's float32 weights (float32 rounding alone,
                          torch's included, moves these logits of magnitude ~10 by up to ~3x
                          the suite's 1e-6 + 1e-5 relative, so the reference is exact and the
                          test compares a float64 model at that tolerance);
                          prompt (I64 [2, 4]) and greedy (I64 [2, 4 + NEW]): the book's
                          generate_text_simple (argmax of the last row, context cropped to the
                          last context_length tokens), the same in float32 and float64.
The logits come from gpt2_forward below, written from Hugging Face's modeling_gpt2 (GPT2Model +
tied LM head, eval mode) and reading the HF tensors directly; the script also loads the same
tensors into the book's GPTModel (gpt_reference.py) with the book's load_weights_into_gpt mapping
and checks both give the same logits, so the golden checks the mapping, not a copy of it.
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gpt"))
from gpt_reference import GPTModel, save_safetensors  # noqa: E402

# Also tests/nn/test_gpt2_weights.cpp: kTiny.
TINY = {"vocab_size": 97, "context_length": 16, "emb_dim": 24, "n_heads": 3, "n_layers": 2,
        "drop_rate": 0.0, "qkv_bias": True}
IN_IDX = [[3, 96, 0, 41, 17, 58, 7], [88, 12, 12, 5, 70, 33, 64]]  # [2, 7]
PROMPT = [[10, 20, 30, 40], [95, 1, 50, 2]]  # [2, 4]
NEW = 16  # 4 + 16 > context_length: the last steps crop the context


def hf_state(cfg, gen):
    """Random GPT-2 weights under Hugging Face's names, in GPT2Model.state_dict()'s order."""
    V, T, C, L = cfg["vocab_size"], cfg["context_length"], cfg["emb_dim"], cfg["n_layers"]

    def randn(*shape, std=1.0, mean=0.0):
        return torch.randn(*shape, generator=gen) * std + mean

    # Scales chosen so the logits spread widely (greedy steps far from ties), layer norms not at
    # their 1/0 initial values (so a swapped weight/bias shows).
    sd = {"wte.weight": randn(V, C), "wpe.weight": randn(T, C, std=0.5)}
    mask = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
    for i in range(L):
        p = "h.%d." % i
        sd[p + "ln_1.weight"] = randn(C, std=0.2, mean=1.0)
        sd[p + "ln_1.bias"] = randn(C, std=0.2)
        sd[p + "attn.bias"] = mask.clone()
        sd[p + "attn.masked_bias"] = torch.tensor(-1e4)
        sd[p + "attn.c_attn.weight"] = randn(C, 3 * C, std=0.4)  # Conv1D [in, out]
        sd[p + "attn.c_attn.bias"] = randn(3 * C, std=0.2)
        sd[p + "attn.c_proj.weight"] = randn(C, C, std=0.3)
        sd[p + "attn.c_proj.bias"] = randn(C, std=0.2)
        sd[p + "ln_2.weight"] = randn(C, std=0.2, mean=1.0)
        sd[p + "ln_2.bias"] = randn(C, std=0.2)
        sd[p + "mlp.c_fc.weight"] = randn(C, 4 * C, std=0.3)
        sd[p + "mlp.c_fc.bias"] = randn(4 * C, std=0.2)
        sd[p + "mlp.c_proj.weight"] = randn(4 * C, C, std=0.2)
        sd[p + "mlp.c_proj.bias"] = randn(C, std=0.2)
    sd["ln_f.weight"] = randn(C, std=0.2, mean=1.0)
    sd["ln_f.bias"] = randn(C, std=0.2)
    return sd


def gelu_new(x):  # transformers.activations.NewGELUActivation
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gpt2_forward(sd, cfg, ids):
    """GPT2LMHeadModel's forward in eval mode, on the HF tensors: ids [B, T] -> logits [B, T, V]."""
    C, H = cfg["emb_dim"], cfg["n_heads"]
    D = C // H
    B, T = ids.shape
    x = sd["wte.weight"][ids] + sd["wpe.weight"][torch.arange(T)]  # [B, T, C]
    for i in range(cfg["n_layers"]):
        p = "h.%d." % i
        h = F.layer_norm(x, (C,), sd[p + "ln_1.weight"], sd[p + "ln_1.bias"], eps=1e-5)
        qkv = torch.addmm(sd[p + "attn.c_attn.bias"], h.view(-1, C), sd[p + "attn.c_attn.weight"])
        q, k, v = qkv.view(B, T, 3 * C).split(C, dim=2)  # each [B, T, C]
        q, k, v = (t.view(B, T, H, D).permute(0, 2, 1, 3) for t in (q, k, v))  # [B, H, T, D]
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(D)  # [B, H, T, T]
        causal = sd[p + "attn.bias"][:, :, :T, :T].bool()
        w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min))
        a = torch.matmul(torch.softmax(w, dim=-1), v)  # [B, H, T, D]
        a = a.permute(0, 2, 1, 3).reshape(B, T, C)
        a = torch.addmm(sd[p + "attn.c_proj.bias"], a.view(-1, C), sd[p + "attn.c_proj.weight"])
        x = x + a.view(B, T, C)
        h = F.layer_norm(x, (C,), sd[p + "ln_2.weight"], sd[p + "ln_2.bias"], eps=1e-5)
        h = gelu_new(torch.addmm(sd[p + "mlp.c_fc.bias"], h.view(-1, C), sd[p + "mlp.c_fc.weight"]))
        h = torch.addmm(sd[p + "mlp.c_proj.bias"], h, sd[p + "mlp.c_proj.weight"])
        x = x + h.view(B, T, C)
    x = F.layer_norm(x, (C,), sd["ln_f.weight"], sd["ln_f.bias"], eps=1e-5)
    return x @ sd["wte.weight"].T  # tied head


def book_model(sd, cfg):
    """The book's GPTModel holding the HF tensors (load_weights_into_gpt's mapping)."""
    model = GPTModel(cfg)
    with torch.no_grad():
        model.tok_emb.weight.copy_(sd["wte.weight"])
        model.pos_emb.weight.copy_(sd["wpe.weight"])
        for i, b in enumerate(model.trf_blocks):
            p = "h.%d." % i
            qw, kw, vw = sd[p + "attn.c_attn.weight"].split(cfg["emb_dim"], dim=-1)
            qb, kb, vb = sd[p + "attn.c_attn.bias"].split(cfg["emb_dim"], dim=-1)
            for lin, w, bias in ((b.att.W_query, qw, qb), (b.att.W_key, kw, kb),
                                 (b.att.W_value, vw, vb)):
                lin.weight.copy_(w.T)
                lin.bias.copy_(bias)
            b.att.out_proj.weight.copy_(sd[p + "attn.c_proj.weight"].T)
            b.att.out_proj.bias.copy_(sd[p + "attn.c_proj.bias"])
            b.ff.layers[0].weight.copy_(sd[p + "mlp.c_fc.weight"].T)
            b.ff.layers[0].bias.copy_(sd[p + "mlp.c_fc.bias"])
            b.ff.layers[2].weight.copy_(sd[p + "mlp.c_proj.weight"].T)
            b.ff.layers[2].bias.copy_(sd[p + "mlp.c_proj.bias"])
            b.norm1.scale.copy_(sd[p + "ln_1.weight"])
            b.norm1.shift.copy_(sd[p + "ln_1.bias"])
            b.norm2.scale.copy_(sd[p + "ln_2.weight"])
            b.norm2.shift.copy_(sd[p + "ln_2.bias"])
        model.final_norm.scale.copy_(sd["ln_f.weight"])
        model.final_norm.shift.copy_(sd["ln_f.bias"])
        model.out_head.weight.copy_(sd["wte.weight"])
    return model.eval()


def greedy(sd, cfg, prompt, new):
    """The book's generate_text_simple with gpt2_forward; asserts every step is far from a tie."""
    idx = prompt
    for _ in range(new):
        logits = gpt2_forward(sd, cfg, idx[:, -cfg["context_length"]:])[:, -1, :]  # [B, V]
        top2 = torch.topk(logits, 2, dim=-1).values
        assert (top2[:, 0] - top2[:, 1]).min() > 1e-3, "a near tie: pick another seed"
        idx = torch.cat([idx, torch.argmax(logits, dim=-1, keepdim=True)], dim=1)
    return idx


def main():
    gen = torch.Generator().manual_seed(2024)
    sd = hf_state(TINY, gen)
    in_idx = torch.tensor(IN_IDX, dtype=torch.int64)
    prompt = torch.tensor(PROMPT, dtype=torch.int64)
    sd64 = {k: v.double() for k, v in sd.items()}
    with torch.no_grad():
        logits = gpt2_forward(sd64, TINY, in_idx)
        book = book_model(sd, TINY)(in_idx)  # float32
        assert torch.allclose(logits, book.double(), rtol=1e-5, atol=1e-4), (logits - book).abs().max()
        out = greedy(sd64, TINY, prompt, NEW)
        assert torch.equal(out, greedy(sd, TINY, prompt, NEW))
    save_safetensors(os.path.join(HERE, "gpt2_tiny.safetensors"), sd, {"format": "pt"})
    save_safetensors(os.path.join(HERE, "gpt2_tiny_goldens.safetensors"),
                     {"in_idx": in_idx, "logits": logits, "prompt": prompt, "greedy": out})
    print("greedy:", out.tolist())


if __name__ == "__main__":
    main()
