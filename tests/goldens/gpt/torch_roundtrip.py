#!/usr/bin/python3
"""Manual check: a GPTModel saved by tapegrad loads into the book's PyTorch GPTModel.

Not run by the test suite (tests never need torch); run it by hand after changing nn/:

    mkdir -p /tmp/gpt_rt
    TAPEGRAD_GPT_SAVE=/tmp/gpt_rt ./build/tests/tapegrad_tests "[gpt][safetensors]"
    /usr/bin/python3 tests/goldens/gpt/torch_roundtrip.py /tmp/gpt_rt

The test writes tapegrad_small.safetensors (GPTModel(SMALL) after manual_seed(5), via save())
and tapegrad_small_logits.safetensors (its eval-mode logits for IN_IDX). This script loads the
first with load_state_dict(strict=True) into gpt_reference.GPTModel (the book's classes), checks
the logits against tapegrad's within 1e-6 + 1e-5 relative, and writes the model back with its own writer as
torch_small.safetensors (the reverse direction is tested in C++: test_gpt.cpp loads
gpt_small_state.safetensors, written the same way).
"""
import os
import sys

import torch

from gpt_reference import GPTModel, IN_IDX, SMALL, load_safetensors, save_safetensors


def main():
    folder = sys.argv[1]
    state = load_safetensors(os.path.join(folder, "tapegrad_small.safetensors"))
    model = GPTModel(SMALL)
    model.load_state_dict(state, strict=True)
    model.eval()
    with torch.no_grad():
        logits = model(torch.tensor(IN_IDX))
    theirs = load_safetensors(os.path.join(folder, "tapegrad_small_logits.safetensors"))["logits"]
    # Within 1e-6 + 1e-5 relative per element, as the C++ tests compare.
    ratio = ((logits - theirs).abs() / (1e-6 + 1e-5 * theirs.abs())).max().item()
    print("load_state_dict(strict=True): ok; worst logit difference %.3g of the tolerance" % ratio)
    save_safetensors(os.path.join(folder, "torch_small.safetensors"), model.state_dict())
    if ratio > 1.0:
        sys.exit("logits differ")


if __name__ == "__main__":
    main()
