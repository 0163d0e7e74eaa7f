// torch 1.13's convolution goldens (tests/goldens/conv/make_conv_goldens.py): one case's
// forward and its input, weight and bias gradients, for test_conv2d.cpp, test_conv1d.cpp and
// test_conv_transpose2d.cpp.
#pragma once

#include <functional>
#include <string>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/hex_goldens.h"

namespace tapegrad::testing {

inline const GoldenFile& conv_goldens() {
  return golden_file("conv/conv.txt");
}

// conv(x, w, b) with b undefined when the case has none.
using ConvCall = std::function<Tensor(const Tensor& x, const Tensor& w, const Tensor& b)>;

// Case `<op>.<name>` in float32 and float64: y and dx, dw, db (for dy) within `ulps` of torch.
inline void check_conv_golden(const std::string& op, const std::string& name, const ConvCall& call,
                              double ulps = 64) {
  for (const char* tag : {"f32", "f64"}) {
    const std::string base = op + "." + name + "." + tag;
    INFO(base);
    const GoldenFile& g = conv_goldens();
    Tape tape;
    TapeScope scope(tape);
    const auto leaf = [&](const std::string& what) {
      const GoldenTensor& t = g[base + "." + what];
      return from_values(t.shape, t.values, t.dtype, true);
    };
    const Tensor x = leaf("x"), w = leaf("w");
    const bool has_bias = g.contains(base + ".b");
    const Tensor b = has_bias ? leaf("b") : Tensor();
    const Tensor y = call(x, w, b);
    REQUIRE(y.shape() == g[base + ".y"].shape);
    require_near(y.values(), g[base + ".y"], x.dtype(), ulps, "y");
    tape.backward(y, g[base + ".dy"].values);
    require_near(x.grad_values(), g[base + ".dx"], x.dtype(), ulps, "dx");
    require_near(w.grad_values(), g[base + ".dw"], x.dtype(), ulps, "dw");
    if (has_bias) require_near(b.grad_values(), g[base + ".db"], x.dtype(), ulps, "db");
  }
}

}  // namespace tapegrad::testing
