// tapegrad-bench's convolution workloads (conv2d-resnet, cnn-step): a ResNet-sized conv2d layer's
// forward and backward, and the training step of examples/cnn.cpp's small CNN, against LibTorch
// (the plugin) and PyTorch eager (tools/bench/torch_cnn.py).
#pragma once

#include <string>
#include <vector>

namespace tapegrad_bench {

// True for "conv2d-resnet" and "cnn-step".
bool is_cnn_workload(const std::string& name);

// The worker side ("--worker tapegrad-cnn --workload NAME --threads N --steps K", or "--worker
// torch-cnn ... --plugin PATH --channels-last 0|1" for LibTorch): one process running the step on
// request, the protocol of bench.cpp's step workers.
int cnn_worker_main(const std::vector<std::string>& args);

// The parent side: each workload named, at each thread count, tapegrad against LibTorch (when
// torch_plugin is not null; NCHW and channels_last) and PyTorch eager, each with the default and
// the tuned malloc, interleaved; prints the rows and the ratios against the targets (LibTorch's
// fastest run, or PyTorch's without LibTorch).
int run_cnn_workloads(const std::vector<std::string>& names, const std::vector<int>& threads,
                      double sample_factor, const char* torch_plugin);

}  // namespace tapegrad_bench
