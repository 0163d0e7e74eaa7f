// tapegrad-bench's convolution workloads (conv2d-resnet, cnn-step): a ResNet-sized conv2d layer's
// forward and backward, and the training step of examples/cnn.cpp's small CNN, against PyTorch
// eager (tools/bench/torch_cnn.py).
#pragma once

#include <string>
#include <vector>

namespace tapegrad_bench {

// True for "conv2d-resnet" and "cnn-step".
bool is_cnn_workload(const std::string& name);

// The worker side ("--worker tapegrad-cnn --workload NAME --threads N --steps K"): one process
// running the step on request, the protocol of bench.cpp's step workers.
int cnn_worker_main(const std::vector<std::string>& args);

// The parent side: each workload named, at each thread count, tapegrad against PyTorch eager
// (default and tuned malloc) interleaved; prints the rows and the ratios against the targets.
int run_cnn_workloads(const std::vector<std::string>& names, const std::vector<int>& threads,
                      double sample_factor);

}  // namespace tapegrad_bench
