// The tapegrad engine of the benchmark (its step mirrors the LibTorch plugin's).
#pragma once

#include <cstddef>
#include <memory>

#include "tools/bench/workload.h"

namespace tapegrad_bench {

class TapegradEngine {
 public:
  // Which ops the attention core is recorded with.
  enum class Path {
    Composed,       // split_heads, matmul, transpose, causal_mask, div_scalar, softmax, matmul,
                    // merge_heads: the book's ops
    CausalSoftmax,  // the same with causal_mask, div_scalar, softmax fused (causal_softmax)
    Attention,      // split_heads .. merge_heads as one op (causal_attention on [B, T, C])
  };
  // openblas: products on OpenBLAS (set_gemm_backend), else on Eigen (whatever the default).
  TapegradEngine(const tgb_shape& shape, int threads, Path path, bool openblas = false);
  ~TapegradEngine();
  double checksum() const;  // Σ of x and every parameter after init
  double step();            // one training step; returns its loss (before the update)
  size_t arena_bytes() const;
  static const char* path_name(Path path);

 private:
  struct State;
  tgb_shape shape_;
  Path path_;
  std::unique_ptr<State> state_;
};

}  // namespace tapegrad_bench
