#!/usr/bin/python3
"""Chapter 6 and 7 data goldens for tests/text/test_instruction.cpp and test_classification.cpp.

Run with Debian's python3-torch (1.13) and python3-numpy:
    /usr/bin/python3 make_finetune_data_goldens.py
It rewrites collate_goldens.txt, prompts_goldens.txt and permutation_goldens.txt beside it.

custom_collate_fn and format_input are the book's (rasbt/LLMs-from-scratch,
ch07/01_main-chapter-code/gpt_instruction_finetuning.py, Apache-2.0), copied unchanged.

collate_goldens.txt (the suite's one golden format, tests/goldens/golden_format.py):
  toy_<case>_inputs / _targets: custom_collate_fn on the book's toy batch [[0, 1, 2, 3, 4],
  [5, 6], [7, 8, 9]] with allowed_max_length None, 2, 4 and 5; pads_*: a batch whose texts hold
  the pad id themselves; loader_<epoch>_<batch>_*: DataLoader(list of token lists, batch_size=3,
  shuffle=True, drop_last=False, generator=Generator().manual_seed(123), collate_fn=
  partial(custom_collate_fn, allowed_max_length=6)) over two epochs.
prompts_goldens.txt: format_input, the training text (format_input + "\n\n### Response:\n" + output)
  and the book's response extraction, for a few entries.
permutation_goldens.txt: what pandas' DataFrame.sample(n, random_state=123) and
  sample(frac=1, random_state=123) draw. pandas is not installed here; pandas 1.x/2.x call
  np.random.RandomState(random_state).choice(len(df), size=n, replace=False) and take those rows,
  so the goldens are that call: choice_<len>_<n> (the book's 747 of 4825 ham messages) and
  perm_<n> (its shuffle of the 1494 balanced rows).
"""
import os
from functools import partial

import sys

import numpy as np
import torch
from torch.utils.data import DataLoader

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line, text_line  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def custom_collate_fn(
    batch,
    pad_token_id=50256,
    ignore_index=-100,
    allowed_max_length=None,
    device="cpu"
):
    # Find the longest sequence in the batch
    batch_max_length = max(len(item)+1 for item in batch)

    # Pad and prepare inputs and targets
    inputs_lst, targets_lst = [], []

    for item in batch:
        new_item = item.copy()
        # Add an <|endoftext|> token
        new_item += [pad_token_id]
        # Pad sequences to max_length
        padded = new_item + [pad_token_id] * (batch_max_length - len(new_item))
        inputs = torch.tensor(padded[:-1])  # Truncate the last token for inputs
        targets = torch.tensor(padded[1:])  # Shift +1 to the right for targets

        # New: Replace all but the first padding tokens in targets by ignore_index
        mask = targets == pad_token_id
        indices = torch.nonzero(mask).squeeze()
        if indices.numel() > 1:
            targets[indices[1:]] = ignore_index

        # New: Optionally truncate to maximum sequence length
        if allowed_max_length is not None:
            inputs = inputs[:allowed_max_length]
            targets = targets[:allowed_max_length]

        inputs_lst.append(inputs)
        targets_lst.append(targets)

    # Convert list of inputs and targets to tensors and transfer to target device
    inputs_tensor = torch.stack(inputs_lst).to(device)
    targets_tensor = torch.stack(targets_lst).to(device)

    return inputs_tensor, targets_tensor


def format_input(entry):
    instruction_text = (
        f"Below is an instruction that describes a task. "
        f"Write a response that appropriately completes the request."
        f"\n\n### Instruction:\n{entry['instruction']}"
    )

    input_text = f"\n\n### Input:\n{entry['input']}" if entry["input"] else ""

    return instruction_text + input_text


def line(name, values):
    """A record of the suite's one golden format (golden_format.py), as int64."""
    return golden_line(name, torch.as_tensor(np.asarray(values), dtype=torch.int64))


def collate_goldens():
    out = [f"# Made by make_finetune_data_goldens.py with torch {torch.__version__}"]
    toy = [[0, 1, 2, 3, 4], [5, 6], [7, 8, 9]]
    for case, allowed in [("none", None), ("2", 2), ("4", 4), ("5", 5)]:
        inputs, targets = custom_collate_fn(toy, allowed_max_length=allowed)
        out += [line(f"toy_{case}_inputs", inputs), line(f"toy_{case}_targets", targets)]
    pads = [[50256, 3, 50256], [4], [50256]]
    inputs, targets = custom_collate_fn(pads)
    out += [line("pads_inputs", inputs), line("pads_targets", targets)]
    items = [[(7 * i + j) % 50 for j in range(1 + (3 * i) % 8)] for i in range(10)]
    out.append(line("loader_items_lengths", [len(x) for x in items]))
    out.append(line("loader_items_flat", [v for x in items for v in x]))
    g = torch.Generator().manual_seed(123)
    loader = DataLoader(items, batch_size=3, shuffle=True, drop_last=False, generator=g,
                        collate_fn=partial(custom_collate_fn, allowed_max_length=6))
    for epoch in range(2):
        for b, (inputs, targets) in enumerate(loader):
            out += [line(f"loader_{epoch}_{b}_inputs", inputs),
                    line(f"loader_{epoch}_{b}_targets", targets)]
    return out


def prompt_records():
    entries = [
        {"instruction": "Identify the correct spelling of the following word.",
         "input": "Ocassion", "output": "The correct spelling is 'Occasion.'"},
        {"instruction": "What is an antonym of 'complicated'?", "input": "",
         "output": "An antonym of 'complicated' is 'simple'."},
        {"instruction": "Which book of the Bible is this verse from?",
         "input": "Jesus wept.", "output": "John"},
    ]
    records = []
    for e in entries:
        input_text = format_input(e)
        generated = input_text + "\n\n### Response:\n " + e["output"] + "  \n"
        records.append({
            "entry": e,
            "format_input": input_text,
            "training_text": input_text + f"\n\n### Response:\n{e['output']}",
            "generated_text": generated,
            "response": generated[len(input_text):].replace("### Response:", "").strip(),
        })
    return records


def prompts_goldens():
    """prompt_<i>:<field> text records: the entry's three fields, then what the book computes."""
    out = ["# Made by make_finetune_data_goldens.py"]
    for i, r in enumerate(prompt_records()):
        for field in ["instruction", "input", "output"]:
            out.append(text_line(f"prompt_{i}:{field}", r["entry"][field]))
        for field in ["format_input", "training_text", "generated_text", "response"]:
            out.append(text_line(f"prompt_{i}:{field}", r[field]))
    return out


def permutation_goldens():
    out = [f"# Made by make_finetune_data_goldens.py with numpy {np.__version__}"]
    for n, size in [(4825, 747), (10, 4)]:
        out.append(line(f"choice_{n}_{size}",
                        np.random.RandomState(123).choice(n, size=size, replace=False)))
    for n in [1, 2, 10, 1494]:
        out.append(line(f"perm_{n}", np.random.RandomState(123).choice(n, size=n, replace=False)))
    out.append(line("perm_1494_seed7", np.random.RandomState(7).permutation(1494)))
    return out


def main():
    with open(os.path.join(HERE, "collate_goldens.txt"), "w") as f:
        f.write("\n".join(collate_goldens()) + "\n")
    with open(os.path.join(HERE, "prompts_goldens.txt"), "w") as f:
        f.write("\n".join(prompts_goldens()) + "\n")
    with open(os.path.join(HERE, "permutation_goldens.txt"), "w") as f:
        f.write("\n".join(permutation_goldens()) + "\n")


if __name__ == "__main__":
    main()
