#!/usr/bin/python3
# The PyTorch-eager peer of tapegrad-bench's GPT workloads: full training steps of the book's GPT.
#
# The model is the GPTModel of Sebastian Raschka's "Build a Large Language Model (From Scratch)",
# chapter 4 (https://github.com/rasbt/LLMs-from-scratch, ch04/01_main-chapter-code/gpt.py,
# Apache License 2.0), as tests/goldens/gpt/gpt_reference.py restates it for the goldens: the
# same modules, parameters and operations in the same order (so the same kernels run).
#
# One step: forward, cross-entropy over the flattened logits, backward, clip_grad_norm_(1.0),
# AdamW. Prints the median step time, peak RSS, the loss at step 1 and at the last step, the
# BLAS torch ran on and the malloc settings.
#
#   /usr/bin/python3 tools/bench/torch_gpt.py --workload gpt-tiny --threads 1 --steps 20
#   /usr/bin/python3 tools/bench/torch_gpt.py --workload gpt2-124m --malloc tuned
#
# gpt-tiny-bf16 and gpt2-124m-bf16: the same step with the forward and the loss under
# torch.autocast("cpu", bfloat16) and the backward outside, as torch users write it (tapegrad's
# side runs set_matmul_precision(BFloat16)).
#
# The fine-tuning workloads (finetune-124m, lora-124m, full-124m and their -bf16 variants;
# tools/bench/finetune_workload.cpp): one step of the book's chapter-6 recipe (GPT_CONFIG_124M
# with qkv_bias, out_head a new Linear(768, 2), everything frozen but the last block, the final
# norm and the head) or of appendix E's (the same head, everything frozen, then
# replace_linear_with_lora rank 16 alpha 16): calc_loss_batch on the last token, backward,
# AdamW(model.parameters(), 5e-5, weight decay 0.1), as the book's train_classifier_simple steps
# (no clipping). full-124m: every parameter trainable (full fine-tuning with the new head), what
# a LoRA step is compared with. The LoRA classes and calc_loss_batch come from
# tests/goldens/finetune/finetune_reference.py.
#
# --serve: the worker of tapegrad-bench's GPT workloads (tools/bench/gpt_workload.cpp): prints
# "ready <init checksum> <sgemm 1024^3 GFLOP/s> <bf16 mm 1024^3 GFLOP/s, 0 for float32
# workloads> <info>", then for each "s" on stdin runs --steps
# steps and prints "<seconds> <first loss> <last loss> -1 <CPU seconds> <main thread's CPU seconds>"
# (-1: allocations are not counted here), and for "q" prints its peak RSS (VmHWM, KiB) and exits.
#
# BLAS: Debian's torch links libblas.so.3, i.e. whatever the system alternative selects (the
# reference BLAS on the machines that make tapegrad's goldens). With --blas openblas (the
# default) the script runs itself again with OpenBLAS's libblas.so.3 preloaded, so torch runs on
# OpenBLAS with the kernels for this CPU, without changing the system alternative; it then
# checks that OpenBLAS is mapped and reports its core name. --malloc tuned likewise sets glibc's
# malloc to keep its memory (no mmap/munmap of large buffers every step), as a careful user would.
import argparse
import ctypes
import math
import os
import resource
import statistics
import sys
import time

OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"
MALLOC_TUNED = {
    "MALLOC_MMAP_THRESHOLD_": "4294967296",
    "MALLOC_TRIM_THRESHOLD_": "4294967296",
    "MALLOC_TOP_PAD_": "1073741824",
}

WORKLOADS = {
    # vocab 256, context 64, emb 64, 4 heads, 2 layers, batch 16, dropout 0.1 (T = context)
    "gpt-tiny": dict(cfg=dict(vocab_size=256, context_length=64, emb_dim=64, n_heads=4,
                              n_layers=2, drop_rate=0.1, qkv_bias=False), batch=16, T=64),
    # the book's GPT_CONFIG_124M (untied output head: 163M parameters), batch 4, T 64
    "gpt2-124m": dict(cfg=dict(vocab_size=50257, context_length=1024, emb_dim=768, n_heads=12,
                               n_layers=12, drop_rate=0.1, qkv_bias=False), batch=4, T=64),
}
# The "-bf16" variants run the step's forward under torch.autocast("cpu", bfloat16).
WORKLOADS = {name + suffix: dict(w, bf16=suffix == "-bf16")
             for name, w in WORKLOADS.items() for suffix in ("", "-bf16")}
# A Hessian-vector product of the loss w.r.t. every parameter in place of a training step:
# torch.autograd.grad(loss, params, create_graph=True), then grad of Σ g·v.
WORKLOADS["gpt-tiny-hvp"] = dict(WORKLOADS["gpt-tiny"], hvp=True)

# The generation workloads (--generate): the book's KV-cache GPT (ch04/03_kv-cache, optimized
# variant) in eval mode, greedy, a prompt of `prompt` tokens then `new` tokens one at a time.
GENERATE_WORKLOADS = {
    "generate-124m": dict(cfg=WORKLOADS["gpt2-124m"]["cfg"]),
    # GPT-2 medium's shapes (untied output head)
    "generate-355m": dict(cfg=dict(vocab_size=50257, context_length=1024, emb_dim=1024,
                                   n_heads=16, n_layers=24, drop_rate=0.1, qkv_bias=False)),
    # The book's Qwen3 with its KV cache (kv_cache/qwen3.py, tools/bench/qwen3_kv_reference.py),
    # QWEN_CONFIG_06_B in float32. context_length 128 instead of 40960: the book's cache takes
    # [1, 16, context_length, 128] float32 keys and values per layer up front (18.8 GB at 40960);
    # the rope rows below 128 are the same numbers.
    "generate-qwen3-0.6b": dict(qwen3=True, cfg=dict(
        vocab_size=151_936, context_length=128, emb_dim=1024, n_heads=16, n_layers=28,
        hidden_dim=3072, head_dim=128, qk_norm=True, n_kv_groups=8, rope_base=1_000_000.0)),
}


# The fine-tuning workloads: the book's chapter-6 BASE_CONFIG (124M, qkv_bias, no dropout),
# batch 8 of 120 tokens, AdamW's lr and weight decay from chapter 6 and appendix E.
# The "-bf16" variants run the step's forward under torch.autocast("cpu", bfloat16).
FINETUNE_WORKLOADS = {
    name + suffix: dict(cfg=dict(WORKLOADS["gpt2-124m"]["cfg"], drop_rate=0.0, qkv_bias=True),
                        batch=8, T=120, lr=5e-5, weight_decay=0.1, recipe=recipe,
                        bf16=suffix == "-bf16")
    for name, recipe in (("finetune-124m", "chapter6"), ("lora-124m", "lora"),
                         ("full-124m", "full"))
    for suffix in ("", "-bf16")
}

# The Qwen3 training-step workloads (tools/bench/qwen3_step_workload.cpp): the book's Qwen3Model
# (qwen3_kv_reference.py, use_cache=False: the book's qwen3.py forward) with QWEN_CONFIG_06_B in
# float32 from manual_seed(123), one fixed batch of 2 x 256 tokens, cross-entropy over the
# flattened logits, backward, AdamW (lr 4e-4, weight decay 0.1, torch's betas and eps): the
# book's train_model_simple step, no clipping. "-bf16": the forward and the loss under
# torch.autocast("cpu", bfloat16), the backward outside.
QWEN3_STEP_WORKLOADS = {
    "qwen3-0.6b-step" + suffix: dict(
        cfg=dict(GENERATE_WORKLOADS["generate-qwen3-0.6b"]["cfg"], context_length=40_960),
        batch=2, T=256, bf16=suffix == "-bf16")
    for suffix in ("", "-bf16")
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workload", default="gpt-tiny",
                   choices=sorted(WORKLOADS) + sorted(GENERATE_WORKLOADS) +
                   sorted(FINETUNE_WORKLOADS) + sorted(QWEN3_STEP_WORKLOADS))
    p.add_argument("--generate", action="store_true",
                   help="time greedy generation with the KV cache (generate-* workloads)")
    p.add_argument("--prompt-ids", default="", help="--generate: the prompt, as 1,2,3")
    p.add_argument("--new-tokens", type=int, default=32, help="--generate: tokens per run")
    p.add_argument("--reps", type=int, default=3, help="--generate: timed runs (one warm-up first)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=None, help="timed steps (default 20 tiny, 6 124m)")
    p.add_argument("--warmup", type=int, default=1, help="untimed steps first")
    p.add_argument("--seed", type=int, default=123)
    p.add_argument("--lr", type=float, default=4e-4)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--blas", choices=["openblas", "system"], default="openblas")
    p.add_argument("--malloc", choices=["default", "tuned"], default="default")
    p.add_argument("--serve", action="store_true", help="tapegrad-bench's worker protocol")
    p.add_argument("--openblas-core", default="auto",
                   help="OPENBLAS_CORETYPE to force; auto: the environment's OPENBLAS_CORETYPE "
                        "when set (a peer limited to a CPU level, as tapegrad-bench "
                        "--keep-openblas-env passes it on), else SkylakeX on CPUs with AVX-512 "
                        "(F, BW, DQ, VL), which OpenBLAS 0.3.21 does not detect on AMD Zen 4 "
                        "and serves with its AVX2 (Haswell) kernels; 'detect': OpenBLAS's choice")
    return p.parse_args()


def reexec_if_needed(args):
    """Runs the script again with the environment the options ask for (read at process start)."""
    env = dict(os.environ)
    want = {}
    if args.blas == "openblas":
        if not os.path.exists(OPENBLAS):
            sys.exit(f"torch_gpt.py: {OPENBLAS} not found: apt-get install libopenblas0-pthread")
        want["LD_PRELOAD"] = OPENBLAS
        core = args.openblas_core
        if core == "auto" and os.environ.get("OPENBLAS_CORETYPE"):
            core = os.environ["OPENBLAS_CORETYPE"]
        elif core == "auto":
            with open("/proc/cpuinfo") as f:
                flags = next((line.split() for line in f if line.startswith("flags")), [])
            core = "SkylakeX" if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= set(flags) \
                else "detect"
        if core != "detect":
            want["OPENBLAS_CORETYPE"] = core
    if args.malloc == "tuned":
        want.update(MALLOC_TUNED)
    # Threads: torch's intra-op pool and OpenBLAS's own pool the same size, and both pools'
    # threads asleep soon after their work (OpenMP's passive; OpenBLAS's after 2^4 cycles, not
    # 2^28), so they do not spin against each other: with libgomp's default spinning, 2 threads
    # ran the GPT steps 10-20x slower than 1 on a loaded 2-core machine.
    want["OMP_WAIT_POLICY"] = "PASSIVE"
    want["OPENBLAS_THREAD_TIMEOUT"] = "4"
    want["OMP_NUM_THREADS"] = str(args.threads)
    want["OPENBLAS_NUM_THREADS"] = str(args.threads)
    want["MKL_NUM_THREADS"] = str(args.threads)
    if all(env.get(k) == v for k, v in want.items()):
        if args.malloc == "default":
            for k in MALLOC_TUNED:
                if k in env:
                    sys.exit(f"torch_gpt.py: --malloc default but {k} is set in the environment")
        return
    env.update(want)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def blas_report():
    """Which BLAS the process mapped, and OpenBLAS's core (kernel set) when it is OpenBLAS."""
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    name = "unknown"
    for lib in sorted(libs):
        if "openblas" in lib:
            try:
                handle = ctypes.CDLL(lib)
                handle.openblas_get_corename.restype = ctypes.c_char_p
                handle.openblas_get_config.restype = ctypes.c_char_p
                name = (f"OpenBLAS ({lib}; core {handle.openblas_get_corename().decode()}; "
                        f"{handle.openblas_get_config().decode()})")
            except (OSError, AttributeError):
                name = f"OpenBLAS ({lib})"
            break
    else:
        if libs:
            name = "system BLAS (" + ", ".join(sorted(libs)) + ")"
    return name


def aten_capability(torch):
    """ATen's vectorised kernels in use (ATEN_CPU_CAPABILITY forces a lower set): "AVX2", ..."""
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            return line.split(":", 1)[1].strip()
    return "unknown"


def gemm_gflops(torch, n, dtype=None):
    """An n³ product's speed, best of 5: float32 tells the reference BLAS (~1-3) from OpenBLAS
    (tens); bfloat16 (torch's bf16 mm, oneDNN's where torch has it, its operands already bf16) is
    the bf16 peak the -bf16 workloads' steps are measured against."""
    gen = torch.Generator().manual_seed(0)  # not the default generator: dropout draws from it
    a = torch.randn(n, n, generator=gen)
    b = torch.randn(n, n, generator=gen)
    if dtype is not None:
        a, b = a.to(dtype), b.to(dtype)
    a @ b
    best = math.inf
    for _ in range(5):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best / 1e9



def bf16_autocast(torch, enabled):
    """The -bf16 workloads' forward: torch.autocast on the CPU in bfloat16 (off: a no-op)."""
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=enabled)


AUTOCAST_INFO = "forward under torch.autocast(cpu, bfloat16)"


def use_reference_models():
    """Puts tests/goldens/gpt (gpt_reference.py, gpt_kv_reference.py: the one Python copy of the
    book's GPT, which the goldens are made with) on the path; import them after the re-exec, since
    they import torch."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "tests", "goldens", "gpt"))


def build_model():
    """The book's GPTModel (gpt_reference.py)."""
    use_reference_models()
    from gpt_reference import GPTModel
    return GPTModel


def build_finetune(args, torch):
    """A fine-tuning workload's model (random weights, seed 123), optimiser, batch and step, as
    the book's chapter 6 and appendix E set them up."""
    w = FINETUNE_WORKLOADS[args.workload]
    cfg = w["cfg"]
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "tests", "goldens", "finetune"))
    from finetune_reference import calc_loss_batch, replace_linear_with_lora
    torch.manual_seed(args.seed)
    model = build_model()(cfg)
    if w["recipe"] == "full":  # every parameter trainable, the new head
        torch.manual_seed(123)
        model.out_head = torch.nn.Linear(in_features=cfg["emb_dim"], out_features=2)
    elif w["recipe"] == "chapter6":  # freeze, new head, then the last block and norm trainable
        for param in model.parameters():
            param.requires_grad = False
        torch.manual_seed(123)
        model.out_head = torch.nn.Linear(in_features=cfg["emb_dim"], out_features=2)
        for param in model.trf_blocks[-1].parameters():
            param.requires_grad = True
        for param in model.final_norm.parameters():
            param.requires_grad = True
    else:  # appendix E: new head, freeze everything, then the adapters
        torch.manual_seed(123)
        model.out_head = torch.nn.Linear(in_features=cfg["emb_dim"], out_features=2)
        for param in model.parameters():
            param.requires_grad = False
        replace_linear_with_lora(model, rank=16, alpha=16)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=w["lr"], weight_decay=w["weight_decay"])
    # One fixed batch: torch.randint's tokens (as the GPT workloads), the label of each row the
    # parity of its extra last token.
    gen = torch.Generator().manual_seed(args.seed)
    tokens = torch.randint(0, cfg["vocab_size"], (w["batch"], w["T"] + 1), generator=gen)
    inputs, labels = tokens[:, :-1], tokens[:, -1] % 2

    def step():
        optimizer.zero_grad()
        with bf16_autocast(torch, w["bf16"]):
            loss = calc_loss_batch(inputs, labels, model)
        loss.backward()
        optimizer.step()
        return loss.item()

    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    autocast = "; " + AUTOCAST_INFO if w["bf16"] else ""
    return model, step, f"{total} parameters, {trainable} trainable{autocast}", w["bf16"]


def build_qwen3_step(args, torch):
    """A Qwen3 training-step workload's model (the book's Qwen3Model, float32, seed 123) and step:
    the book's train_model_simple step on one fixed batch of torch.randint's tokens."""
    w = QWEN3_STEP_WORKLOADS[args.workload]
    cfg = w["cfg"]
    from qwen3_kv_reference import Qwen3Model
    torch.manual_seed(args.seed)
    model = Qwen3Model(dict(cfg, dtype=torch.float32))
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    gen = torch.Generator().manual_seed(args.seed)
    tokens = torch.randint(0, cfg["vocab_size"], (w["batch"], w["T"] + 1), generator=gen)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]

    def step():
        optimizer.zero_grad()
        with bf16_autocast(torch, w["bf16"]):
            logits = model(inputs)  # [B, T, V]
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
        loss.backward()
        optimizer.step()
        return loss.item()

    total = sum(p.numel() for p in model.parameters())
    autocast = "; " + AUTOCAST_INFO if w["bf16"] else ""
    return model, step, f"book's Qwen3Model, {total} parameters{autocast}", w["bf16"]


def run_generate(args, torch):
    """--generate: the book's generate_text_simple_cached, prefill and decode timed apart."""
    w = GENERATE_WORKLOADS[args.workload]
    cfg = w["cfg"]
    torch.manual_seed(args.seed)
    if w.get("qwen3"):
        from qwen3_kv_reference import Qwen3Model  # tapegrad's Qwen3Model's weights, same seed
        model = Qwen3Model(dict(cfg, dtype=torch.float32))
        model.eval()
        forward = lambda ids: model(ids, use_cache=True)  # noqa: E731
    else:
        use_reference_models()
        from gpt_kv_reference import KVGPTModel  # GPTModel's weights after the same seed
        model = KVGPTModel(cfg, cfg["context_length"])
        model.eval()
        forward = model
    prompt = torch.tensor([[int(i) for i in args.prompt_ids.split(",")]])
    prefill, decode, ids = [], [], None
    with torch.no_grad():
        for rep in range(1 + args.reps):
            t0 = time.perf_counter()
            model.reset_kv_cache()
            logits = forward(prompt)
            idx = torch.cat([prompt, logits[:, -1].argmax(dim=-1, keepdim=True)], dim=1)
            t1 = time.perf_counter()
            for _ in range(args.new_tokens - 1):
                logits = forward(idx[:, -1:])
                idx = torch.cat([idx, logits[:, -1].argmax(dim=-1, keepdim=True)], dim=1)
            t2 = time.perf_counter()
            if rep > 0:
                prefill.append(t1 - t0)
                decode.append(t2 - t1)
            ids = idx[0, prompt.shape[1]:].tolist()
    print("ids " + ",".join(str(i) for i in ids))
    print("prefill_seconds " + " ".join(f"{t:.9g}" for t in prefill))
    print("decode_seconds " + " ".join(f"{t:.9g}" for t in decode))
    print(f"peak_rss_kib {peak_rss_kib()}")
    print(f"info PyTorch eager {torch.__version__} ({blas_report()}; ATen CPU capability "
          f"{aten_capability(torch)}; {args.malloc} malloc)",
          flush=True)


def main():
    args = parse_args()
    reexec_if_needed(args)
    import torch

    if args.generate:
        torch.set_num_threads(args.threads)
        run_generate(args, torch)
        return

    torch.set_num_threads(args.threads)
    if args.workload in FINETUNE_WORKLOADS:
        model, step, counts, bf16 = build_finetune(args, torch)
        if not args.serve:
            sys.exit("torch_gpt.py: the fine-tuning workloads run only with --serve")
        serve(args, torch, model, step, counts, bf16)
        return
    if args.workload in QWEN3_STEP_WORKLOADS:
        if not args.serve:
            sys.exit("torch_gpt.py: the Qwen3 training-step workloads run only with --serve")
        model, step, counts, bf16 = build_qwen3_step(args, torch)
        serve(args, torch, model, step, counts, bf16)
        return
    w = WORKLOADS[args.workload]
    cfg, batch, T = w["cfg"], w["batch"], w["T"]
    steps = args.steps or (20 if args.workload.startswith("gpt-tiny") else 6)

    torch.manual_seed(args.seed)
    model = build_model()(cfg)
    model.train()
    n_params = sum(p.numel() for p in model.parameters())
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    # One fixed batch of random tokens (inputs and next-token targets), reused every step.
    gen = torch.Generator().manual_seed(args.seed)
    tokens = torch.randint(0, cfg["vocab_size"], (batch, T + 1), generator=gen)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]

    params = list(model.parameters())
    v_gen = torch.Generator().manual_seed(args.seed + 1)
    vs = [torch.rand(p.shape, generator=v_gen) * 2 - 1 for p in params]

    def hvp_step():
        logits = model(inputs)  # [B, T, V]
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
        grads = torch.autograd.grad(loss, params, create_graph=True)
        dot = sum((g * v).sum() for g, v in zip(grads, vs))
        torch.autograd.grad(dot, params)
        return loss.item()

    def step():
        if w.get("hvp"):
            return hvp_step()
        optimizer.zero_grad()
        with bf16_autocast(torch, w["bf16"]):
            logits = model(inputs)  # [B, T, V]
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        return loss.item()

    if args.serve:
        serve(args, torch, model, step, AUTOCAST_INFO if w["bf16"] else "", w["bf16"])
        return

    # Wall time is what the benchmark compares; CPU time (this process, all threads) is printed
    # too, since on a shared machine it shows how much of the wall time was spent waiting.
    losses, times, cpu_times = [], [], []
    for i in range(args.warmup + steps):
        t0, c0 = time.perf_counter(), time.process_time()
        loss = step()
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        losses.append(loss)
        if i >= args.warmup:
            times.append(elapsed)
            cpu_times.append(cpu)

    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    malloc = "tuned (" + " ".join(f"{k}={os.environ[k]}" for k in MALLOC_TUNED) + ")" \
        if args.malloc == "tuned" else "default"
    print(f"workload {args.workload}: batch {batch}, T {T}, {n_params} parameters, "
          f"torch {torch.__version__}, {args.threads} thread(s)")
    print(f"blas: {blas_report()}; sgemm 512^3 {gemm_gflops(torch, 512):.1f} GFLOP/s")
    print(f"malloc: {malloc}")
    print("step times (ms): " + " ".join(f"{t * 1e3:.1f}" for t in times))
    print("step CPU times (ms): " + " ".join(f"{t * 1e3:.1f}" for t in cpu_times))
    print(f"PyTorch eager {args.workload} [{args.malloc} malloc]: median "
          f"{statistics.median(times) * 1e3:.2f} ms/step (CPU "
          f"{statistics.median(cpu_times) * 1e3:.2f} ms), min {min(times) * 1e3:.2f} ms, "
          f"peak RSS {peak_rss_mb:.0f} MB, loss step 1 {losses[0]:.6f}, "
          f"last (step {len(losses)}) {losses[-1]:.6f}")


def peak_rss_kib():
    with open("/proc/self/status") as f:
        return int(next(line.split()[1] for line in f if line.startswith("VmHWM:")))


def serve(args, torch, model, step, counts="", bf16=False):
    """tapegrad-bench's worker protocol (see the header)."""
    steps = args.steps or 1
    gflops = gemm_gflops(torch, 1024)
    bf16_gflops = gemm_gflops(torch, 1024, torch.bfloat16) if bf16 else 0
    checksum = sum(p.detach().double().sum().item() for p in model.parameters())
    print(f"ready {checksum!r} {gflops:.6g} {bf16_gflops:.6g} PyTorch eager {torch.__version__} "
          f"({blas_report()}; ATen CPU capability {aten_capability(torch)}; {args.malloc} malloc"
          f"{'; ' + counts if counts else ''})", flush=True)
    for line in sys.stdin:
        if line.startswith("q"):
            print(peak_rss_kib(), flush=True)
            return
        t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
        first = last = None
        for i in range(steps):
            last = step()
            if i == 0:
                first = last
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        main_cpu = time.thread_time() - m0
        print(f"{elapsed:.9g} {first!r} {last!r} -1 {cpu:.9g} {main_cpu:.9g}", flush=True)


if __name__ == "__main__":
    main()
