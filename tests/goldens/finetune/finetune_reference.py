"""The book's fine-tuning code in Python, once: appendix E's LoRALayer, LinearWithLoRA and
replace_linear_with_lora (rasbt/LLMs-from-scratch, appendix-E/01_main-chapter-code, Apache
License 2.0) and chapter 6's calc_loss_batch (ch06/01_main-chapter-code), as the book writes
them. Imported by make_finetune_goldens.py (the goldens) and tools/bench/torch_gpt.py (the
benchmark's PyTorch peer)."""
import math

import torch


class LoRALayer(torch.nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = torch.nn.Parameter(torch.empty(in_dim, rank))
        torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = torch.nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha
        self.rank = rank

    def forward(self, x):
        return (self.alpha / self.rank) * (x @ self.A @ self.B)


class LinearWithLoRA(torch.nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        return self.linear(x) + self.lora(x)


def replace_linear_with_lora(model, rank, alpha):
    for name, module in model.named_children():
        if isinstance(module, torch.nn.Linear):
            setattr(model, name, LinearWithLoRA(module, rank, alpha))
        else:
            replace_linear_with_lora(module, rank, alpha)


def calc_loss_batch(input_batch, target_batch, model):
    logits = model(input_batch)[:, -1, :]  # Logits of last output token
    return torch.nn.functional.cross_entropy(logits, target_batch)
