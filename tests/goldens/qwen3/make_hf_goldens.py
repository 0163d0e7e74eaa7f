"""Writes Hugging Face-layout checkpoints of the tiny Qwen3 and Llama 3 configs and their goldens,
for tests/nn/test_hf_weights.cpp and tests/nn/test_qwen3_generate.cpp.

Run with /usr/bin/python3 (Debian's python3-torch 1.13; no `safetensors` package is needed: the
format is an 8-byte little-endian header length, a JSON header, then the raw bytes).

Writes, next to this script:
  hf/qwen3_tiny/   model-00001-of-00002.safetensors (F32: the embedding and block 0),
                   model-00002-of-00002.safetensors (BF16: block 1 and the final norm),
                   model.safetensors.index.json (HF's {"metadata", "weight_map"}); no
                   lm_head.weight: tied to the embedding, as Qwen3 0.6B's file; config.json
                   (Qwen3ForCausalLM's fields for the config)
  hf/llama3_tiny/  model.safetensors (every tensor BF16, with an untied lm_head.weight)
  hf.txt           the logits of a fixed input after the book's loaders read those files into a
                   fresh model of the book's classes, and the ids of the book's generate on them

The models are the book's classes (Qwen3Model, Llama3Model) as make_qwen3_goldens.py copies
them from rasbt/LLMs-from-scratch (Apache License 2.0, (c) Sebastian Raschka). The Qwen3 loader
below is the book's load_weights_into_qwen (pkg/llms_from_scratch/qwen3.py), taking
lm_head.weight when the file has one, as its Llama loader does (the ch05/07_gpt_to_llama
notebooks' load_weights_into_llama, whose names llama_loader writes out); generate is the book's
chapter-5 generate (pkg/llms_from_scratch/ch05.py).
"""
import json
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from golden_format import golden_line  # noqa: E402
from make_qwen3_goldens import (LLAMA3_CONFIG_TINY, QWEN3_CONFIG_TINY, Llama3Model,  # noqa: E402
                                Qwen3Model)

DTYPES = {torch.float32: "F32", torch.bfloat16: "BF16"}


def write_safetensors(path, tensors):
    """tensors: list of (name, tensor); each written in its own dtype (F32 or BF16)."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors:
        t = t.detach().contiguous()
        raw = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 \
            else t.numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        raw = bytearray(body[begin:end])
        if e["dtype"] == "BF16":
            t = torch.frombuffer(raw, dtype=torch.int16).view(torch.bfloat16)
        else:
            t = torch.frombuffer(raw, dtype=torch.float32)
        out[name] = t.reshape(e["shape"]).clone()
    return out


def randomize_norms(model):
    # The book's norms start at ones: random ones show whether each lands on the right weight.
    g = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.25 * torch.randn(p.shape, generator=g))


def hf_names(model, prefix_norm):
    """(HF name, tensor) of a book model, in HF's layout (prefix_norm: "scale" or "weight")."""
    out = [("model.embed_tokens.weight", model.tok_emb.weight)]
    for i, blk in enumerate(model.trf_blocks):
        p = f"model.layers.{i}."
        out += [(p + "self_attn.q_proj.weight", blk.att.W_query.weight),
                (p + "self_attn.k_proj.weight", blk.att.W_key.weight),
                (p + "self_attn.v_proj.weight", blk.att.W_value.weight),
                (p + "self_attn.o_proj.weight", blk.att.out_proj.weight)]
        if getattr(blk.att, "q_norm", None) is not None:
            out += [(p + "self_attn.q_norm.weight", blk.att.q_norm.scale),
                    (p + "self_attn.k_norm.weight", blk.att.k_norm.scale)]
        out += [(p + "input_layernorm.weight", getattr(blk.norm1, prefix_norm)),
                (p + "mlp.gate_proj.weight", blk.ff.fc1.weight),
                (p + "mlp.up_proj.weight", blk.ff.fc2.weight),
                (p + "mlp.down_proj.weight", blk.ff.fc3.weight),
                (p + "post_attention_layernorm.weight", getattr(blk.norm2, prefix_norm))]
    out.append(("model.norm.weight", getattr(model.final_norm, prefix_norm)))
    return out


# ---- book's code: pkg/llms_from_scratch/qwen3.py (load_weights_into_qwen), the head as llama's --

def load_weights_into_qwen(model, param_config, params):
    def assign(left, right, tensor_name="unknown"):
        if left.shape != right.shape:
            raise ValueError(f"Shape mismatch in tensor '{tensor_name}'. Left: {left.shape}, Right: {right.shape}")
        return torch.nn.Parameter(right.clone().detach() if isinstance(right, torch.Tensor) else torch.tensor(right))

    model.tok_emb.weight = assign(model.tok_emb.weight, params["model.embed_tokens.weight"], "model.embed_tokens.weight")

    for l in range(param_config["n_layers"]):
        block = model.trf_blocks[l]
        att = block.att

        # Q, K, V projections
        att.W_query.weight = assign(
            att.W_query.weight,
            params[f"model.layers.{l}.self_attn.q_proj.weight"],
            f"model.layers.{l}.self_attn.q_proj.weight"
        )
        att.W_key.weight = assign(
            att.W_key.weight,
            params[f"model.layers.{l}.self_attn.k_proj.weight"],
            f"model.layers.{l}.self_attn.k_proj.weight"
        )
        att.W_value.weight = assign(
            att.W_value.weight,
            params[f"model.layers.{l}.self_attn.v_proj.weight"],
            f"model.layers.{l}.self_attn.v_proj.weight"
        )

        # Output projection
        att.out_proj.weight = assign(
            att.out_proj.weight,
            params[f"model.layers.{l}.self_attn.o_proj.weight"],
            f"model.layers.{l}.self_attn.o_proj.weight"
        )

        # QK norms
        if hasattr(att, "q_norm") and att.q_norm is not None:
            att.q_norm.scale = assign(
                att.q_norm.scale,
                params[f"model.layers.{l}.self_attn.q_norm.weight"],
                f"model.layers.{l}.self_attn.q_norm.weight"
            )
        if hasattr(att, "k_norm") and att.k_norm is not None:
            att.k_norm.scale = assign(
                att.k_norm.scale,
                params[f"model.layers.{l}.self_attn.k_norm.weight"],
                f"model.layers.{l}.self_attn.k_norm.weight"
            )

        # Attention layernorm
        block.norm1.scale = assign(
            block.norm1.scale,
            params[f"model.layers.{l}.input_layernorm.weight"],
            f"model.layers.{l}.input_layernorm.weight"
        )

        # Feedforward weights
        block.ff.fc1.weight = assign(
            block.ff.fc1.weight,
            params[f"model.layers.{l}.mlp.gate_proj.weight"],
            f"model.layers.{l}.mlp.gate_proj.weight"
        )
        block.ff.fc2.weight = assign(
            block.ff.fc2.weight,
            params[f"model.layers.{l}.mlp.up_proj.weight"],
            f"model.layers.{l}.mlp.up_proj.weight"
        )
        block.ff.fc3.weight = assign(
            block.ff.fc3.weight,
            params[f"model.layers.{l}.mlp.down_proj.weight"],
            f"model.layers.{l}.mlp.down_proj.weight"
        )
        block.norm2.scale = assign(
            block.norm2.scale,
            params[f"model.layers.{l}.post_attention_layernorm.weight"],
            f"model.layers.{l}.post_attention_layernorm.weight"
        )

    # Final normalization and output head
    model.final_norm.scale = assign(model.final_norm.scale, params["model.norm.weight"], "model.norm.weight")

    if "lm_head.weight" in params:
        model.out_head.weight = assign(model.out_head.weight, params["lm_head.weight"], "lm_head.weight")
    else:
        # Model uses weight tying, hence we reuse the embedding layer weights here
        model.out_head.weight = assign(model.out_head.weight, params["model.embed_tokens.weight"], "model.embed_tokens.weight")


# ---- book's code: pkg/llms_from_scratch/ch05.py (generate) -----------------------------------

def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):

    # For-loop is the same as before: Get logits, and only focus on last time step
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]

        # New: Filter logits with top_k sampling
        if top_k is not None:
            # Keep only top_k values
            top_logits, _ = torch.topk(logits, top_k)
            min_val = top_logits[:, -1]
            logits = torch.where(logits < min_val, torch.tensor(float('-inf')).to(logits.device), logits)

        # New: Apply temperature scaling
        if temperature > 0.0:
            logits = logits / temperature

            # Apply softmax to get probabilities
            probs = torch.softmax(logits, dim=-1)  # (batch_size, context_len)

            # Sample from the distribution
            idx_next = torch.multinomial(probs, num_samples=1)  # (batch_size, 1)

        # Otherwise same as before: get idx of the vocab entry with the highest logits value
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)  # (batch_size, 1)

        if idx_next == eos_id:  # Stop generating early if end-of-sequence token is encountered
            break

        # Same as before: append sampled index to the running sequence
        idx = torch.cat((idx, idx_next), dim=1)  # (batch_size, num_tokens+1)

    return idx

# ---- end of book's code ------------------------------------------------------------------------


def llama_loader(model, params):
    # The Llama notebooks' load_weights_into_llama: the same names, nn.RMSNorm's .weight.
    mapping = dict((id(p), n) for n, p in hf_names(model, "weight"))
    with torch.no_grad():
        for p in model.parameters():
            if id(p) == id(model.out_head.weight):
                src = params.get("lm_head.weight", params["model.embed_tokens.weight"])
            else:
                src = params[mapping[id(p)]]
            assert p.shape == src.shape, (mapping.get(id(p)), p.shape, src.shape)
            p.copy_(src)


IN_IDX = torch.tensor([[3, 41, 7, 96, 0, 12], [55, 55, 2, 80, 61, 9]])


def qwen3_files(records):
    torch.manual_seed(123)
    model = Qwen3Model(QWEN3_CONFIG_TINY)
    randomize_norms(model)
    with torch.no_grad():
        # Tied to the head, N(0, 1) embeddings make each token predict itself: smaller ones give
        # the samples some variety.
        model.tok_emb.weight.mul_(0.15)
    tensors = hf_names(model, "scale")
    split = next(i for i, (n, _) in enumerate(tensors) if n.startswith("model.layers.1."))
    shards = [("model-00001-of-00002.safetensors", tensors[:split], torch.float32),
              ("model-00002-of-00002.safetensors", tensors[split:], torch.bfloat16)]
    out_dir = os.path.join(HERE, "hf", "qwen3_tiny")
    os.makedirs(out_dir, exist_ok=True)
    weight_map, total = {}, 0
    for file, part, dtype in shards:
        write_safetensors(os.path.join(out_dir, file), [(n, t.to(dtype)) for n, t in part])
        for n, t in part:
            weight_map[n] = file
            total += t.numel() * (4 if dtype == torch.float32 else 2)
    c = QWEN3_CONFIG_TINY
    hf_config = {
        "architectures": ["Qwen3ForCausalLM"], "head_dim": c["head_dim"],
        "hidden_size": c["emb_dim"], "intermediate_size": c["hidden_dim"],
        "max_position_embeddings": c["context_length"], "model_type": "qwen3",
        "num_attention_heads": c["n_heads"], "num_hidden_layers": c["n_layers"],
        "num_key_value_heads": c["n_kv_groups"], "rms_norm_eps": 1e-06,
        "rope_scaling": None, "rope_theta": c["rope_base"], "tie_word_embeddings": True,
        "torch_dtype": "bfloat16", "vocab_size": c["vocab_size"]}
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(hf_config, f, indent=2)
        f.write("\n")
    with open(os.path.join(out_dir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))},
                  f, indent=2)
        f.write("\n")
    params = {}
    for file, _, _ in shards:
        params.update({n: t.float() for n, t in read_safetensors(os.path.join(out_dir, file)).items()})
    torch.manual_seed(1)  # another model's weights, all replaced by the loader
    loaded = Qwen3Model(QWEN3_CONFIG_TINY)
    load_weights_into_qwen(loaded, QWEN3_CONFIG_TINY, params)
    loaded.eval()
    with torch.no_grad():
        records.append(("qwen3.logits", loaded(IN_IDX)))
    torch.manual_seed(42)
    prompt = IN_IDX[:1]
    records.append(("qwen3.sampled", generate(loaded, prompt, 14, 16, temperature=1.5, top_k=20)))
    records.append(("qwen3.greedy", generate(loaded, prompt, 14, 16)))


def llama3_files(records):
    torch.manual_seed(123)
    model = Llama3Model(dict(LLAMA3_CONFIG_TINY))
    randomize_norms(model)
    tensors = hf_names(model, "weight") + [("lm_head.weight", model.out_head.weight)]
    out_dir = os.path.join(HERE, "hf", "llama3_tiny")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "model.safetensors")
    write_safetensors(path, [(n, t.to(torch.bfloat16)) for n, t in tensors])
    params = {n: t.float() for n, t in read_safetensors(path).items()}
    torch.manual_seed(1)
    loaded = Llama3Model(dict(LLAMA3_CONFIG_TINY))
    llama_loader(loaded, params)
    loaded.eval()
    with torch.no_grad():
        records.append(("llama3.logits", loaded(IN_IDX)))
    torch.manual_seed(42)
    prompt = IN_IDX[1:]
    records.append(("llama3.sampled", generate(loaded, prompt, 14, 16, temperature=1.5, top_k=20)))
    records.append(("llama3.greedy", generate(loaded, prompt, 14, 16)))


def main():
    records = [("in_idx", IN_IDX)]
    qwen3_files(records)
    llama3_files(records)
    with open(os.path.join(HERE, "hf.txt"), "w") as f:
        f.write(f"# Written by make_hf_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t.detach()) + "\n")


if __name__ == "__main__":
    main()
