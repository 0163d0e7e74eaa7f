// Tests for graph/op.h's helpers for ops written outside the library: output_data<T>() writes an
// op's new output and refuses leaves and the wrong element type.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "graph/error.h"
#include "graph/factory.h"
#include "graph/op.h"
#include "graph/tape.h"
#include "ops/ops.h"

using namespace tapegrad;

namespace {

struct TwiceState {
  double factor;
};

// Y = c·X  =>  dX += c·dY
void twice_backward(Tape& tape, const Node& node) {
  double* dx = tape.grad_for<double>(node, 0);
  if (dx == nullptr) return;
  const double* dy = node.grad_as<const double>();
  const double c = node.state_as<TwiceState>().factor;
  for (int64_t i = 0; i < node.shape.numel(); ++i) dx[i] += c * dy[i];
}

// Not registered: the registry's guards (tests/ops/test_registry.cpp) see only real ops.
const OpDef kTwice{"test_twice", twice_backward};

}  // namespace

TEST_CASE("output_data: a user's op writes its output and backpropagates", "[op-api]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({1.0, -2.0, 3.0}, DType::Float64));
  Tensor y = tape.record(kTwice, x.shape(), x.dtype(), {x}, TwiceState{2.0});
  double* yv = output_data<double>(y);
  for (int64_t i = 0; i < 3; ++i) yv[i] = 2.0 * x.data<double>()[i];
  CHECK(y.values() == std::vector<double>{2.0, -4.0, 6.0});
  sum(y).backward();
  CHECK(x.grad_values() == std::vector<double>{2.0, 2.0, 2.0});
}

TEST_CASE("output_data: refuses a leaf and the wrong element type", "[op-api]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({1.0, 2.0}, DType::Float64);
  CHECK_THROWS_WITH(output_data<double>(x),
                    Catch::Contains("output_data") && Catch::Contains("not an op's output"));
  Tensor y = tape.record(kTwice, x.shape(), x.dtype(), {x}, TwiceState{2.0});
  CHECK_THROWS_WITH(output_data<float>(y),
                    Catch::Contains("holds float64, not float32") && Catch::Contains("test_twice"));
  CHECK(output_data<double>(y) != nullptr);
}
