#!/usr/bin/python3
"""Goldens for chapter 3 of *Build a Large Language Model (From Scratch)*, computed by PyTorch.

Run with Debian's python3-torch (1.13):   /usr/bin/python3 make_chapter3_goldens.py
It rewrites the .txt files beside it; the C++ tests read them and never need PyTorch.

Each section of the chapter is run exactly as the book's notebook runs it (float32, the same
seeds, the same order of random draws), and every tensor the matching example program prints
is written as one record, in the order the example prints it. Records the examples do not
print (initial parameters, dropout masks, extra checks such as qkv_bias=True or dropout > 0
inside the modules) are written too, without a `:str` record.

The files are in the suite's one golden format (tests/goldens/golden_format.py, read by
tests/goldens.h): each tensor one record, named as in the book's code without spaces
("a@a.transpose(2,3)"). A tensor the example prints is followed by the text record
`<name>:str`, what torch prints for it: str(tensor) with the `grad_fn=<...>` and
`requires_grad=True` suffixes removed, since tapegrad prints values, not autograd bookkeeping.
Everything else, including `dtype=torch.float64`, is kept. The C++ test finds these strings in
the example's output in file order, the order the example prints them.

train_attention.txt holds the SGD training runs of apps/train_attention.cpp: the same
task in float32 and in float64 (see TRAINING TASK below), with every step's loss and the
initial and final parameters.
"""

import math
import os
import re
import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gpt"))
sys.path.insert(0, os.path.dirname(HERE))
from golden_format import golden_line, text_line  # noqa: E402  the one golden format
# The book's MultiHeadAttention (§3.6.2), the one Python copy, shared with chapter 4's GPTModel.
from gpt_reference import MultiHeadAttention  # noqa: E402


# --- the record writer ---------------------------------------------------------------------------

def torch_str(t):
    """torch's print of t, without the autograd suffixes (see the module docstring)."""
    s = str(t)
    s = re.sub(r",\s*grad_fn=<\w+>", "", s)
    s = re.sub(r",\s*requires_grad=True", "", s)
    if s.startswith("Parameter containing:\n"):
        s = s[len("Parameter containing:\n"):]
    return s


class Goldens:
    def __init__(self, filename, title):
        self.path = os.path.join(HERE, filename)
        self.lines = [f"# {title}", "# Written by make_chapter3_goldens.py (torch "
                      f"{torch.__version__}); do not edit by hand.", ""]
        self.names = set()

    def add(self, name, t, shown=True):
        """Writes t under `name` (spaces dropped); `shown`: the example prints it."""
        t = t.detach()
        name = name.replace(" ", "")
        assert name not in self.names, f"duplicate record {name}"
        assert t.dtype in (torch.float32, torch.float64), name
        self.names.add(name)
        self.lines.append(golden_line(name, t))
        if shown:
            self.lines.append(text_line(name + ":str", torch_str(t)))

    def add_parameters(self, prefix, module):
        for name, p in module.named_parameters():
            self.add(f"{prefix}.{name}", p, shown=False)

    def write(self):
        with open(self.path, "w") as f:
            f.write("\n".join(self.lines) + "\n")
        print(f"wrote {self.path} ({len(self.names)} records)")


# --- the book's data and classes (chapter 3, verbatim but for comments) --------------------------

def make_inputs(dtype=torch.float32):
    return torch.tensor(
        [[0.43, 0.15, 0.89],  # Your     (x^1)
         [0.55, 0.87, 0.66],  # journey  (x^2)
         [0.57, 0.85, 0.64],  # starts   (x^3)
         [0.22, 0.58, 0.33],  # with     (x^4)
         [0.77, 0.25, 0.10],  # one      (x^5)
         [0.05, 0.80, 0.55]],  # step     (x^6)
        dtype=dtype)


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value
        attn_scores = queries @ keys.T  # omega
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        context_vec = attn_weights @ values
        return context_vec


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        context_vec = attn_weights @ values
        return context_vec


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length),
                                                diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = attn_weights @ values
        return context_vec


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
             for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


def book_v1_forward(m, x):
    """SelfAttention_v1's forward written out op by op over m's weights, as the example's
    BookSelfAttentionV1 (examples/ch03_03_self_attention_classes.cpp) writes it."""
    keys = x @ m.W_key  # [T, D]
    queries = x @ m.W_query
    values = x @ m.W_value
    attn_scores = queries @ keys.T  # [T, T]
    attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
    return attn_weights @ values  # [T, D]


def book_multihead_forward(m, x):
    """MultiHeadAttention's forward written out op by op over m's layers, as the example's
    book_multihead_forward (examples/ch03_05_multihead_attention.cpp) writes it."""
    b, num_tokens, _ = x.shape
    h, d_h = m.num_heads, m.head_dim

    def split_heads(t):  # [B, T, D] -> [B, H, T, D_h]
        return t.view(b, num_tokens, h, d_h).transpose(1, 2)

    keys = split_heads(x @ m.W_key.weight.T)
    queries = split_heads(x @ m.W_query.weight.T)
    values = split_heads(x @ m.W_value.weight.T)
    attn_scores = queries @ keys.transpose(2, 3)  # [B, H, T, T]
    mask = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)
    attn_scores = attn_scores.masked_fill(mask, -torch.inf)
    attn_weights = torch.softmax(attn_scores / d_h**0.5, dim=-1)
    context_vec = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, h * d_h)
    return context_vec @ m.out_proj.weight.T + m.out_proj.bias  # [B, T, D]


def dropout_keep_mask(shape, p):
    """The mask nn.Dropout(p) draws next from the default generator (torch's CPU _dropout_impl:
    empty_like(input).bernoulli_(1 - p)); 1 keeps an element, 0 drops it."""
    return torch.empty(shape).bernoulli_(1 - p)


# --- §3.3: simplified self-attention --------------------------------------------------------------

def section_3_3():
    g = Goldens("ch03_01_simplified_attention.txt", "§3.3 simplified self-attention")
    inputs = make_inputs()
    g.add("inputs", inputs)

    query = inputs[1]  # 2nd input token is the query
    attn_scores_2 = torch.empty(inputs.shape[0])
    for i, x_i in enumerate(inputs):
        attn_scores_2[i] = torch.dot(x_i, query)  # dot product (transpose not necessary here)
    g.add("attn_scores_2", attn_scores_2)

    attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()
    g.add("attn_weights_2_tmp", attn_weights_2_tmp)
    g.add("attn_weights_2_tmp.sum", attn_weights_2_tmp.sum())

    def softmax_naive(x):
        return torch.exp(x) / torch.exp(x).sum(dim=0)

    attn_weights_2_naive = softmax_naive(attn_scores_2)
    g.add("attn_weights_2_naive", attn_weights_2_naive)
    g.add("attn_weights_2_naive.sum", attn_weights_2_naive.sum())

    attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
    g.add("attn_weights_2", attn_weights_2)
    g.add("attn_weights_2.sum", attn_weights_2.sum())

    query = inputs[1]  # 2nd input token is the query
    context_vec_2 = torch.zeros(query.shape)
    for i, x_i in enumerate(inputs):
        context_vec_2 += attn_weights_2[i] * x_i
    g.add("context_vec_2", context_vec_2)

    # §3.3.2: all tokens.
    attn_scores_loop = torch.empty(6, 6)
    for i, x_i in enumerate(inputs):
        for j, x_j in enumerate(inputs):
            attn_scores_loop[i, j] = torch.dot(x_i, x_j)
    g.add("attn_scores_loop", attn_scores_loop)

    attn_scores = inputs @ inputs.T
    g.add("attn_scores", attn_scores)

    attn_weights = torch.softmax(attn_scores, dim=-1)
    g.add("attn_weights", attn_weights)
    g.add("attn_weights.row_sums", attn_weights.sum(dim=-1))

    all_context_vecs = attn_weights @ inputs
    g.add("all_context_vecs", all_context_vecs)
    g.add("previous_context_vec_2", context_vec_2)
    g.write()


# --- §3.4.1: self-attention with trainable weights, step by step ----------------------------------

def section_3_4_1():
    g = Goldens("ch03_02_trainable_weights.txt", "§3.4.1 self-attention with trainable weights")
    inputs = make_inputs()
    x_2 = inputs[1]  # second input element
    d_in = inputs.shape[1]  # the input embedding size, d=3
    d_out = 2  # the output embedding size, d=2

    torch.manual_seed(123)
    W_query = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    W_key = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    W_value = torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)
    g.add("W_query", W_query)
    g.add("W_key", W_key)
    g.add("W_value", W_value)

    query_2 = x_2 @ W_query  # _2 because it's with respect to the 2nd input element
    key_2 = x_2 @ W_key
    value_2 = x_2 @ W_value
    g.add("query_2", query_2)
    g.add("key_2", key_2, shown=False)
    g.add("value_2", value_2, shown=False)

    keys = inputs @ W_key
    values = inputs @ W_value
    g.add("keys", keys)
    g.add("values", values)

    keys_2 = keys[1]  # Python starts index at 0
    attn_score_22 = query_2.dot(keys_2)
    g.add("attn_score_22", attn_score_22)

    attn_scores_2 = query_2 @ keys.T  # All attention scores for given query
    g.add("attn_scores_2", attn_scores_2)

    d_k = keys.shape[-1]
    attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)
    g.add("attn_weights_2", attn_weights_2)

    context_vec_2 = attn_weights_2 @ values
    g.add("context_vec_2", context_vec_2)
    g.write()


# --- §3.4.2: the SelfAttention classes and exercise 3.1 -------------------------------------------

def section_3_4_2():
    g = Goldens("ch03_03_self_attention_classes.txt", "§3.4.2 SelfAttention_v1 and _v2")
    inputs = make_inputs()
    d_in, d_out = 3, 2

    torch.manual_seed(123)
    sa_v1 = SelfAttention_v1(d_in, d_out)
    g.add_parameters("sa_v1", sa_v1)
    g.add("sa_v1(inputs)", sa_v1(inputs))
    # examples/ch03_03 prints SelfAttention_v1 once more, "written out from ops".
    g.add("book_v1(inputs)", book_v1_forward(sa_v1, inputs))

    torch.manual_seed(789)
    sa_v2 = SelfAttention_v2(d_in, d_out)
    g.add_parameters("sa_v2", sa_v2)
    g.add("sa_v2(inputs)", sa_v2(inputs))

    # Exercise 3.1: give v1 the weights of v2 (nn.Linear stores W transposed).
    sa_v1.W_query = torch.nn.Parameter(sa_v2.W_query.weight.T)
    sa_v1.W_key = torch.nn.Parameter(sa_v2.W_key.weight.T)
    sa_v1.W_value = torch.nn.Parameter(sa_v2.W_value.weight.T)
    g.add("sa_v1_transferred(inputs)", sa_v1(inputs))

    # Not in the book: SelfAttention_v2 with qkv_bias=True (the Linear bias draws).
    torch.manual_seed(789)
    sa_v2_bias = SelfAttention_v2(d_in, d_out, qkv_bias=True)
    g.add_parameters("sa_v2_bias", sa_v2_bias)
    g.add("sa_v2_bias(inputs)", sa_v2_bias(inputs), shown=False)
    g.write()


# --- §3.5: causal attention and dropout ------------------------------------------------------------

def section_3_5():
    g = Goldens("ch03_04_causal_attention.txt", "§3.5 causal attention")
    inputs = make_inputs()
    d_in, d_out = 3, 2

    torch.manual_seed(789)
    sa_v2 = SelfAttention_v2(d_in, d_out)
    g.add_parameters("sa_v2", sa_v2)

    # §3.5.1: the renormalised-tril way.
    queries = sa_v2.W_query(inputs)
    keys = sa_v2.W_key(inputs)
    attn_scores = queries @ keys.T
    attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
    g.add("attn_weights", attn_weights)

    context_length = attn_scores.shape[0]
    mask_simple = torch.tril(torch.ones(context_length, context_length))
    g.add("mask_simple", mask_simple)
    masked_simple = attn_weights * mask_simple
    g.add("masked_simple", masked_simple)
    row_sums = masked_simple.sum(dim=-1, keepdim=True)
    masked_simple_norm = masked_simple / row_sums
    g.add("masked_simple_norm", masked_simple_norm)

    # The -inf way.
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    g.add("masked", masked)
    attn_weights = torch.softmax(masked / keys.shape[-1]**0.5, dim=-1)
    g.add("causal_attn_weights", attn_weights)

    # §3.5.2: dropout.
    torch.manual_seed(123)
    dropout = torch.nn.Dropout(0.5)  # dropout rate of 50%
    example = torch.ones(6, 6)  # create a matrix of ones
    state = torch.get_rng_state()
    mask_ones = dropout_keep_mask((6, 6), 0.5)
    torch.set_rng_state(state)
    dropped_ones = dropout(example)
    assert torch.equal(dropped_ones, example * mask_ones * 2.0)
    g.add("dropout(ones)", dropped_ones)
    g.add("dropout(ones).mask", mask_ones, shown=False)

    torch.manual_seed(123)
    state = torch.get_rng_state()
    mask_weights = dropout_keep_mask((6, 6), 0.5)
    torch.set_rng_state(state)
    dropped_weights = dropout(attn_weights)
    assert torch.equal(dropped_weights, attn_weights * (mask_weights * 2.0))
    g.add("dropout(attn_weights)", dropped_weights)
    g.add("dropout(attn_weights).mask", mask_weights, shown=False)

    # §3.5.3: the CausalAttention class on a batch of two copies.
    batch = torch.stack((inputs, inputs), dim=0)
    g.add("batch", batch, shown=False)
    torch.manual_seed(123)
    context_length = batch.shape[1]
    ca = CausalAttention(d_in, d_out, context_length, 0.0)
    g.add_parameters("ca", ca)
    context_vecs = ca(batch)
    g.add("ca(batch)", context_vecs)

    # Not in the book: CausalAttention with dropout 0.5 in training mode; the mask it draws
    # right after its own weights.
    torch.manual_seed(123)
    ca_drop = CausalAttention(d_in, d_out, context_length, 0.5)
    state = torch.get_rng_state()
    mask = dropout_keep_mask((2, 6, 6), 0.5)
    torch.set_rng_state(state)
    g.add("ca_dropout(batch)", ca_drop(batch), shown=False)
    g.add("ca_dropout(batch).mask", mask, shown=False)
    ca_drop.eval()
    g.add("ca_dropout.eval(batch)", ca_drop(batch), shown=False)
    g.write()


# --- §3.6: multi-head attention ---------------------------------------------------------------------

def section_3_6():
    g = Goldens("ch03_05_multihead_attention.txt", "§3.6 multi-head attention")
    inputs = make_inputs()
    batch = torch.stack((inputs, inputs), dim=0)

    # §3.6.1: stacking CausalAttention heads.
    torch.manual_seed(123)
    context_length = batch.shape[1]  # This is the number of tokens
    d_in, d_out = 3, 2
    mha = MultiHeadAttentionWrapper(d_in, d_out, context_length, 0.0, num_heads=2)
    g.add_parameters("wrapper", mha)
    g.add("wrapper(batch)", mha(batch))

    # §3.6.2: weight splits.
    torch.manual_seed(123)
    batch_size, context_length, d_in = batch.shape
    d_out = 2
    mha = MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=2)
    g.add_parameters("mha", mha)
    g.add("mha(batch)", mha(batch))
    # examples/ch03_05 prints it once more, "written out from ops".
    g.add("book_multihead_forward(batch)", book_multihead_forward(mha, batch))

    # The batched matrix multiplication behind the heads: (b, num_heads, num_tokens, head_dim).
    a = torch.tensor([[[[0.2745, 0.6584, 0.2775, 0.8573],
                        [0.8993, 0.0390, 0.9268, 0.7388],
                        [0.7179, 0.7058, 0.9156, 0.4340]],

                       [[0.0772, 0.3565, 0.1479, 0.5331],
                        [0.4066, 0.2318, 0.4545, 0.9737],
                        [0.4606, 0.5159, 0.4220, 0.5786]]]])
    g.add("a", a, shown=False)
    g.add("a @ a.transpose(2, 3)", a @ a.transpose(2, 3))
    first_head = a[0, 0, :, :]
    first_res = first_head @ first_head.T
    g.add("first_res", first_res)
    second_head = a[0, 1, :, :]
    second_res = second_head @ second_head.T
    g.add("second_res", second_res)

    # Not in the book: the same layer with qkv_bias=True, and with dropout 0.5 in training.
    torch.manual_seed(123)
    mha_bias = MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=2, qkv_bias=True)
    g.add_parameters("mha_bias", mha_bias)
    g.add("mha_bias(batch)", mha_bias(batch), shown=False)

    torch.manual_seed(123)
    mha_drop = MultiHeadAttention(d_in, 4, context_length, 0.5, num_heads=2)
    g.add_parameters("mha_dropout", mha_drop)
    state = torch.get_rng_state()
    mask = dropout_keep_mask((2, 2, 6, 6), 0.5)
    torch.set_rng_state(state)
    g.add("mha_dropout(batch)", mha_drop(batch), shown=False)
    g.add("mha_dropout(batch).mask", mask, shown=False)
    g.write()


# --- TRAINING TASK (apps/train_attention.cpp) ---------------------------------------------------
#
# A student layer learns to imitate a teacher of the same architecture, by plain SGD:
#   x       the book's inputs: the batch of two copies [2, 6, 3] for MultiHeadAttention, the
#           6x3 matrix itself for SelfAttention_v1
#   student manual_seed(123), then the layer: MultiHeadAttention(d_in 3, d_out 2,
#           context_length 6, dropout 0.0, num_heads 2) or SelfAttention_v1(3, 2)
#   target  manual_seed(456), then a teacher layer of the same kind; target = teacher(x) +
#           0.1 * rand(teacher(x).shape) (computed once, no gradient)
#   loss    mse_loss(student(x), target);  SGD lr 0.5 (p -= lr * grad), 200 steps, each step
#           zero_grad, forward, backward, step (torch.optim.SGD's order)
# Run in float32, and in float64 with torch.set_default_dtype(torch.float64) so that the
# layers draw their weights in float64, as tapegrad's layers do when given DType::Float64.

TRAIN_STEPS = 200
TRAIN_LR = 0.5


def make_layer(kind):
    if kind == "mha":
        return MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)
    return SelfAttention_v1(3, 2)


def train_run(g, kind, dtype):
    tag = f"{kind}.{'f32' if dtype == torch.float32 else 'f64'}"
    torch.set_default_dtype(dtype)
    try:
        inputs = make_inputs(dtype)
        x = torch.stack((inputs, inputs), dim=0) if kind == "mha" else inputs
        torch.manual_seed(123)
        student = make_layer(kind)
        torch.manual_seed(456)
        teacher = make_layer(kind)
        with torch.no_grad():
            target = teacher(x) + 0.1 * torch.rand(teacher(x).shape)
        g.add_parameters(f"{tag}.init", student)
        g.add_parameters(f"{tag}.teacher", teacher)
        g.add(f"{tag}.target", target, shown=False)

        optimizer = torch.optim.SGD(student.parameters(), lr=TRAIN_LR)
        losses = []
        for _ in range(TRAIN_STEPS):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(student(x), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        g.add(f"{tag}.losses", torch.tensor(losses, dtype=dtype), shown=False)
        g.add_parameters(f"{tag}.final", student)
        with torch.no_grad():
            g.add(f"{tag}.final_loss", nn.functional.mse_loss(student(x), target), shown=False)
        print(f"  {tag}: loss {losses[0]:.6g} -> {losses[-1]:.6g} "
              f"(fell {losses[0] / losses[-1]:.0f}x)")
    finally:
        torch.set_default_dtype(torch.float32)


def training():
    g = Goldens("train_attention.txt",
                f"examples/train_attention: SGD lr {TRAIN_LR}, {TRAIN_STEPS} steps")
    for kind in ("mha", "sa_v1"):
        for dtype in (torch.float32, torch.float64):
            train_run(g, kind, dtype)
    g.write()


if __name__ == "__main__":
    torch.set_num_threads(1)  # one summation order for every run
    section_3_3()
    section_3_4_1()
    section_3_4_2()
    section_3_5()
    section_3_6()
    training()
