// The benchmark's workloads (shapes of one causal multi-head self-attention training step, run
// through the book's MultiHeadAttention module in training mode, once per dropout setting), their
// matmul FLOPs, and the C interface every engine (tapegrad, the LibTorch plugin) implements.
#pragma once

#include <cstdint>

namespace tapegrad_bench {

struct Workload {
  const char* name;
  int64_t b, t, d_in, d_out, heads;
  bool scaled;  // Wq/Wk/Wv scaled by 1/sqrt(d_in), Wo/bo by 1/sqrt(d_out) after init
};

inline constexpr Workload kWorkloads[] = {
    {"book", 2, 6, 3, 2, 2, false},
    {"small", 8, 64, 64, 64, 4, true},
    {"gpt2", 4, 256, 768, 768, 12, true},
};

// The exact multiply-add FLOPs (2 per multiply-add) of the matrix products of one step as the
// composed graph runs them (x needs no gradient, so the projections' backward computes dW
// only; attention products are counted dense, [T, T], as LibTorch runs them):
//   forward: q, k, v, out projections; scores = q kᵀ; ctx = w v
//   backward: dWq, dWk, dWv; dWo and dctx; dw and dv; dq and dk
inline double step_flops(const Workload& w) {
  const double rows = static_cast<double>(w.b * w.t);
  const double proj = 2.0 * rows * static_cast<double>(w.d_in * w.d_out);
  const double out = 2.0 * rows * static_cast<double>(w.d_out * w.d_out);
  const double dh = static_cast<double>(w.d_out / w.heads);
  const double att = 2.0 * static_cast<double>(w.b * w.heads) * static_cast<double>(w.t * w.t) * dh;
  return 3 * proj + 3 * proj + out + 2 * out + 2 * att + 4 * att;
}

}  // namespace tapegrad_bench

// The engine interface, C linkage so the LibTorch engine can live in a plugin loaded only by the
// processes that run it (LibTorch's static initialisers alone would add tens of MiB to every
// process's RSS). Every function is implemented once per engine, prefixed tgb_<engine>_.
extern "C" {
struct tgb_shape {
  int64_t b, t, d_in, d_out, heads;
  int scaled;
  double dropout;  // the module's attention dropout, in training mode (0: none)
};

// The GPT workloads' model (the book's GPT config), batch and optimizer settings, for the
// LibTorch plugin's GPT step (tgb_torch_gpt_*; tools/bench/gpt_workload.cpp runs it).
struct tgb_gpt_config {
  int64_t vocab_size, context_length, emb_dim, n_heads, n_layers;
  double drop_rate;
  int qkv_bias;
  int64_t batch, t;         // one fixed batch of [batch, t] tokens
  double lr, weight_decay;  // AdamW's; its betas and eps are torch's defaults
};
}
