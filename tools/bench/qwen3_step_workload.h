// tapegrad-bench's Qwen3 training-step workloads (qwen3-0.6b-step, qwen3-0.6b-step-bf16): one
// AdamW step of nn::Qwen3Model with the real 0.6B config against PyTorch eager running the book's
// Qwen3Model, the engines one after the other (each holds about 13 GB).
#pragma once

#include <string>
#include <vector>

namespace tapegrad_bench {

// True for "qwen3-0.6b-step" and "qwen3-0.6b-step-bf16" (tapegrad's products on bfloat16
// operands, against PyTorch's forward under torch.autocast).
bool is_qwen3_step_workload(const std::string& name);

// The worker side ("--worker tapegrad-qwen3-step --workload NAME --threads N --steps K"): one
// process running the step on request, the protocol of bench.cpp's step workers.
int qwen3_step_worker_main(const std::vector<std::string>& args);

// The parent side: each workload named, at each thread count, tapegrad and then PyTorch eager
// (tuned malloc), never both alive at once; prints the rows, the checks and the ratio.
int run_qwen3_step_workloads(const std::vector<std::string>& names, const std::vector<int>& threads,
                             double sample_factor);

}  // namespace tapegrad_bench
