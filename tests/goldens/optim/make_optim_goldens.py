# Writes the torch.optim goldens that tests/optim/*.cpp replay: optimiser runs and lr schedules.
#
# Run with the system interpreter that has Debian's torch 1.13:
#     /usr/bin/python3 tests/goldens/optim/make_optim_goldens.py
#
# The model (the "small attention model"): one causal self-attention head as in chapter 3 of the
# book, followed by an output projection and a layer norm.
#     x       [2, 6, 3]  torch.rand after torch.manual_seed(123)
#     target  [2, 6, 3]  torch.rand, drawn right after x
#     W_query, W_key, W_value [3, 4]  nn.Parameter(torch.rand(3, 4)) after torch.manual_seed(789)
#     out_proj  nn.Linear(4, 3)       (weight [3, 4], bias [3]), then
#     norm      nn.LayerNorm(3)       (weight [3], bias [3])
#     forward:  q, k, v = x·W_query, x·W_key, x·W_value;  scores = q·kᵀ, masked above the diagonal
#               with -inf;  w = softmax(scores / sqrt(4));  y = norm(out_proj(w·v))
#     loss = mean((y - target)²)
# Parameters are created in float32 and copied (exactly) to float64 for the float64 runs.
#
# Replay mode: each run trains this model in torch for 20 steps and records, per step, the
# gradients torch computed (before any clipping), the lr each group used, torch's returned total
# norm when clipping by norm, and the parameters after the step. The C++ tests set each
# Parameter's gradient from the file and step their optimiser, so only the optimiser (and the
# clipping and schedule) is under test.
#
# Warm-up + cosine is torch's
#     SequentialLR(opt, [LinearLR(opt, start_factor, 1.0, total_iters=warmup),
#                        CosineAnnealingLR(opt, T_max=total - warmup, eta_min=eta_min)],
#                  milestones=[warmup])
# which is also the book's appendix-D schedule (linear from initial_lr = start_factor·peak_lr to
# peak_lr over `warmup` steps, then cosine down to min_lr = eta_min over the remaining steps);
# schedules.txt checks it against a LambdaLR with the book's formula too.
#
# Files, in the suite's one golden format (tests/goldens/golden_format.py, read by
# tests/goldens.h; record order is meaningful where said):
#   runs/<run>.<dtype>.txt
#     optimizer txt SGD|Adam|AdamW
#     option:<name> f64 scalar <value>   (lr, momentum, dampening, weight_decay, nesterov,
#                                         maximize, beta1, beta2, eps, amsgrad; booleans as 0/1)
#     group:<index> f64 2 <lr> <weight_decay>   (every run lists its groups explicitly)
#     param:<name> i64 scalar <group>    (in the optimiser's parameter order)
#     schedule txt none | step <step_size> <gamma> | cosine <T_max> <eta_min>
#                | warmup_cosine <warmup> <total> <start_factor> <eta_min>
#     clip txt none | norm <max_norm> <norm_type: 2 or inf> | value <clip_value>
#     init:<name>                        (before the first step; its dtype is the run's)
#     step:<kk>:lr f64 <groups>          (kk = 01..20: the lr each group used in step k)
#     step:<kk>:grad:<name>              (as torch's backward computed them)
#     step:<kk>:norm                     (clip norm runs only: clip_grad_norm_'s return)
#     step:<kk>:after:<name>             (after clipping and optimizer.step())
#   model_inputs.txt                   (for the end-to-end test, which computes the gradients itself)
#     x, target
#   schedules.txt                      (in SCHEDULES' order)
#     schedule:<name> txt <kind> <args>...   (kinds: step, cosine, linear, warmup_cosine, book)
#     base:<name> f64 2 <lr group 0> <lr group 1>
#     lrs:<name> f64 61,2                (per epoch, both groups' lrs; epoch 0 = right after
#                                         construction)
import math
import os
import re

import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from golden_format import golden_line, text_line  # noqa: E402  the one golden format
STEPS = 20


def hexf(v):
    """float.hex with the mantissa's trailing zeros dropped: exact, and shorter for float32."""
    h = float(v).hex()
    m = re.match(r"^(-?0x[01])\.([0-9a-f]*?)0*p(.*)$", h)
    if not m:
        return h  # inf / nan
    mant = m.group(1) + ("." + m.group(2) if m.group(2) else "")
    return mant + "p" + m.group(3)


class CausalAttentionModel(nn.Module):
    def __init__(self, d_in=3, d_out=4, context=6):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))
        self.out_proj = nn.Linear(d_out, d_in)
        self.norm = nn.LayerNorm(d_in)
        self.register_buffer("mask", torch.triu(torch.ones(context, context), diagonal=1))

    def forward(self, x):
        q, k, v = x @ self.W_query, x @ self.W_key, x @ self.W_value
        scores = q @ k.transpose(1, 2)
        t = x.shape[1]
        scores = scores.masked_fill(self.mask.bool()[:t, :t], -torch.inf)
        weights = torch.softmax(scores / k.shape[-1] ** 0.5, dim=-1)
        return self.norm(self.out_proj(weights @ v))


torch.manual_seed(123)
X = torch.rand(2, 6, 3)
TARGET = torch.rand(2, 6, 3)
torch.manual_seed(789)
INIT = {name: p.detach().clone() for name, p in CausalAttentionModel().named_parameters()}
NO_DECAY = ("out_proj.bias", "norm.weight", "norm.bias")  # biases and layer-norm weights


def make_model(dtype):
    model = CausalAttentionModel().to(dtype)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(INIT[name].to(dtype))
    return model


# name, optimizer class, options, groups (None: one group; else [(names filter, overrides)]),
# schedule, clip
RUNS = [
    ("sgd_plain", "SGD", dict(lr=0.1), None, ("none",), ("none",)),
    ("sgd_momentum", "SGD", dict(lr=0.1, momentum=0.9), None, ("none",), ("none",)),
    ("sgd_dampening_wd", "SGD", dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01),
     None, ("none",), ("none",)),
    ("sgd_nesterov_wd", "SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1),
     None, ("none",), ("none",)),
    ("sgd_maximize", "SGD", dict(lr=0.01, momentum=0.5, maximize=True), None, ("none",),
     ("none",)),
    ("sgd_groups", "SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.05),
     [("decay", {}), ("no_decay", dict(lr=0.2, weight_decay=0.0))], ("none",), ("none",)),
    ("sgd_steplr_clip_value", "SGD", dict(lr=0.1, momentum=0.9), None, ("step", 5, 0.5),
     ("value", 0.05)),
    ("adam_default", "Adam", dict(lr=0.01), None, ("none",), ("none",)),
    ("adam_betas_eps_wd", "Adam", dict(lr=0.02, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1),
     None, ("none",), ("none",)),
    ("adam_amsgrad", "Adam", dict(lr=0.01, amsgrad=True), None, ("none",), ("none",)),
    ("adam_maximize", "Adam", dict(lr=0.005, maximize=True), None, ("none",), ("none",)),
    ("adam_cosine_clip_inf", "Adam", dict(lr=0.02), None, ("cosine", 20, 0.0),
     ("norm", 0.1, math.inf)),
    ("adamw_default", "AdamW", dict(lr=0.01), None, ("none",), ("none",)),
    ("adamw_amsgrad_wd", "AdamW", dict(lr=0.02, betas=(0.9, 0.99), weight_decay=0.1, amsgrad=True),
     None, ("none",), ("none",)),
    ("adamw_groups", "AdamW", dict(lr=0.01, weight_decay=0.1),
     [("decay", {}), ("no_decay", dict(lr=0.03, weight_decay=0.0))], ("none",), ("none",)),
    ("adamw_warmup_cosine_clip", "AdamW", dict(lr=0.05, weight_decay=0.1),
     None, ("warmup_cosine", 5, 20, 0.1, 0.001), ("norm", 0.5, 2.0)),
]

OPTIMIZERS = {"SGD": torch.optim.SGD, "Adam": torch.optim.Adam, "AdamW": torch.optim.AdamW}


def make_scheduler(opt, schedule):
    kind = schedule[0]
    if kind == "none":
        return None
    if kind == "step":
        return torch.optim.lr_scheduler.StepLR(opt, step_size=schedule[1], gamma=schedule[2])
    if kind == "cosine":
        return torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=schedule[1],
                                                          eta_min=schedule[2])
    if kind == "warmup_cosine":
        warmup, total, start_factor, eta_min = schedule[1:]
        linear = torch.optim.lr_scheduler.LinearLR(opt, start_factor=start_factor, end_factor=1.0,
                                                   total_iters=warmup)
        cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total - warmup,
                                                            eta_min=eta_min)
        return torch.optim.lr_scheduler.SequentialLR(opt, [linear, cosine], milestones=[warmup])
    raise ValueError(kind)


def resolved(options, key, default):
    return options.get(key, default)


def write_run(name, opt_name, options, groups, schedule, clip, dtype):
    model = make_model(dtype)
    named = list(model.named_parameters())
    if groups is None:
        param_groups = [dict(params=[p for _, p in named])]
        group_of = {n: 0 for n, _ in named}
        order = [n for n, _ in named]
    else:
        param_groups, group_of, order = [], {}, []
        for g, (which, overrides) in enumerate(groups):
            members = [(n, p) for n, p in named if (n in NO_DECAY) == (which == "no_decay")]
            param_groups.append(dict(params=[p for _, p in members], **overrides))
            for n, _ in members:
                group_of[n] = g
                order.append(n)
    opt = OPTIMIZERS[opt_name](param_groups, **options)
    scheduler = make_scheduler(opt, schedule)
    by_name = dict(named)

    out = []
    out.append("# %s: torch.optim.%s%s, generated by make_optim_goldens.py; do not edit"
               % (name, opt_name, "" if groups is None else " with parameter groups"))
    out.append(text_line("optimizer", opt_name))
    d = opt.defaults
    keys = ["lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"] \
        if opt_name == "SGD" else ["lr", "eps", "weight_decay", "amsgrad", "maximize"]
    for k in keys:
        out.append(golden_line("option:" + k, float(d[k])))
    if opt_name != "SGD":
        out.append(golden_line("option:beta1", d["betas"][0]))
        out.append(golden_line("option:beta2", d["betas"][1]))
    for g, group in enumerate(opt.param_groups):
        lr = group.get("initial_lr", group["lr"])
        out.append(golden_line("group:%d" % g, [lr, group["weight_decay"]]))
    for n in order:
        out.append(golden_line("param:" + n, torch.tensor(group_of[n])))
    out.append(text_line("schedule", " ".join(
        hexf(a) if isinstance(a, float) else str(a) for a in schedule)))
    out.append(text_line("clip", " ".join("inf" if a == math.inf else
                                          (hexf(a) if isinstance(a, float) else str(a))
                                          for a in clip)))
    for n in order:
        out.append(golden_line("init:" + n, by_name[n]))
    x, target = X.to(dtype), TARGET.to(dtype)
    for step in range(1, STEPS + 1):
        k = "step:%02d:" % step
        out.append(golden_line(k + "lr", [group["lr"] for group in opt.param_groups]))
        opt.zero_grad()
        loss = ((model(x) - target) ** 2).mean()
        loss.backward()
        for n in order:
            out.append(golden_line(k + "grad:" + n, by_name[n].grad))
        if clip[0] == "norm":
            total = torch.nn.utils.clip_grad_norm_([by_name[n] for n in order], max_norm=clip[1],
                                                   norm_type=clip[2])
            out.append(golden_line(k + "norm", total))
        elif clip[0] == "value":
            torch.nn.utils.clip_grad_value_([by_name[n] for n in order], clip_value=clip[1])
        opt.step()
        if scheduler is not None:
            scheduler.step()
        for n in order:
            out.append(golden_line(k + "after:" + n, by_name[n]))
    suffix = "float32" if dtype == torch.float32 else "float64"
    path = os.path.join(HERE, "runs", "%s.%s.txt" % (name, suffix))
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


# --- schedules: the lr sequence of two groups (base lrs 0.1 and 0.03) for 60 epochs ------------
BOOK_INITIAL_LR, BOOK_PEAK_LR, BOOK_WARMUP, BOOK_TOTAL = 1e-4, 0.01, 20, 100
BOOK_MIN_LR = 0.1 * BOOK_INITIAL_LR


def book_lambda(base):
    # Appendix D's loop, as a factor of the peak lr: linear warm-up, then cosine to min_lr.
    def factor(step):
        if step < BOOK_WARMUP:
            lr = BOOK_INITIAL_LR + step * (BOOK_PEAK_LR - BOOK_INITIAL_LR) / BOOK_WARMUP
        else:
            progress = (step - BOOK_WARMUP) / (BOOK_TOTAL - BOOK_WARMUP)
            lr = BOOK_MIN_LR + (BOOK_PEAK_LR - BOOK_MIN_LR) * 0.5 * (1 + math.cos(math.pi * progress))
        return lr / BOOK_PEAK_LR
    return factor


SCHEDULES = [
    ("step_3_0.1", ("step", 3, 0.1)),
    ("step_7_0.5", ("step", 7, 0.5)),
    ("cosine_10", ("cosine", 10, 0.0)),
    ("cosine_25_min", ("cosine", 25, 1e-3)),
    ("linear_0.25_8", ("linear", 0.25, 1.0, 8)),
    ("linear_down", ("linear", 1.0, 0.1, 10)),
    ("warmup_cosine_10_50", ("warmup_cosine", 10, 50, 0.01, 1e-4)),
    ("warmup_cosine_book", ("warmup_cosine", BOOK_WARMUP, BOOK_TOTAL,
                            BOOK_INITIAL_LR / BOOK_PEAK_LR, BOOK_MIN_LR)),
    ("book_lambda", ("book",)),
]


def write_schedules():
    out = ["# lr sequences from torch.optim.lr_scheduler, generated by make_optim_goldens.py"]
    for name, spec in SCHEDULES:
        bases = [0.1, 0.03] if spec[0] != "book" and name != "warmup_cosine_book" else [0.01, 0.01]
        p = [torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))]
        opt = torch.optim.SGD([dict(params=[p[0]], lr=bases[0]), dict(params=[p[1]], lr=bases[1])],
                              lr=bases[0])
        kind = spec[0]
        if kind == "linear":
            sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=spec[1], end_factor=spec[2],
                                                      total_iters=spec[3])
        elif kind == "book":
            sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda=book_lambda(bases[0]))
        else:
            sched = make_scheduler(opt, spec)
        out.append(text_line("schedule:" + name, " ".join(
            hexf(a) if isinstance(a, float) else str(a) for a in spec)))
        out.append(golden_line("base:" + name, bases))
        lrs = []
        for epoch in range(0, 61):
            if epoch > 0:
                opt.step()
                sched.step()
            lrs.append([opt.param_groups[0]["lr"], opt.param_groups[1]["lr"]])
        out.append(golden_line("lrs:" + name, lrs))
    with open(os.path.join(HERE, "schedules.txt"), "w") as f:
        f.write("\n".join(out) + "\n")


def write_model_inputs():
    with open(os.path.join(HERE, "model_inputs.txt"), "w") as f:
        f.write("# the attention model's input and target (float32), from make_optim_goldens.py\n")
        for name, t in (("x", X), ("target", TARGET)):
            f.write(golden_line(name, t) + "\n")


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")  # SequentialLR's deprecated step(0) warning
    os.makedirs(os.path.join(HERE, "runs"), exist_ok=True)
    write_model_inputs()
    for run in RUNS:
        for dtype in (torch.float32, torch.float64):
            write_run(*run, dtype)
    write_schedules()
    print("wrote %d runs and schedules.txt" % (2 * len(RUNS)))
