"""Writes the PyTorch goldens for tests/data/test_tensor_dataset.cpp: the orders torch gives.

Run with /usr/bin/python3 (Debian's python3-torch 1.13). data.txt holds one record a line in the
format of ../golden_format.py, each an i64 tensor of row indices:
  randperm.n<n>.s<seed>: torch.randperm(n, generator=torch.Generator().manual_seed(seed));
  loader.n<n>.s<seed>.b<b>[.drop].e<k>: epoch k (0, 1) of DataLoader(TensorDataset(arange(n)),
      batch_size=b, shuffle=True, drop_last, generator=torch.Generator().manual_seed(seed)),
      the batches concatenated; its batch sizes in the record with suffix .sizes;
  loader_global.n<n>.s<seed>.b<b>.e<k>: the same without a generator, after
      torch.manual_seed(seed);
  split.n<n>.s<seed>.<lengths>.p<i>: part i of random_split(TensorDataset(arange(n)), lengths,
      generator=torch.Generator().manual_seed(seed)).
"""
import os
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset, random_split

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line  # noqa: E402  the one golden format (tests/goldens.h)

HERE = os.path.dirname(os.path.abspath(__file__))


def seeded(seed):
    return torch.Generator().manual_seed(seed)


def epochs(name, loader, records):
    for k in range(2):
        batches = [b[0] for b in loader]
        records.append((f"{name}.e{k}", torch.cat(batches)))
        records.append((f"{name}.e{k}.sizes", torch.tensor([len(b) for b in batches])))


def main():
    records = []
    for n, seed in ((1, 0), (5, 0), (10, 42), (100, 7), (1000, 123)):
        records.append((f"randperm.n{n}.s{seed}", torch.randperm(n, generator=seeded(seed))))
    for n, seed, b, drop in ((10, 42, 3, False), (10, 42, 3, True), (7, 1, 1, False),
                             (64, 2026, 16, False)):
        ds = TensorDataset(torch.arange(n))
        loader = DataLoader(ds, batch_size=b, shuffle=True, drop_last=drop, generator=seeded(seed))
        epochs(f"loader.n{n}.s{seed}.b{b}" + (".drop" if drop else ""), loader, records)
    for n, seed, b in ((10, 5, 4),):
        torch.manual_seed(seed)
        loader = DataLoader(TensorDataset(torch.arange(n)), batch_size=b, shuffle=True)
        epochs(f"loader_global.n{n}.s{seed}.b{b}", loader, records)
    for n, seed, lengths in ((10, 42, (7, 3)), (100, 0, (80, 10, 10)), (5, 3, (0, 5))):
        parts = random_split(TensorDataset(torch.arange(n)), list(lengths), generator=seeded(seed))
        tag = "_".join(str(x) for x in lengths)
        for i, part in enumerate(parts):
            records.append((f"split.n{n}.s{seed}.{tag}.p{i}",
                            torch.tensor([part[j][0].item() for j in range(len(part))],
                                         dtype=torch.int64)))
    with open(os.path.join(HERE, "data.txt"), "w") as f:
        f.write(f"# Written by make_data_goldens.py with torch {torch.__version__}.\n")
        for name, t in records:
            f.write(golden_line(name, t) + "\n")


main()
