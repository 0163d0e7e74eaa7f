#!/usr/bin/python3
"""torch's randperm and DataLoader batches for tests/text/test_dataset.cpp.

Run with Debian's python3-torch (1.13):   /usr/bin/python3 make_dataset_goldens.py
It rewrites dataset_goldens.txt beside it.

The dataset is chapter 2's GPTDatasetV1 (rasbt/LLMs-from-scratch, ch02/01_main-chapter-code,
Apache-2.0), run over made-up token ids instead of tiktoken's (its windowing is the same code),
and loaded with torch.utils.data.DataLoader(num_workers=0) as the book's create_dataloader_v1
does, with and without an explicit generator. After each run one torch.rand from each generator
involved shows how many draws the loader consumed.

Records, in the suite's one golden format (tests/goldens/golden_format.py, read by
tests/goldens.h):
  randperm:<n>:<seed> i64 [n]         torch.randperm(n, generator=Generator(seed))
  loader:<name>:config i64 [9]        n_ids max_length stride batch_size shuffle drop_last epochs
                                      generator_seed(-1: None) global_seed
  loader:<name>:batch:<k> i64 [2,B,T] the k-th batch over all epochs: inputs, then targets
  loader:<name>:epochs i64 [batches]  the epoch of each batch
  loader:<name>:after f32 [1 or 2]    torch.rand(()) of the default generator, then of the
                                      loader's generator when it has one
"""
import os
import sys

import torch
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format

HERE = os.path.dirname(os.path.abspath(__file__))


class GPTDatasetV1(Dataset):  # chapter 2, with token ids given instead of text + tokenizer
    def __init__(self, token_ids, max_length, stride):
        self.input_ids = []
        self.target_ids = []
        for i in range(0, len(token_ids) - max_length, stride):
            input_chunk = token_ids[i:i + max_length]
            target_chunk = token_ids[i + 1: i + max_length + 1]
            self.input_ids.append(torch.tensor(input_chunk))
            self.target_ids.append(torch.tensor(target_chunk))

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, idx):
        return self.input_ids[idx], self.target_ids[idx]


def token_ids(n):
    return [(i * 7919 + 13) % 50257 for i in range(n)]


LOADERS = [
    # name, n_ids, max_length, stride, batch_size, shuffle, drop_last, epochs, generator seed
    ("shuffle_generator_droplast", 101, 4, 3, 3, True, True, 3, 123),
    ("shuffle_generator_keep", 101, 4, 3, 3, True, False, 2, 7),
    ("shuffle_generator_even", 50, 5, 5, 3, True, True, 2, 99),  # 9 windows, 3 full batches
    ("shuffle_global_droplast", 80, 6, 2, 4, True, True, 2, -1),
    ("sequential_keep", 40, 8, 8, 2, False, False, 2, -1),
    ("book_overlap_stride1", 30, 4, 1, 8, True, True, 1, 5),
]


def main():
    lines = ["# Made by make_dataset_goldens.py with torch " + torch.__version__]
    for n in [1, 2, 3, 5, 10, 37, 100, 1000]:
        for seed in [0, 123, 2**40 + 5]:
            g = torch.Generator()
            g.manual_seed(seed)
            lines.append(golden_line(f"randperm:{n}:{seed}", torch.randperm(n, generator=g)))
    for name, n_ids, max_length, stride, batch, shuffle, drop_last, epochs, gseed in LOADERS:
        torch.manual_seed(123)
        dataset = GPTDatasetV1(token_ids(n_ids), max_length, stride)
        g = None
        if gseed >= 0:
            g = torch.Generator()
            g.manual_seed(gseed)
        loader = DataLoader(dataset, batch_size=batch, shuffle=shuffle, drop_last=drop_last,
                            num_workers=0, generator=g)
        config = [n_ids, max_length, stride, batch, int(shuffle), int(drop_last), epochs, gseed,
                  123]
        lines.append(golden_line(f"loader:{name}:config", torch.tensor(config)))
        epoch_of = []
        for epoch in range(epochs):
            for inputs, targets in loader:
                lines.append(golden_line(f"loader:{name}:batch:{len(epoch_of)}",
                                         torch.stack((inputs, targets))))
                epoch_of.append(epoch)
        lines.append(golden_line(f"loader:{name}:epochs", torch.tensor(epoch_of)))
        after = [torch.rand(())]
        if g is not None:
            after.append(torch.rand((), generator=g))
        lines.append(golden_line(f"loader:{name}:after", torch.stack(after)))
    with open(os.path.join(HERE, "dataset_goldens.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
