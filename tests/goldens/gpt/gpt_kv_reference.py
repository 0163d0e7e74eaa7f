"""The book's GPT with the optimized KV cache (rasbt/LLMs-from-scratch, ch04/03_kv-cache,
gpt_with_kv_cache_optimized.py, Apache License 2.0), built around gpt_reference.py's layers: the one
Python copy, used by tests/goldens/kv_cache/make_kv_cache_goldens.py and by the benchmark's PyTorch
peer (tools/bench/torch_gpt.py --generate).

Its MultiHeadAttention keeps cache_k / cache_v of [B, H, window, D_h], shifts them left when new
tokens would overflow the window, and masks with the diagonal offset by the tokens already cached;
its GPTModel continues the positions (ptr_current_pos). Parameters are created in GPTModel's order
(no dropout: inference only), so after the same torch.manual_seed it has GPTModel's weights.
"""
import torch
import torch.nn as nn

from gpt_reference import FeedForward, LayerNorm


class KVMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, num_heads, qkv_bias, window_size):
        super().__init__()
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.window_size = window_size
        self.cache_k = self.cache_v = None
        self.ptr_cur = 0

    def forward(self, x):  # always cached, as generate_text_simple_cached uses it
        b, num_tokens, _ = x.shape

        def heads(t):
            return t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

        keys_new, values_new, queries = heads(self.W_key(x)), heads(self.W_value(x)), heads(self.W_query(x))
        if self.cache_k is None or self.cache_k.size(0) != b:
            self.cache_k = torch.zeros(b, self.num_heads, self.window_size, self.head_dim)
            self.cache_v = torch.zeros_like(self.cache_k)
            self.ptr_cur = 0
        if self.ptr_cur + num_tokens > self.window_size:
            overflow = self.ptr_cur + num_tokens - self.window_size
            self.cache_k[:, :, :-overflow, :] = self.cache_k[:, :, overflow:, :].clone()
            self.cache_v[:, :, :-overflow, :] = self.cache_v[:, :, overflow:, :].clone()
            self.ptr_cur -= overflow
        self.cache_k[:, :, self.ptr_cur:self.ptr_cur + num_tokens, :] = keys_new
        self.cache_v[:, :, self.ptr_cur:self.ptr_cur + num_tokens, :] = values_new
        self.ptr_cur += num_tokens
        keys = self.cache_k[:, :, :self.ptr_cur, :]
        values = self.cache_v[:, :, :self.ptr_cur, :]

        attn_scores = queries @ keys.transpose(2, 3)
        K = attn_scores.size(-1)
        if num_tokens == K:
            causal_mask = torch.triu(torch.ones(num_tokens, K, dtype=torch.bool), diagonal=1)
        else:
            offset = K - num_tokens
            causal_mask = torch.arange(num_tokens).unsqueeze(1) + offset < torch.arange(K).unsqueeze(0)
        attn_scores.masked_fill_(causal_mask.unsqueeze(0).unsqueeze(0), -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class KVTransformerBlock(nn.Module):
    def __init__(self, cfg, window_size):
        super().__init__()
        self.att = KVMultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], cfg["n_heads"], cfg["qkv_bias"],
                                        window_size)
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])

    def forward(self, x):
        x = x + self.att(self.norm1(x))
        return x + self.ff(self.norm2(x))


class KVGPTModel(nn.Module):
    def __init__(self, cfg, window_size):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.trf_blocks = nn.ModuleList([KVTransformerBlock(cfg, window_size) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
        self.ptr_current_pos = 0

    def forward(self, in_idx):
        seq_len = in_idx.shape[1]
        pos_ids = torch.arange(self.ptr_current_pos, self.ptr_current_pos + seq_len)
        self.ptr_current_pos += seq_len
        x = self.tok_emb(in_idx) + self.pos_emb(pos_ids).unsqueeze(0)
        for blk in self.trf_blocks:
            x = blk(x)
        return self.out_head(self.final_norm(x))

    def reset_kv_cache(self):
        for blk in self.trf_blocks:
            blk.att.cache_k = blk.att.cache_v = None
        self.ptr_current_pos = 0


def generate_text_simple_cached(model, idx, max_new_tokens):
    with torch.no_grad():
        model.reset_kv_cache()
        logits = model(idx)
        for _ in range(max_new_tokens):
            next_idx = logits[:, -1].argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, next_idx], dim=1)
            if _ + 1 < max_new_tokens:  # the book's last forward is unused (and would pass the context)
                logits = model(next_idx)
    return idx
