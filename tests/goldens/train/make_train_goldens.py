#!/usr/bin/python3
"""A tiny GPT trained for 20 steps in PyTorch, for tests/train/test_train_replay.cpp.

Run with Debian's python3-torch (1.13):   /usr/bin/python3 make_train_goldens.py
It rewrites train_goldens.txt beside it.

The model is the book's GPTModel (../gpt/gpt_reference.py) with the bytes tokenizer (one id per
UTF-8 byte, 256 ids), context 32, emb 32, 2 heads, 2 layers, dropout 0.1, no qkv bias, in
float32; the text is genesis1.txt beside this script (Genesis 1:1-19, King James Version, public
domain), cut into the book's GPTDatasetV1 windows (chapter 2) with stride = max_length. Two runs,
each from torch.manual_seed(123) (the weights, then dropout's masks from the same generator):

  loop     the plain loop: DataLoader(all windows, batch 4, shuffle, drop_last, generator None,
           so the shuffle draws from the default generator too), AdamW(lr 4e-4, weight decay 0.1),
           per batch zero_grad, cross_entropy(logits.flatten(0, 1), targets.flatten()),
           backward, clip_grad_norm_(1.0), step. 16 batches per epoch: 20 steps cross an epoch.
  book     the book's train_model_simple (ch05/01_main-chapter-code/gpt_train.py) as train_gpt
           runs it: the text split 0.9 / 0.1 by characters, the loaders sharing one
           torch.Generator().manual_seed(123) (train: shuffle, drop_last; val: in order, keep
           the last batch), clip_grad_norm_(1.0) before each step, evaluate_model every
           eval_freq = 5 steps over eval_iter = 2 batches (iterating train_loader afresh, as the
           book does) and after the last step (as train/training.cpp does), a greedy sample after
           each epoch, stopped after 20 steps (14 batches per epoch).

Records, in the suite's one golden format (tests/goldens/golden_format.py, read by
tests/goldens.h; values as float.hex, so the file holds torch's float32 losses exactly), for each
run <name>:
  <name>:config f64 [15]      vocab context emb heads layers drop_rate batch lr weight_decay
                              max_norm steps train_ratio eval_freq eval_iter seed (ratio 0: no
                              split)
  <name>:loss f64 [steps]     the loss of each step, from step 1
  <name>:grad_norm f64 [steps] clip_grad_norm_'s result at each step
  <name>:eval_step i64 [k], <name>:eval f64 [k,2]   (book only) the steps evaluate_model ran
                              after, and its train and validation losses there
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gpt"))
sys.path.insert(0, os.path.dirname(HERE))
from golden_format import golden_line  # noqa: E402  the one golden format
from gpt_reference import GPTModel  # noqa: E402

CFG = {"vocab_size": 256, "context_length": 32, "emb_dim": 32, "n_heads": 2, "n_layers": 2,
       "drop_rate": 0.1, "qkv_bias": False}
BATCH, LR, WEIGHT_DECAY, MAX_NORM, STEPS, SEED = 4, 4e-4, 0.1, 1.0, 20, 123
TRAIN_RATIO, EVAL_FREQ, EVAL_ITER = 0.9, 5, 2
START_CONTEXT = "And God said"


def encode(text):  # the bytes tokenizer
    return list(text.encode("utf-8"))


class GPTDatasetV1(Dataset):  # chapter 2, over the bytes tokenizer's ids
    def __init__(self, txt, max_length, stride):
        self.input_ids = []
        self.target_ids = []
        token_ids = encode(txt)
        for i in range(0, len(token_ids) - max_length, stride):
            self.input_ids.append(torch.tensor(token_ids[i:i + max_length]))
            self.target_ids.append(torch.tensor(token_ids[i + 1:i + max_length + 1]))

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, idx):
        return self.input_ids[idx], self.target_ids[idx]


def calc_loss_batch(input_batch, target_batch, model):  # chapter 5
    logits = model(input_batch)
    return F.cross_entropy(logits.flatten(0, 1), target_batch.flatten())


def calc_loss_loader(data_loader, model, num_batches=None):  # chapter 5
    total_loss = 0.
    if len(data_loader) == 0:
        return float("nan")
    elif num_batches is None:
        num_batches = len(data_loader)
    else:
        num_batches = min(num_batches, len(data_loader))
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i < num_batches:
            total_loss += calc_loss_batch(input_batch, target_batch, model).item()
        else:
            break
    return total_loss / num_batches


def evaluate_model(model, train_loader, val_loader, eval_iter):  # chapter 5
    model.eval()
    with torch.no_grad():
        train_loss = calc_loss_loader(train_loader, model, num_batches=eval_iter)
        val_loss = calc_loss_loader(val_loader, model, num_batches=eval_iter)
    model.train()
    return train_loss, val_loss


def generate_sample(model, start_context, max_new_tokens=20):  # greedy; draws nothing
    model.eval()
    idx = torch.tensor([encode(start_context)])
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits = model(idx[:, -CFG["context_length"]:])[:, -1, :]
            idx = torch.cat((idx, torch.argmax(logits, dim=-1, keepdim=True)), dim=1)
    model.train()
    return bytes(idx[0].tolist()).decode("utf-8", errors="replace")


def train_step(model, optimizer, input_batch, target_batch):
    optimizer.zero_grad()
    loss = calc_loss_batch(input_batch, target_batch, model)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
    optimizer.step()
    return loss.item(), norm.item()


def config(train_ratio, eval_freq, eval_iter):
    c = CFG
    return [c['vocab_size'], c['context_length'], c['emb_dim'], c['n_heads'], c['n_layers'],
            c['drop_rate'], BATCH, LR, WEIGHT_DECAY, MAX_NORM, STEPS, train_ratio, eval_freq,
            eval_iter, SEED]


def records(name, cfg, losses, norms, evals=None):
    lines = [golden_line(name + ":config", [float(v) for v in cfg]),
             golden_line(name + ":loss", losses), golden_line(name + ":grad_norm", norms)]
    if evals is not None:
        lines += [golden_line(name + ":eval_step", torch.tensor([s for s, _, _ in evals])),
                  golden_line(name + ":eval", [[t, v] for _, t, v in evals])]
    return lines


def run_loop(text):
    torch.manual_seed(SEED)
    model = GPTModel(CFG)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    dataset = GPTDatasetV1(text, CFG["context_length"], CFG["context_length"])
    loader = DataLoader(dataset, batch_size=BATCH, shuffle=True, drop_last=True, num_workers=0)
    losses, norms = [], []
    step = 0
    while step < STEPS:
        for input_batch, target_batch in loader:
            loss, norm = train_step(model, optimizer, input_batch, target_batch)
            step += 1
            losses.append(loss)
            norms.append(norm)
            if step == STEPS:
                break
    return records("loop", config(0, 0, 0), losses, norms)


def run_book(text):
    split_idx = int(TRAIN_RATIO * len(text))
    train_ds = GPTDatasetV1(text[:split_idx], CFG["context_length"], CFG["context_length"])
    val_ds = GPTDatasetV1(text[split_idx:], CFG["context_length"], CFG["context_length"])
    torch.manual_seed(SEED)
    model = GPTModel(CFG)
    model.train()
    data_generator = torch.Generator()
    data_generator.manual_seed(SEED)
    train_loader = DataLoader(train_ds, batch_size=BATCH, shuffle=True, drop_last=True,
                              num_workers=0, generator=data_generator)
    val_loader = DataLoader(val_ds, batch_size=BATCH, shuffle=False, drop_last=False,
                            num_workers=0, generator=data_generator)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    losses, norms, evals = [], [], []
    global_step = -1
    num_epochs = -(-STEPS // len(train_loader))
    for _ in range(num_epochs):
        model.train()
        for input_batch, target_batch in train_loader:
            loss, norm = train_step(model, optimizer, input_batch, target_batch)
            global_step += 1
            losses.append(loss)
            norms.append(norm)
            # The book's test, plus one after the last step, as train_model_simple does it.
            if global_step % EVAL_FREQ == 0 or global_step + 1 == STEPS:
                train_loss, val_loss = evaluate_model(model, train_loader, val_loader, EVAL_ITER)
                evals.append((global_step + 1, train_loss, val_loss))
            if global_step + 1 == STEPS:
                break
        print("sample:", repr(generate_sample(model, START_CONTEXT)))
        if global_step + 1 == STEPS:
            break
    return records("book", config(TRAIN_RATIO, EVAL_FREQ, EVAL_ITER), losses, norms, evals)


def main():
    torch.set_num_threads(1)
    with open(os.path.join(HERE, "genesis1.txt"), encoding="utf-8") as f:
        text = f.read()
    lines = ["# Made by make_train_goldens.py with torch " + torch.__version__]
    lines += run_loop(text)
    lines += run_book(text)
    with open(os.path.join(HERE, "train_goldens.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    for line in lines:
        if not line.startswith("#") and ":config" not in line:
            print(line.split()[0], *[f"{float.fromhex(v):.6f}" for v in line.split()[3:]])


if __name__ == "__main__":
    main()
