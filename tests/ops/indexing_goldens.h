// The torch golden checks shared by the shape and indexing ops of issue #35 (squeeze ...
// take_along_dim): tests/goldens/indexing/indexing.txt, float32 and float64, compared bit for bit.
#pragma once

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/ids.h>
#include <tapegrad/ops/ops.h>
#include "tests/goldens.h"
#include "tests/ops/elementwise2_goldens.h"

namespace tapegrad::testing {

inline const GoldenFile& indexing_goldens() {
  static const GoldenFile golden("indexing", "indexing.txt");
  return golden;
}

struct IndexingInputs {
  std::vector<Tensor> t;  // the float inputs, in the order the check names them
  std::vector<Ids> ids;   // the index inputs, likewise
};

using IndexingOp = std::function<std::vector<Tensor>(const IndexingInputs&)>;

// Runs `f` on `case_name`'s golden inputs (float tensors named `floats`, e.g. {"x", "src"}, and
// indices named `indices`), both dtypes, and requires torch's outputs (y, or y0, y1, ... for
// several) and the gradients of the float inputs for torch's dy (dx, dsrc, ...), bit for bit.
inline void check_indexing_goldens(const std::string& case_name,
                                   const std::vector<std::string>& floats,
                                   const std::vector<std::string>& indices, const IndexingOp& f) {
  const GoldenFile& golden = indexing_goldens();
  for (const auto& [tag, dtype] : golden_dtypes()) {
    const std::string name = case_name + "." + tag;
    INFO(name);
    Tape tape;
    TapeScope scope(tape);
    IndexingInputs in;
    for (const std::string& key : floats) {
      const GoldenTensor& g = golden[name + "." + key];
      in.t.push_back(from_values(g.shape, g.values, dtype, true));
    }
    for (const std::string& key : indices) {
      const GoldenTensor& g = golden[name + "." + key];
      REQUIRE(g.integer);
      in.ids.emplace_back(g.shape, g.ints());
    }
    const std::vector<Tensor> ys = f(in);
    const bool several = ys.size() > 1 || !golden.contains(name + ".y");
    Tensor loss = scalar(0.0, dtype);
    for (size_t i = 0; i < ys.size(); ++i) {
      const std::string suffix = several ? std::to_string(i) : "";
      const GoldenTensor& want = golden[name + ".y" + suffix];
      REQUIRE(ys[i].shape() == want.shape);
      REQUIRE(ys[i].dtype() == dtype);
      require_golden(ys[i].values(), want, dtype, 0, true, name + ".y" + suffix);
      const GoldenTensor& dy = golden[name + ".dy" + suffix];
      loss = loss + sum(ys[i] * from_values(dy.shape, dy.values, dtype));
    }
    REQUIRE_FALSE(golden.contains(name + ".y" + std::to_string(ys.size())));
    loss.backward();
    for (size_t k = 0; k < floats.size(); ++k) {
      const GoldenTensor& want = golden[name + ".d" + floats[k]];
      std::vector<double> got = in.t[k].grad_values();
      if (got.empty()) got.assign(want.values.size(), 0.0);  // no gradient reached it
      require_golden(got, want, dtype, 0, false, name + ".d" + floats[k]);
    }
  }
}

// The same for an op of one float input "x" and one output.
inline void check_unary_indexing(const std::string& case_name,
                                 const std::function<Tensor(const Tensor&)>& f) {
  check_indexing_goldens(case_name, {"x"}, {},
                         [&](const IndexingInputs& in) { return std::vector<Tensor>{f(in.t[0])}; });
}

}  // namespace tapegrad::testing
