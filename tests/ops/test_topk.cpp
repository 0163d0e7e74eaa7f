// Tests for ops/topk.cpp.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

namespace {
std::vector<int64_t> to_vector(const Ids& ids) {
  return {ids.values().begin(), ids.values().end()};
}
}  // namespace

TEST_CASE("topk: sorted descending, gradient to the picks, errors", "[topk]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({{0.5, 3.0, -1.0, 2.0}, {7.0, 1.0, 8.0, 0.0}}, DType::Float64));
  TopK top = topk(x, 2);
  CHECK(top.values.shape() == Shape{2, 2});
  CHECK(top.values.values() == std::vector<double>{3.0, 2.0, 8.0, 7.0});
  CHECK(to_vector(top.indices) == std::vector<int64_t>{1, 3, 2, 0});
  tape.backward(top.values, std::vector<double>{1, 2, 3, 4});
  CHECK(x.grad_values() == std::vector<double>{0, 1, 0, 2, 4, 0, 3, 0});
  CHECK(topk(x, 0).values.shape() == Shape{2, 0});
  CHECK_THROWS_WITH(
      topk(x, 5), Catch::Contains("topk") && Catch::Contains("[2, 4]") && Catch::Contains("k = 5"));
  CHECK_THROWS_WITH(topk(x, 1, 2), Catch::Contains("out of range"));
}

TEST_CASE("topk: matches torch, values, indices and gradients", "[topk][goldens]") {
  const testing::GoldenFile golden("selection", "selection.txt");
  for (const auto& [tag, dtype] : {std::pair<std::string, DType>{"f32", DType::Float32},
                                   std::pair<std::string, DType>{"f64", DType::Float64}}) {
    for (const auto& [k, dim] : {std::pair<int64_t, int>{3, 1}, {2, -1}, {3, 0}}) {
      const std::string n = "topk." + tag + ".k" + std::to_string(k) + ".dim" + std::to_string(dim);
      INFO(n);
      Tape tape;
      TapeScope scope(tape);
      const auto& gx = golden[n + ".x"];
      Tensor x = from_values(gx.shape, gx.values, dtype, true);
      TopK top = topk(x, k, dim);
      tape.backward(top.values, golden[n + ".dy"].values);
      CHECK(top.values.shape() == golden[n + ".values"].shape);
      CHECK(top.values.values() == golden[n + ".values"].values);
      CHECK(to_vector(top.indices) == golden[n + ".indices"].ints());
      CHECK(x.grad_values() == golden[n + ".dx"].values);
    }
  }
}

TEST_CASE("topk: equal values come in torch's CPU order", "[topk][goldens]") {
  const testing::GoldenFile golden("selection", "selection.txt");
  // n = 10, k = 4 takes nth_element + sort; n = 200, k = 3 partial_sort; n = 130, k = 2 the edge.
  for (const auto& [n, k] : {std::pair<int, int>{10, 4}, {200, 3}, {130, 2}}) {
    const std::string name = "topk.ties.n" + std::to_string(n) + ".k" + std::to_string(k);
    INFO(name);
    Tape tape;
    TapeScope scope(tape);
    const auto& gx = golden[name + ".x"];
    TopK top = topk(from_values(gx.shape, gx.values), k);
    CHECK(top.values.values() == golden[name + ".values"].values);
    CHECK(to_vector(top.indices) == golden[name + ".indices"].ints());
  }
}

GRADCHECK_TEST_CASE("topk", "every dim, ranks 1 to 3") {
  for (const Shape& shape : {Shape{6}, Shape{3, 4}, Shape{2, 3, 4}}) {
    for (int dim = -shape.rank(); dim < shape.rank(); ++dim) {
      INFO(shape.str() << " dim " << dim);
      auto report = gradcheck(
          "topk", [dim](std::span<const Tensor> in) { return topk(in[0], 2, dim).values; },
          {random_input(shape, 11, -2.0, 2.0)});
      testing::require_gradcheck(report, "topk");
    }
  }
}
