// The torch golden check shared by lerp, pow with a tensor exponent, the logical ops, any/all and
// isclose (tests/goldens/elementwise3/elementwise3.txt), and pad, diagonal, diag
// (tests/goldens/padding/padding.txt): float32 and float64.
#pragma once

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"
#include "tests/ops/elementwise2_goldens.h"

namespace tapegrad::testing {

inline const GoldenFile& elementwise3_goldens() {
  static const GoldenFile golden("elementwise3", "elementwise3.txt");
  return golden;
}

// Runs f on `case_name`'s golden inputs (named `inputs`) from `golden`, both dtypes, and requires
// torch's output and, when `with_grad`, each input's gradient for torch's dy, within `ulps` (0: bit
// for bit).
inline void check_elementwise3(const std::string& case_name, const std::vector<std::string>& inputs,
                               const std::function<Tensor(const std::vector<Tensor>&)>& f,
                               bool with_grad, double ulps = 0,
                               const GoldenFile& golden = elementwise3_goldens()) {
  for (const auto& [tag, dtype] : golden_dtypes()) {
    const std::string name = case_name + "." + tag;
    INFO(name);
    Tape tape;
    TapeScope scope(tape);
    std::vector<Tensor> x;
    for (const std::string& key : inputs) {
      const GoldenTensor& g = golden[name + "." + key];
      x.push_back(from_values(g.shape, g.values, dtype, with_grad));
    }
    const Tensor y = f(x);
    const GoldenTensor& want = golden[name + ".y"];
    REQUIRE(y.shape() == want.shape);
    REQUIRE(y.dtype() == dtype);
    require_golden(y.values(), want, dtype, ulps, ulps == 0, name + ".y");
    if (!with_grad) continue;
    const GoldenTensor& dy = golden[name + ".dy"];
    sum(y * from_values(dy.shape, dy.values, dtype)).backward();
    for (size_t k = 0; k < inputs.size(); ++k) {
      std::vector<double> got = x[k].grad_values();
      const GoldenTensor& want_d = golden[name + ".d" + inputs[k]];
      if (got.empty()) got.assign(want_d.values.size(), 0.0);
      require_golden(got, want_d, dtype, ulps, false, name + ".d" + inputs[k]);
    }
  }
}

}  // namespace tapegrad::testing
