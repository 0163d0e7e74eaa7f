// Tests for ops/any_all.cpp: torch.any and torch.all over everything or along a dim.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise3_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

TEST_CASE("any and all: torch goldens (NaN counts as true, dims, keepdim, empty inputs)",
          "[any][all][goldens]") {
  using F = std::function<Tensor(const Tensor&)>;
  for (const auto& [name, f] : std::vector<std::pair<std::string, F>>{
           {"any", [](const Tensor& x) { return any(x); }},
           {"all", [](const Tensor& x) { return all(x); }},
           {"any_dim1", [](const Tensor& x) { return any(x, 1); }},
           {"all_dim1", [](const Tensor& x) { return all(x, 1); }},
           {"any_dim0_keepdim", [](const Tensor& x) { return any(x, 0, true); }},
           {"all_dim0_keepdim", [](const Tensor& x) { return all(x, -2, true); }},
           {"any_empty", [](const Tensor& x) { return any(x); }},
           {"all_empty", [](const Tensor& x) { return all(x); }},
           {"all_dim1_empty", [](const Tensor& x) { return all(x, 1); }}}) {
    INFO(name);
    testing::check_elementwise3(
        name, {"x"}, [f](const std::vector<Tensor>& x) { return f(x[0]); }, false);
  }
}

TEST_CASE("any and all: a dim out of range", "[any][all][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(any(zeros({2, 3}), 2),
                    Catch::StartsWith("any: x [2, 3]: dim 2 is out of range"));
  CHECK_THROWS_WITH(all(zeros({2}), -2), Catch::StartsWith("all: x [2]: dim -2 is out of range"));
}

GRADCHECK_TEST_CASE("any", "no gradient through it") {
  auto report = gradcheck(
      "any", [](std::span<const Tensor> in) { return in[0] * (any(in[0], 1, true) + any(in[0])); },
      {random_input({2, 3}, 51)});
  testing::require_gradcheck(report, "any");
}

GRADCHECK_TEST_CASE("all", "no gradient through it") {
  auto report = gradcheck(
      "all", [](std::span<const Tensor> in) { return in[0] * (all(in[0], 0) + all(in[0])); },
      {random_input({2, 3}, 52)});
  testing::require_gradcheck(report, "all");
}
