// Test helper: the optimisers' "two threads give the same bits as one" runs share their steps.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/optim/optimizer.h>

namespace tapegrad::testing {

// Three steps of `optimizer` over float32 `params` at `threads` threads, each from the fixed
// gradient cos(0.003·i + step); returns every parameter's weights after them, in order. The
// thread count is set back to 1.
inline std::vector<float> weights_after_three_steps(Optimizer& optimizer,
                                                    const std::vector<Parameter>& params,
                                                    int threads) {
  set_num_threads(threads);
  for (int step = 0; step < 3; ++step) {
    for (const Parameter& p : params) {
      float* g = p.grad<float>();
      for (int64_t i = 0; i < p.numel(); ++i) {
        g[i] = std::cos(0.003f * static_cast<float>(i) + static_cast<float>(step));
      }
    }
    optimizer.step();
  }
  set_num_threads(1);
  std::vector<float> out;
  for (const Parameter& p : params)
    out.insert(out.end(), p.data<float>(), p.data<float>() + p.numel());
  return out;
}

}  // namespace tapegrad::testing
