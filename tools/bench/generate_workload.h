// tapegrad-bench's generation workloads (generate-124m, generate-124m-bf16, generate-355m,
// generate-qwen3-0.6b, generate-qwen3-0.6b-bf16):
// greedy generation with the KV cache, prefill and decode tokens/s, against PyTorch eager running
// the book's KV-cache GPT (tools/bench/torch_gpt.py --generate), with the machine's read
// bandwidth as the bound; generate-124m-bf16 adds tapegrad with bfloat16 linear weights.
#pragma once

#include <string>
#include <vector>

namespace tapegrad_bench {

// The worker side, this program run as "--worker tapegrad-generate --workload NAME --threads N
// --dtype float32|bf16" (the timed generations) or "--worker read-bandwidth --threads N": prints
// its report on stdout.
int generate_worker_main(const std::vector<std::string>& args);

// True for "generate-124m", "generate-124m-bf16", "generate-355m", "generate-qwen3-0.6b" and
// "generate-qwen3-0.6b-bf16".
bool is_generate_workload(const std::string& name);

// Runs each generation workload named at each thread count (tapegrad and PyTorch, each in a
// process of its own, same weights and prompt, ids compared), measures the read bandwidth at
// each thread count, and prints the rows with each row's share of the bandwidth bound.
int run_generate_workloads(const std::vector<std::string>& names, const std::vector<int>& threads);

}  // namespace tapegrad_bench
