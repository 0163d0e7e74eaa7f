// torch 1.13's goldens of the pooling and interpolation ops (tests/goldens/pool/pool.txt, written
// by make_pool_goldens.py): one case's output, gradient and indices per dtype.
#pragma once

#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/pooling.h>
#include "tests/ops/hex_goldens.h"

namespace tapegrad::testing {

inline const GoldenFile& pool_goldens() {
  return golden_file("pool/pool.txt");
}

// Runs golden case `name` in float32 and float64: torch's output and dx within `ulps` (0: bit for
// bit), and with `indices` torch's indices exactly.
inline void check_pool_case(const std::string& name,
                            const std::function<PoolWithIndices(const Tensor&)>& call,
                            double ulps = 0.0, bool indices = true) {
  for (const char* tag : {"f32", "f64"}) {
    const std::string base = name + "." + tag;
    INFO(base);
    Tape tape;
    TapeScope scope(tape);
    const GoldenTensor& gx = pool_goldens()[base + ".x"];
    const Tensor x = from_values(gx.shape, gx.values, gx.dtype, true);
    const PoolWithIndices out = call(x);
    const GoldenTensor& gy = pool_goldens()[base + ".y"];
    REQUIRE(out.values.shape() == gy.shape);
    require_near(out.values.values(), gy, gx.dtype, ulps, "y");
    if (indices) {
      const GoldenTensor& gi = pool_goldens()[base + ".idx"];
      REQUIRE(out.indices.shape() == gi.shape);
      const std::vector<int64_t> got(out.indices.values().begin(), out.indices.values().end());
      CHECK(got == gi.ints());
    }
    tape.backward(out.values, pool_goldens()[base + ".dy"].values);
    require_near(x.grad_values(), pool_goldens()[base + ".dx"], gx.dtype, ulps, "dx");
  }
}

// The same for an op without indices.
inline void check_pool_case(const std::string& name,
                            const std::function<Tensor(const Tensor&)>& call, double ulps = 0.0) {
  check_pool_case(
      name,
      [&](const Tensor& x) {
        return PoolWithIndices{call(x), Ids()};
      },
      ulps, false);
}

// A random permutation of 0.1, 0.2, ...: no ties, and gaps far wider than gradcheck's step, so a
// max pooling's gradient check never crosses a switch of its argmax.
inline GradcheckInput pool_distinct_input(const Shape& shape, uint64_t seed) {
  GradcheckInput in = random_input(shape, seed);
  std::vector<size_t> order(in.values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return in.values[a] < in.values[b]; });
  for (size_t r = 0; r < order.size(); ++r) in.values[order[r]] = 0.1 * static_cast<double>(r + 1);
  return in;
}

}  // namespace tapegrad::testing
