"""Writes the PyTorch goldens for tests/ops/test_rms_norm.cpp, test_rope.cpp,
test_grouped_query_attention.cpp and tests/nn/test_qwen3.cpp, from the book's own code.

Run with /usr/bin/python3 (Debian's python3-torch 1.13). qwen3.txt holds one tensor a line in the
format of ../golden_format.py (values exact, as float.hex()).

The classes and functions between the "book's code" markers are copied verbatim from the book's
repository, rasbt/LLMs-from-scratch (Apache License 2.0, (c) Sebastian Raschka):
pkg/llms_from_scratch/qwen3.py (QWEN_CONFIG_06_B, Qwen3Model, TransformerBlock, FeedForward,
GroupedQueryAttention, compute_rope_params, apply_rope, RMSNorm) and, renamed with a llama3_ or
Llama3 prefix, pkg/llms_from_scratch/llama3.py's compute_rope_params, LLAMA32_CONFIG_1B,
Llama3Model, TransformerBlock, GroupedQueryAttention and rescale_theta (its FeedForward and
apply_rope are qwen3.py's, the same code). Only llama3.py's nn.RMSNorm needs torch >= 2.4: it is
replaced by TorchRMSNorm, torch 2.4's formula (see there).
"""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line, text_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- book's code: pkg/llms_from_scratch/qwen3.py ----------------------------------------------

# 0.6 billion parameters
QWEN_CONFIG_06_B = {
    "vocab_size": 151_936,           # Vocabulary size
    "context_length": 40_960,        # Context length that was used to train the model
    "emb_dim": 1024,                 # Embedding dimension
    "n_heads": 16,                   # Number of attention heads
    "n_layers": 28,                  # Number of layers
    "hidden_dim": 3072,              # Size of the intermediate dimension in FeedForward
    "head_dim": 128,                 # Size of the heads in GQA
    "qk_norm": True,                 # Whether to normalize queries and values in GQA
    "n_kv_groups": 8,                # Key-Value groups for grouped-query attention
    "rope_base": 1_000_000.0,        # The base in RoPE's "theta"
    "dtype": torch.bfloat16,         # Lower-precision dtype to reduce memory usage
}


class Qwen3Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()

        # Main model parameters
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"], dtype=cfg["dtype"])

        self.trf_blocks = nn.ModuleList(  # ModuleList since Sequential can only accept one input, and we need `x, mask, cos, sin`
            [TransformerBlock(cfg) for _ in range(cfg["n_layers"])]
        )
        self.final_norm = RMSNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False, dtype=cfg["dtype"])

        # Reusuable utilities
        if cfg["head_dim"] is None:
            head_dim = cfg["emb_dim"] // cfg["n_heads"]
        else:
            head_dim = cfg["head_dim"]
        cos, sin = compute_rope_params(
            head_dim=head_dim,
            theta_base=cfg["rope_base"],
            context_length=cfg["context_length"]
        )
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self.cfg = cfg

    def forward(self, in_idx):
        # Forward pass
        tok_embeds = self.tok_emb(in_idx)
        x = tok_embeds

        num_tokens = x.shape[1]
        mask = torch.triu(torch.ones(num_tokens, num_tokens, device=x.device, dtype=torch.bool), diagonal=1)

        for block in self.trf_blocks:
            x = block(x, mask, self.cos, self.sin)
        x = self.final_norm(x)
        logits = self.out_head(x.to(self.cfg["dtype"]))
        return logits


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = GroupedQueryAttention(
            d_in=cfg["emb_dim"],
            num_heads=cfg["n_heads"],
            head_dim=cfg["head_dim"],
            num_kv_groups=cfg["n_kv_groups"],
            qk_norm=cfg["qk_norm"],
            dtype=cfg["dtype"]
        )
        self.ff = FeedForward(cfg)
        self.norm1 = RMSNorm(cfg["emb_dim"], eps=1e-6)
        self.norm2 = RMSNorm(cfg["emb_dim"], eps=1e-6)

    def forward(self, x, mask, cos, sin):
        # Shortcut connection for attention block
        shortcut = x
        x = self.norm1(x)
        x = self.att(x, mask, cos, sin,)  # Shape [batch_size, num_tokens, emb_size]
        x = x + shortcut  # Add the original input back

        # Shortcut connection for feed-forward block
        shortcut = x
        x = self.norm2(x)
        x = self.ff(x)
        x = x + shortcut  # Add the original input back

        return x


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc1 = nn.Linear(cfg["emb_dim"], cfg["hidden_dim"], dtype=cfg["dtype"], bias=False)
        self.fc2 = nn.Linear(cfg["emb_dim"], cfg["hidden_dim"], dtype=cfg["dtype"], bias=False)
        self.fc3 = nn.Linear(cfg["hidden_dim"], cfg["emb_dim"], dtype=cfg["dtype"], bias=False)

    def forward(self, x):
        x_fc1 = self.fc1(x)
        x_fc2 = self.fc2(x)
        x = nn.functional.silu(x_fc1) * x_fc2
        return self.fc3(x)


class GroupedQueryAttention(nn.Module):
    def __init__(
        self, d_in, num_heads, num_kv_groups, head_dim=None, qk_norm=False, dtype=None
    ):
        super().__init__()
        assert num_heads % num_kv_groups == 0, "num_heads must be divisible by num_kv_groups"

        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.group_size = num_heads // num_kv_groups

        if head_dim is None:
            assert d_in % num_heads == 0, "`d_in` must be divisible by `num_heads` if `head_dim` is not set"
            head_dim = d_in // num_heads

        self.head_dim = head_dim
        self.d_out = num_heads * head_dim

        self.W_query = nn.Linear(d_in, self.d_out, bias=False, dtype=dtype)
        self.W_key = nn.Linear(d_in, num_kv_groups * head_dim, bias=False, dtype=dtype)
        self.W_value = nn.Linear(d_in, num_kv_groups * head_dim, bias=False, dtype=dtype)

        self.out_proj = nn.Linear(self.d_out, d_in, bias=False, dtype=dtype)

        if qk_norm:
            self.q_norm = RMSNorm(head_dim, eps=1e-6)
            self.k_norm = RMSNorm(head_dim, eps=1e-6)
        else:
            self.q_norm = self.k_norm = None

    def forward(self, x, mask, cos, sin):
        b, num_tokens, _ = x.shape

        # Apply projections
        queries = self.W_query(x)  # (b, num_tokens, num_heads * head_dim)
        keys = self.W_key(x)       # (b, num_tokens, num_kv_groups * head_dim)
        values = self.W_value(x)   # (b, num_tokens, num_kv_groups * head_dim)

        # Reshape
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = keys.view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)
        values = values.view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)

        # Optional normalization
        if self.q_norm:
            queries = self.q_norm(queries)
        if self.k_norm:
            keys = self.k_norm(keys)

        # Apply RoPE
        queries = apply_rope(queries, cos, sin)
        keys = apply_rope(keys, cos, sin)

        # Expand K and V to match number of heads
        keys = keys.repeat_interleave(self.group_size, dim=1)
        values = values.repeat_interleave(self.group_size, dim=1)

        # Attention
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(mask, -torch.inf)
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)

        context = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.out_proj(context)


def compute_rope_params(head_dim, theta_base=10_000, context_length=4096, dtype=torch.float32):
    assert head_dim % 2 == 0, "Embedding dimension must be even"

    # Compute the inverse frequencies
    inv_freq = 1.0 / (theta_base ** (torch.arange(0, head_dim, 2, dtype=dtype)[: (head_dim // 2)].float() / head_dim))

    # Generate position indices
    positions = torch.arange(context_length, dtype=dtype)

    # Compute the angles
    angles = positions[:, None] * inv_freq[None, :]  # Shape: (context_length, head_dim // 2)

    # Expand angles to match the head_dim
    angles = torch.cat([angles, angles], dim=1)  # Shape: (context_length, head_dim)

    # Precompute sine and cosine
    cos = torch.cos(angles)
    sin = torch.sin(angles)

    return cos, sin


def apply_rope(x, cos, sin):
    # x: (batch_size, num_heads, seq_len, head_dim)
    batch_size, num_heads, seq_len, head_dim = x.shape
    assert head_dim % 2 == 0, "Head dimension must be even"

    # Split x into first half and second half
    x1 = x[..., : head_dim // 2]  # First half
    x2 = x[..., head_dim // 2:]  # Second half

    # Adjust sin and cos shapes
    cos = cos[:seq_len, :].unsqueeze(0).unsqueeze(0)  # Shape: (1, 1, seq_len, head_dim)
    sin = sin[:seq_len, :].unsqueeze(0).unsqueeze(0)

    # Apply the rotary transformation
    rotated = torch.cat((-x2, x1), dim=-1)
    x_rotated = (x * cos) + (rotated * sin)

    # It's ok to use lower-precision after applying cos and sin rotation
    return x_rotated.to(dtype=x.dtype)


class RMSNorm(nn.Module):
    def __init__(self, emb_dim, eps=1e-6, bias=False, qwen3_compatible=True):
        super().__init__()
        self.eps = eps
        self.qwen3_compatible = qwen3_compatible
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim)) if bias else None

    def forward(self, x):
        input_dtype = x.dtype

        if self.qwen3_compatible:
            x = x.to(torch.float32)

        variance = x.pow(2).mean(dim=-1, keepdim=True)
        norm_x = x * torch.rsqrt(variance + self.eps)
        norm_x = norm_x * self.scale

        if self.shift is not None:
            norm_x = norm_x + self.shift

        return norm_x.to(input_dtype)

# ---- end of the book's qwen3.py -----------------------------------------------------------------

# ---- book's code: pkg/llms_from_scratch/llama3.py (compute_rope_params, renamed) ---------------

LLAMA32_ROPE_FREQ = {                   # RoPE frequency scaling (LLAMA32_CONFIG_1B["rope_freq"])
    "factor": 32.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_context_length": 8192,
}


def llama3_compute_rope_params(head_dim, theta_base=10_000, context_length=4096, freq_config=None, dtype=torch.float32):
    assert head_dim % 2 == 0, "Embedding dimension must be even"

    # Compute the inverse frequencies
    inv_freq = 1.0 / (theta_base ** (torch.arange(0, head_dim, 2, dtype=dtype)[: (head_dim // 2)].float() / head_dim))

    # Frequency adjustments
    if freq_config is not None:
        low_freq_wavelen = freq_config["original_context_length"] / freq_config["low_freq_factor"]
        high_freq_wavelen = freq_config["original_context_length"] / freq_config["high_freq_factor"]

        wavelen = 2 * torch.pi / inv_freq

        inv_freq_llama = torch.where(
            wavelen > low_freq_wavelen, inv_freq / freq_config["factor"], inv_freq
        )

        smooth_factor = (freq_config["original_context_length"] / wavelen - freq_config["low_freq_factor"]) / (
            freq_config["high_freq_factor"] - freq_config["low_freq_factor"]
        )

        smoothed_inv_freq = (
            (1 - smooth_factor) * (inv_freq / freq_config["factor"]) + smooth_factor * inv_freq
        )

        is_medium_freq = (wavelen <= low_freq_wavelen) & (wavelen >= high_freq_wavelen)
        inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
        inv_freq = inv_freq_llama

    # Generate position indices
    positions = torch.arange(context_length, dtype=dtype)

    # Compute the angles
    angles = positions[:, None] * inv_freq[None, :]  # Shape: (context_length, head_dim // 2)

    # Expand angles to match the head_dim
    angles = torch.cat([angles, angles], dim=1)  # Shape: (context_length, head_dim)

    # Precompute sine and cosine
    cos = torch.cos(angles)
    sin = torch.sin(angles)

    return cos, sin



# torch.nn.RMSNorm is torch 2.4's; under 1.13 the book's nn.RMSNorm calls below use this stand-in,
# torch 2.4's formula (x * rsqrt(mean(x², -1) + eps), then * weight) with its parameter name.
class TorchRMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, dtype=None):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(normalized_shape, dtype=dtype))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


# The book's llama3.py classes, renamed with a Llama3 prefix (qwen3.py's share their names);
# nn.RMSNorm -> TorchRMSNorm is the only other change.
LLAMA32_CONFIG_1B = {
    "vocab_size": 128_256,           # Vocabulary size
    "context_length": 8192,          # Maximum context length to use (reduced to save memory)
    "orig_context_length": 131_072,  # Context length that was used to train the model
    "emb_dim": 2048,                 # Embedding dimension
    "n_heads": 32,                   # Number of attention heads
    "n_layers": 16,                  # Number of layers
    "hidden_dim": 8192,              # Size of the intermediate dimension in FeedForward
    "n_kv_groups": 8,                # Key-Value groups for grouped-query attention
    "rope_base": 500_000.0,          # The base in RoPE's "theta"
    "dtype": torch.bfloat16,         # Lower-precision dtype to reduce memory usage
    "rope_freq": {                   # RoPE frequency scaling
        "factor": 32.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_context_length": 8192,
    }
}


class Llama3Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()

        # Main model parameters
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"], dtype=cfg["dtype"])

        self.trf_blocks = nn.ModuleList(  # ModuleList since Sequential can only accept one input, and we need `x, mask, cos, sin`
            [Llama3TransformerBlock(cfg) for _ in range(cfg["n_layers"])]
        )

        self.final_norm = TorchRMSNorm(cfg["emb_dim"], eps=1e-5, dtype=cfg["dtype"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False, dtype=cfg["dtype"])

        # Reusuable utilities
        self.register_buffer(
            "mask", torch.triu(torch.ones(cfg["context_length"], cfg["context_length"]), diagonal=1).bool(),
            persistent=False
        )

        if cfg["orig_context_length"] != cfg["context_length"]:
            cfg["rope_base"] = rescale_theta(
                            cfg["rope_base"],
                            cfg["orig_context_length"],
                            cfg["context_length"]
                        )
        cos, sin = llama3_compute_rope_params(
            head_dim=cfg["emb_dim"] // cfg["n_heads"],
            theta_base=cfg["rope_base"],
            context_length=cfg["context_length"],
            freq_config=cfg["rope_freq"]
        )
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self.cfg = cfg

    def forward(self, in_idx):
        tok_embeds = self.tok_emb(in_idx)
        x = tok_embeds

        for block in self.trf_blocks:
            x = block(x, self.mask, self.cos, self.sin)
        x = self.final_norm(x)
        logits = self.out_head(x.to(self.cfg["dtype"]))
        return logits


class Llama3TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = Llama3GroupedQueryAttention(
            d_in=cfg["emb_dim"],
            d_out=cfg["emb_dim"],
            num_heads=cfg["n_heads"],
            num_kv_groups=cfg["n_kv_groups"],
            dtype=cfg["dtype"]
        )
        self.ff = FeedForward(cfg)
        self.norm1 = TorchRMSNorm(cfg["emb_dim"], eps=1e-5, dtype=cfg["dtype"])
        self.norm2 = TorchRMSNorm(cfg["emb_dim"], eps=1e-5, dtype=cfg["dtype"])

    def forward(self, x, mask, cos, sin):
        # Shortcut connection for attention block
        shortcut = x
        x = self.norm1(x)
        x = self.att(x, mask, cos, sin)  # Shape [batch_size, num_tokens, emb_size]
        x = x + shortcut  # Add the original input back

        # Shortcut connection for feed-forward block
        shortcut = x
        x = self.norm2(x)
        x = self.ff(x)
        x = x + shortcut  # Add the original input back

        return x


class Llama3GroupedQueryAttention(nn.Module):
    def __init__(
            self, d_in, d_out, num_heads, num_kv_groups, dtype=None
    ):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        assert num_heads % num_kv_groups == 0, "num_heads must be divisible by num_kv_groups"

        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads

        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=False, dtype=dtype)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=False, dtype=dtype)
        self.num_kv_groups = num_kv_groups
        self.group_size = num_heads // num_kv_groups

        self.W_query = nn.Linear(d_in, d_out, bias=False, dtype=dtype)
        self.out_proj = nn.Linear(d_out, d_out, bias=False, dtype=dtype)

    def forward(self, x, mask, cos, sin):
        b, num_tokens, d_in = x.shape

        queries = self.W_query(x)  # Shape: (b, num_tokens, d_out)
        keys = self.W_key(x)  # Shape: (b, num_tokens, num_kv_groups * head_dim)
        values = self.W_value(x)  # Shape: (b, num_tokens, num_kv_groups * head_dim)

        # Reshape queries, keys, and values
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        keys = keys.view(b, num_tokens, self.num_kv_groups, self.head_dim)
        values = values.view(b, num_tokens, self.num_kv_groups, self.head_dim)

        # Transpose keys, values, and queries
        keys = keys.transpose(1, 2)  # Shape: (b, num_heads, num_tokens, head_dim)
        values = values.transpose(1, 2)  # Shape: (b, num_heads, num_tokens, head_dim)
        queries = queries.transpose(1, 2)  # Shape: (b, num_query_groups, num_tokens, head_dim)

        # Apply RoPE
        keys = apply_rope(keys, cos, sin)
        queries = apply_rope(queries, cos, sin)

        # Expand keys and values to match the number of heads
        # Shape: (b, num_heads, num_tokens, head_dim)
        keys = keys.repeat_interleave(self.group_size, dim=1)  # Shape: (b, num_heads, num_tokens, head_dim)
        values = values.repeat_interleave(self.group_size, dim=1)  # Shape: (b, num_heads, num_tokens, head_dim)

        # Compute scaled dot-product attention (aka self-attention) with a causal mask
        # Shape: (b, num_heads, num_tokens, num_tokens)
        attn_scores = queries @ keys.transpose(2, 3)  # Dot product for each head

        # Use the mask to fill attention scores
        attn_scores = attn_scores.masked_fill(mask[:num_tokens, :num_tokens], -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        assert keys.shape[-1] == self.head_dim

        # Shape: (b, num_tokens, num_heads, head_dim)
        context_vec = (attn_weights @ values).transpose(1, 2)

        # Combine heads, where self.d_out = self.num_heads * self.head_dim
        context_vec = context_vec.reshape(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec)  # optional projection

        return context_vec


def rescale_theta(theta_old, context_length_old, context_length_new):
    scaling_factor = context_length_new / context_length_old
    theta_new = theta_old * scaling_factor
    return theta_new

# ---- end of the book's code ---------------------------------------------------------------------

# The tests' small config: every feature of the 0.6B one (qk_norm, head_dim set, 2 heads per kv
# group), float32 so that the values are comparable to tapegrad's.
QWEN3_CONFIG_TINY = {
    "vocab_size": 97, "context_length": 16, "emb_dim": 32, "n_heads": 4, "n_layers": 2,
    "hidden_dim": 48, "head_dim": 8, "qk_norm": True, "n_kv_groups": 2, "rope_base": 1_000_000.0,
    "dtype": torch.float32,
}


def leaf(t, dtype=torch.float64):
    return t.detach().clone().to(dtype).requires_grad_(True)


def rms_norm_records(records):
    torch.manual_seed(1)
    # The book's RMSNorm with a shift (bias=True), float64 (qwen3_compatible=False keeps the
    # dtype), then the Qwen3 one in float32.
    norm = RMSNorm(8, eps=1e-6, bias=True, qwen3_compatible=False).double()
    with torch.no_grad():
        norm.scale.copy_(torch.randn(8, dtype=torch.float64))
        norm.shift.copy_(torch.randn(8, dtype=torch.float64))
    x = leaf(torch.randn(2, 3, 8, dtype=torch.float64) * 3)
    dy = torch.randn(2, 3, 8, dtype=torch.float64)
    y = norm(x)
    dx, dscale, dshift = torch.autograd.grad(y, (x, norm.scale, norm.shift), dy)
    records += [("rms_norm.f64.x", x), ("rms_norm.f64.scale", norm.scale),
                ("rms_norm.f64.shift", norm.shift), ("rms_norm.f64.dy", dy),
                ("rms_norm.f64.y", y), ("rms_norm.f64.dx", dx), ("rms_norm.f64.dscale", dscale),
                ("rms_norm.f64.dshift", dshift)]
    qnorm = RMSNorm(16)  # Qwen3's: float32, scale ones, eps 1e-6
    with torch.no_grad():
        qnorm.scale.copy_(torch.rand(16) + 0.5)
    x = leaf(torch.randn(4, 16), torch.float32)
    dy = torch.randn(4, 16)
    y = qnorm(x)
    dx, dscale = torch.autograd.grad(y, (x, qnorm.scale), dy)
    records += [("rms_norm.f32.x", x), ("rms_norm.f32.scale", qnorm.scale),
                ("rms_norm.f32.dy", dy), ("rms_norm.f32.y", y), ("rms_norm.f32.dx", dx),
                ("rms_norm.f32.dscale", dscale)]


def rope_records(records):
    torch.manual_seed(2)
    cos, sin = compute_rope_params(head_dim=8, theta_base=10_000, context_length=6)
    x = leaf(torch.randn(2, 3, 5, 8, dtype=torch.float64))
    c, s = leaf(cos), leaf(sin)
    dy = torch.randn(2, 3, 5, 8, dtype=torch.float64)
    y = apply_rope(x, c, s)
    dx, dcos, dsin = torch.autograd.grad(y, (x, c, s), dy)
    records += [("rope.f64.x", x), ("rope.f64.cos", c), ("rope.f64.sin", s), ("rope.f64.dy", dy),
                ("rope.f64.y", y), ("rope.f64.dx", dx), ("rope.f64.dcos", dcos),
                ("rope.f64.dsin", dsin)]
    x32 = torch.randn(1, 2, 6, 8)
    records += [("rope.f32.cos", cos), ("rope.f32.sin", sin), ("rope.f32.x", x32),
                ("rope.f32.y", apply_rope(x32, cos, sin))]
    # The 0.6B config's tables: their first 24 rows and the last (position 40959, the largest
    # angles); Llama 3.2's (head_dim 64, rope_base 500000, the smoothing), first 24 rows and the
    # last of 8192.
    cos, sin = compute_rope_params(head_dim=128, theta_base=1_000_000.0, context_length=40_960)
    records += [("rope_params.qwen3.cos", cos[:24]), ("rope_params.qwen3.sin", sin[:24]),
                ("rope_params.qwen3.cos_last", cos[-1:]), ("rope_params.qwen3.sin_last", sin[-1:])]
    cos, sin = llama3_compute_rope_params(head_dim=64, theta_base=500_000.0, context_length=8192,
                                          freq_config=LLAMA32_ROPE_FREQ)
    records += [("rope_params.llama3.cos", cos[:24]), ("rope_params.llama3.sin", sin[:24]),
                ("rope_params.llama3.cos_last", cos[-1:]), ("rope_params.llama3.sin_last", sin[-1:])]


def gqa_records(records):
    # The book's attention lines of GroupedQueryAttention.forward, from the projected heads on.
    torch.manual_seed(3)
    q = leaf(torch.randn(2, 4, 5, 3, dtype=torch.float64))
    k = leaf(torch.randn(2, 2, 5, 3, dtype=torch.float64))
    v = leaf(torch.randn(2, 2, 5, 3, dtype=torch.float64))
    dy = torch.randn(2, 4, 5, 3, dtype=torch.float64)
    mask = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
    keys = k.repeat_interleave(2, dim=1)
    values = v.repeat_interleave(2, dim=1)
    attn_scores = q @ keys.transpose(2, 3)
    attn_scores = attn_scores.masked_fill(mask, -torch.inf)
    attn_weights = torch.softmax(attn_scores / 3**0.5, dim=-1)
    y = attn_weights @ values
    dq, dk, dv = torch.autograd.grad(y, (q, k, v), dy)
    records += [("gqa.q", q), ("gqa.k", k), ("gqa.v", v), ("gqa.dy", dy), ("gqa.y", y),
                ("gqa.dq", dq), ("gqa.dk", dk), ("gqa.dv", dv)]


def model_records(records, names):
    torch.manual_seed(123)
    model = Qwen3Model(QWEN3_CONFIG_TINY)
    # A weight of each kind, in the order the book's __init__ draws them (the logits check the
    # rest).
    for name, p in model.named_parameters():
        if name in ("tok_emb.weight", "trf_blocks.0.att.W_key.weight",
                    "trf_blocks.1.ff.fc3.weight", "trf_blocks.1.att.q_norm.scale",
                    "out_head.weight"):
            records.append(("tiny.param." + name, p))
    names.append(" ".join(name for name, _ in model.named_parameters()))
    in_idx = torch.tensor([[3, 41, 7, 96, 0, 12], [55, 55, 2, 80, 61, 9]])
    with torch.no_grad():
        logits = model(in_idx)
    records += [("tiny.in_idx", in_idx), ("tiny.logits", logits)]
    n = sum(p.numel() for p in model.parameters())
    records.append(("tiny.num_parameters", torch.tensor(n)))
    # The real 0.6B config, built as the book builds it (bfloat16 weights): its parameter count,
    # and the count without the output head the book's loader ties to the embedding.
    model = Qwen3Model(QWEN_CONFIG_06_B)
    total = sum(p.numel() for p in model.parameters())
    records.append(("qwen3_06b.num_parameters", torch.tensor(total)))
    records.append(("qwen3_06b.num_unique_parameters",
                    torch.tensor(total - model.out_head.weight.numel())))


def train_records(records):
    # 20 steps of the book's training step (ch05's calc_loss_batch: cross_entropy of the
    # flattened logits; zero_grad, backward, step) with torch.optim.AdamW on the tiny config.
    torch.manual_seed(123)
    model = Qwen3Model(QWEN3_CONFIG_TINY)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.1)
    g = torch.Generator().manual_seed(5)
    inputs = torch.randint(0, 97, (2, 8), generator=g)
    targets = torch.randint(0, 97, (2, 8), generator=g)
    losses = []
    for _ in range(20):
        optimizer.zero_grad()
        logits = model(inputs)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    records += [("train.inputs", inputs), ("train.targets", targets),
                ("train.losses", torch.tensor(losses, dtype=torch.float64))]


# The tests' small Llama config: the rope_base rescaling (16 of 64 positions) and every band of
# the frequency smoothing (head dim 8: wavelengths about 6, 180, 5000 and 1e5 after rescaling).
LLAMA3_CONFIG_TINY = {
    "vocab_size": 97, "context_length": 16, "orig_context_length": 64, "emb_dim": 32,
    "n_heads": 4, "n_layers": 2, "hidden_dim": 48, "n_kv_groups": 2, "rope_base": 500_000.0,
    "dtype": torch.float32,
    "rope_freq": {"factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                  "original_context_length": 8192},
}


def llama_records(records, names):
    torch.manual_seed(123)
    model = Llama3Model(dict(LLAMA3_CONFIG_TINY))  # a copy: __init__ rescales cfg["rope_base"]
    names.append(" ".join(name for name, _ in model.named_parameters()))
    for name, p in model.named_parameters():
        if name in ("trf_blocks.0.att.W_key.weight", "trf_blocks.1.att.W_query.weight"):
            records.append(("llama_tiny.param." + name, p))
    records += [("llama_tiny.cos", model.cos), ("llama_tiny.sin", model.sin)]
    in_idx = torch.tensor([[3, 41, 7, 96, 0, 12], [55, 55, 2, 80, 61, 9]])
    with torch.no_grad():
        logits = model(in_idx)
    records += [("llama_tiny.in_idx", in_idx), ("llama_tiny.logits", logits)]
    torch.manual_seed(123)
    model = Llama3Model(dict(LLAMA3_CONFIG_TINY))
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.1)
    g = torch.Generator().manual_seed(5)
    inputs = torch.randint(0, 97, (2, 8), generator=g)
    targets = torch.randint(0, 97, (2, 8), generator=g)
    losses = []
    for _ in range(20):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(inputs).flatten(0, 1), targets.flatten())
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    records.append(("llama_tiny.train_losses", torch.tensor(losses, dtype=torch.float64)))
    # The real 1B config's parameter count (bfloat16, as the book builds it).
    model = Llama3Model(dict(LLAMA32_CONFIG_1B))
    records.append(("llama32_1b.num_parameters",
                    torch.tensor(sum(p.numel() for p in model.parameters()))))


def main():
    records = []
    rms_norm_records(records)
    rope_records(records)
    gqa_records(records)
    names = []
    model_records(records, names)
    train_records(records)
    llama_names = []
    llama_records(records, llama_names)
    with open(os.path.join(HERE, "qwen3.txt"), "w") as f:
        f.write(f"# Written by make_qwen3_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t.detach()) + "\n")
        f.write(text_line("tiny.param_names", names[0]) + "\n")
        f.write(text_line("llama_tiny.param_names", llama_names[0]) + "\n")


if __name__ == "__main__":  # make_hf_goldens.py imports the classes
    main()
