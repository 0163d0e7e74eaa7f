// tapegrad-bench's GPT workloads (gpt-tiny, gpt2-124m): a full training step of the library's
// nn::GPTModel against LibTorch (the plugin) and PyTorch eager (tools/bench/torch_gpt.py),
// interleaved in one run.
#pragma once

#include <string>
#include <vector>

namespace tapegrad_bench {

// True for the names of the GPT workloads ("gpt-tiny", "gpt2-124m").
bool is_gpt_workload(const std::string& name);

// The worker side ("--worker tapegrad-gpt --workload NAME --threads N --steps K", or
// "--worker torch-gpt ... --plugin PATH" for LibTorch): one process running the step on request,
// the protocol of bench.cpp's step workers.
int gpt_worker_main(const std::vector<std::string>& args);

// The parent side: runs each GPT workload named, at each thread count, with tapegrad and the
// peers (LibTorch when torch_plugin is not null, and PyTorch eager; each with default and tuned
// malloc) interleaved, and prints the rows and ratios. A non-empty `baseline` is another build
// of tapegrad-bench (e.g. of an older commit) whose tapegrad worker runs beside them, labelled
// baseline, with its own ratio line.
int run_gpt_workloads(const std::vector<std::string>& names, const std::vector<int>& threads,
                      double sample_factor, const char* torch_plugin,
                      const std::string& baseline = "");

}  // namespace tapegrad_bench
