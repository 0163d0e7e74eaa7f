// The options bench.cpp passes to a worker process ("--key value" pairs after "--worker"): one
// parse for every workload's worker.
#pragma once

#include <string>
#include <vector>

namespace tapegrad_bench {

struct WorkerArgs {
  std::string engine;          // --worker: which engine the process runs
  std::string workload;        // --workload
  std::string plugin;          // --plugin: the LibTorch plugin's path
  int threads = 1;             // --threads
  int steps = 1;               // --steps
  bool gemm_peak = true;       // "--gemm-peak 0" skips it (for profiling the steps alone)
  bool channels_last = false;  // "--channels-last 1": the convolutions' memory format
  bool bf16 = false;           // "--dtype bf16": generation's bfloat16 weights
};

inline WorkerArgs parse_worker_args(const std::vector<std::string>& args) {
  WorkerArgs a;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& key = args[i];
    const std::string& value = args[i + 1];
    if (key == "--worker") a.engine = value;
    if (key == "--workload") a.workload = value;
    if (key == "--plugin") a.plugin = value;
    if (key == "--threads") a.threads = std::stoi(value);
    if (key == "--steps") a.steps = std::stoi(value);
    if (key == "--gemm-peak") a.gemm_peak = value != "0";
    if (key == "--channels-last") a.channels_last = value != "0";
    if (key == "--dtype") a.bf16 = value == "bf16";
  }
  return a;
}

}  // namespace tapegrad_bench
