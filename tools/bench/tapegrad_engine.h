// The tapegrad engine of the benchmark (its step mirrors the LibTorch plugin's).
#pragma once

#include <cstddef>
#include <memory>

#include "tools/bench/workload.h"

namespace tapegrad_bench {

// One attention training step as a user runs it: nn::MultiHeadAttention (the book's module, in
// training mode, with dropout p), mean(out²), backward, the library's SGD, on the library's
// default GEMM backend. (Built against an older tapegrad, TAPEGRAD_BENCH_COMPOSED_ONLY, the
// book's ops one by one on plain weights instead, for --baseline timings.)
class TapegradEngine {
 public:
  TapegradEngine(const tgb_shape& shape, int threads);
  ~TapegradEngine();
  double checksum() const;  // Σ of x and every parameter after init
  double step();            // one training step; returns its loss (before the update)
  size_t arena_bytes() const;

 private:
  struct State;
  tgb_shape shape_;
  std::unique_ptr<State> state_;
};

}  // namespace tapegrad_bench
