// Tests for ops/compare.cpp (eq, ne, lt, le, gt, ge).
#include <cmath>
#include <functional>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise2_goldens.h"
#include "tests/ops/elementwise_cases.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace {

using Binary = Tensor (*)(const Tensor&, const Tensor&);
using WithScalar = Tensor (*)(const Tensor&, double);

struct Comparison {
  const char* name;
  Binary tensors;
  WithScalar scalar;
};

const std::vector<Comparison>& comparisons() {
  static const std::vector<Comparison> all{{"eq", eq, eq}, {"ne", ne, ne}, {"lt", lt, lt},
                                           {"le", le, le}, {"gt", gt, gt}, {"ge", ge, ge}};
  return all;
}

}  // namespace

TEST_CASE("comparisons: 0/1 of the inputs' dtype, broadcasting, nan unequal to all",
          "[eq][ne][lt][le][gt][ge]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = tensor({{1.0, 2.0, NAN}, {3.0, -INFINITY, 0.0}}, DType::Float64);  // [2, 3]
  Tensor b = tensor({1.0, 3.0, NAN}, DType::Float64);                           // [3]
  CHECK(eq(a, b).values() == std::vector<double>{1, 0, 0, 0, 0, 0});
  CHECK(ne(a, b).values() == std::vector<double>{0, 1, 1, 1, 1, 1});
  CHECK(lt(a, b).values() == std::vector<double>{0, 1, 0, 0, 1, 0});
  CHECK(le(a, b).values() == std::vector<double>{1, 1, 0, 0, 1, 0});
  CHECK(gt(a, b).values() == std::vector<double>{0, 0, 0, 1, 0, 0});
  CHECK(ge(a, b).values() == std::vector<double>{1, 0, 0, 1, 0, 0});
  CHECK(eq(a, b).dtype() == DType::Float64);
  CHECK(ge(a, 1.0).values() == std::vector<double>{1, 1, 0, 1, 0, 0});
  CHECK(ne(a, NAN).values() == std::vector<double>{1, 1, 1, 1, 1, 1});
  CHECK(lt(tensor({1.0}), tensor({2.0})).dtype() == DType::Float32);
  CHECK(eq(zeros(Shape{0, 3}, DType::Float64), b).shape() == Shape{0, 3});
}

TEST_CASE("comparisons: a scalar is rounded to x's dtype first, as torch", "[eq]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK(eq(tensor({0.1}, DType::Float32), 0.1).values()[0] == 1.0);  // float32(0.1) == 0.1f
  CHECK(eq(tensor({0.1}, DType::Float64), 0.1).values()[0] == 1.0);
  CHECK(gt(tensor({0.1}, DType::Float32), 0.1).values()[0] == 0.0);
}

TEST_CASE("comparisons: no gradient flows through them", "[eq][ne][lt][le][gt][ge][grad]") {
  for (const Comparison& c : comparisons()) {
    INFO(c.name);
    Tape tape;
    TapeScope scope(tape);
    Tensor a = requires_grad(tensor({1.0, 2.0}, DType::Float64));
    Tensor b = requires_grad(tensor({1.0, 3.0}, DType::Float64));
    // y = a · [a ρ b] + [a ρ 1.5]: a's gradient is the mask alone, b gets nothing
    Tensor y = sum(a * c.tensors(a, b) + c.scalar(a, 1.5));
    const std::vector<Tensor> g = grad(std::vector<Tensor>{y}, std::vector<Tensor>{a, b}, {},
                                       {.retain_graph = true, .allow_unused = true});
    CHECK(g[0].values() == c.tensors(a, b).values());
    CHECK(!g[1].defined());
    tape.backward(y);
    CHECK(a.grad_values() == c.tensors(a, b).values());
    // b is reached only through the comparison: its backward adds nothing, not even zeros
    CHECK(b.grad_values().empty());
  }
}

TEST_CASE("comparisons: errors name the op and both operands", "[eq][ne][lt][le][gt][ge][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Tensor b = tensor({1.0, 2.0});
  for (const Comparison& c : comparisons()) {
    INFO(c.name);
    CHECK_THROWS_WITH(c.tensors(a, b), Catch::Contains(c.name) && Catch::Contains("a [2, 3]") &&
                                           Catch::Contains("b [2]") &&
                                           Catch::Contains("cannot broadcast"));
    CHECK_THROWS_WITH(c.tensors(a, tensor({1.0}, DType::Float64)),
                      Catch::Contains(c.name) && Catch::Contains("float64"));
  }
}

TEST_CASE("comparisons: match torch, broadcasting, nan, ±inf and scalars",
          "[eq][ne][lt][le][gt][ge][goldens]") {
  for (const Comparison& c : comparisons()) {
    INFO(c.name);
    const Binary f = c.tensors;
    const WithScalar fs = c.scalar;
    for (const char* suffix : {"", "_nan"}) {
      testing::check_forward_goldens(std::string(c.name) + suffix, {"a", "b"},
                                     [f](const std::vector<Tensor>& x) { return f(x[0], x[1]); });
    }
    testing::check_forward_goldens(std::string(c.name) + "_scalar", {"x"},
                                   [fs](const std::vector<Tensor>& x) { return fs(x[0], 0.1); });
  }
}

// Each comparison's check: y = a ⊙ [a ρ b] + [a ρ 0.25] (the mask is constant away from the
// boundary, so the gradients are the mask for a and zero for b, which gradcheck's central
// differences confirm).
#define COMPARE_GRADCHECK(op)                                                                  \
  GRADCHECK_TEST_CASE(#op, "no gradient through the relation, broadcasting") {                 \
    auto report = gradcheck(                                                                   \
        #op,                                                                                   \
        [](std::span<const Tensor> in) { return in[0] * op(in[0], in[1]) + op(in[0], 0.25); }, \
        {random_input({2, 3}, 45, -1.0, 1.0), random_input({3}, 46, -1.0, 1.0)});              \
    testing::require_gradcheck(report, #op);                                                   \
  }
COMPARE_GRADCHECK(eq)
COMPARE_GRADCHECK(ne)
COMPARE_GRADCHECK(lt)
COMPARE_GRADCHECK(le)
COMPARE_GRADCHECK(gt)
COMPARE_GRADCHECK(ge)
