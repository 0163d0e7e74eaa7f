// tapegrad-bench's fine-tuning workloads (finetune-124m, lora-124m): one step of the book's
// chapter-6 recipe and of appendix E's LoRA on GPT_CONFIG_124M against PyTorch eager.
#pragma once

#include <string>
#include <vector>

namespace tapegrad_bench {

// True for "finetune-124m", "lora-124m" and "full-124m" (every parameter trainable), and their
// "-bf16" variants (the products on bfloat16 operands, against torch.autocast).
bool is_finetune_workload(const std::string& name);

// The worker side ("--worker tapegrad-finetune --workload NAME --threads N --steps K"): one
// process running the step on request, the protocol of bench.cpp's step workers.
int finetune_worker_main(const std::vector<std::string>& args);

// The parent side: each workload named, at each thread count, tapegrad against PyTorch eager
// (default and tuned malloc) interleaved; prints the rows, the ratios against the targets and
// the cost of a LoRA step against a full fine-tuning step and a chapter-6 step.
int run_finetune_workloads(const std::vector<std::string>& names, const std::vector<int>& threads,
                           double sample_factor);

}  // namespace tapegrad_bench
