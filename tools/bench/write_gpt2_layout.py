#!/usr/bin/python3
"""Writes a Hugging Face GPT-2 model.safetensors of the real layout and sizes with random float32
weights (no download needed), to measure tapegrad's loading and generation memory:

    /usr/bin/python3 tools/bench/write_gpt2_layout.py /tmp/gpt2-124m.safetensors [--size 124M]
    /usr/bin/time -v build/bin/tapegrad-generate --weights /tmp/gpt2-124m.safetensors --ids 15496,11,314

Names and shapes are GPT2Model's (wte, wpe, h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
mlp.c_proj}, ln_f; Conv1D weights [in, out]; the head tied to wte).
"""
import argparse
import json
import struct

import numpy as np

SIZES = {"124M": (768, 12), "355M": (1024, 24), "774M": (1280, 36), "1558M": (1600, 48)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("path")
    p.add_argument("--size", choices=sorted(SIZES), default="124M")
    args = p.parse_args()
    C, L = SIZES[args.size]
    V, T = 50257, 1024
    shapes = [("wte.weight", (V, C)), ("wpe.weight", (T, C))]
    for i in range(L):
        h = f"h.{i}."
        shapes += [(h + "ln_1.weight", (C,)), (h + "ln_1.bias", (C,)),
                   (h + "attn.c_attn.weight", (C, 3 * C)), (h + "attn.c_attn.bias", (3 * C,)),
                   (h + "attn.c_proj.weight", (C, C)), (h + "attn.c_proj.bias", (C,)),
                   (h + "ln_2.weight", (C,)), (h + "ln_2.bias", (C,)),
                   (h + "mlp.c_fc.weight", (C, 4 * C)), (h + "mlp.c_fc.bias", (4 * C,)),
                   (h + "mlp.c_proj.weight", (4 * C, C)), (h + "mlp.c_proj.bias", (C,))]
    shapes += [("ln_f.weight", (C,)), ("ln_f.bias", (C,))]
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in shapes:
        n = int(np.prod(shape)) * 4
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    rng = np.random.default_rng(0)
    with open(args.path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name, shape in shapes:
            scale = 1.0 if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") \
                or name == "ln_f.weight" else 0.02
            f.write((rng.standard_normal(shape, dtype=np.float32) * scale).tobytes())


if __name__ == "__main__":
    main()
