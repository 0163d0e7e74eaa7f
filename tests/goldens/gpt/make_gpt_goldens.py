#!/usr/bin/python3
"""Goldens for nn/gpt.* (tests/nn/test_gpt.cpp), computed by PyTorch.

Run with Debian's python3-torch (1.13):   /usr/bin/python3 make_gpt_goldens.py
It rewrites, beside it:
  gpt_small_keys.txt          in the suite's one golden format (tests/goldens/golden_format.py,
                              read by tests/goldens.h): `param:<name>` for each of
                              named_parameters(), then `state:<name>` for each of state_dict(),
                              in torch's order, each an i64 record of the tensor's shape;
  gpt_small_state.safetensors torch.manual_seed(123); GPTModel(SMALL).state_dict() (masks
                              included), float32, as the book's model would be saved;
  gpt_small_logits.safetensors
                              in_idx (I64 [2, 6]); logits_train: the same model right after
                              construction, in training mode (dropout 0.1 drawing from the same
                              stream); logits_eval: then in eval mode.
The model is gpt_reference.py's copy of the book's classes (SMALL config there).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format
from gpt_reference import GPTModel, IN_IDX, SMALL, save_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    torch.manual_seed(123)
    model = GPTModel(SMALL)
    state = model.state_dict()
    in_idx = torch.tensor(IN_IDX, dtype=torch.int64)
    logits_train = model(in_idx)  # training mode: dropout active
    model.eval()
    with torch.no_grad():
        logits_eval = model(in_idx)

    with open(os.path.join(HERE, "gpt_small_keys.txt"), "w") as f:
        f.write("# written by make_gpt_goldens.py: torch's named_parameters() and state_dict()\n")
        for name, p in model.named_parameters():
            f.write(golden_line("param:" + name, torch.tensor(list(p.shape))) + "\n")
        for name, t in state.items():
            f.write(golden_line("state:" + name, torch.tensor(list(t.shape))) + "\n")
    save_safetensors(os.path.join(HERE, "gpt_small_state.safetensors"), state, {"format": "pt"})
    save_safetensors(os.path.join(HERE, "gpt_small_logits.safetensors"),
                     {"in_idx": in_idx, "logits_train": logits_train.detach(),
                      "logits_eval": logits_eval})


if __name__ == "__main__":
    main()
