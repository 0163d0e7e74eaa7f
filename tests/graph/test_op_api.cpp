// Tests for the op API an op author uses: output_data<T>() writes an op's new output and refuses
// leaves and the wrong element type; Tape::input_grad() is where a backward writes its gradients.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/op.h>
#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/ops/ops.h>

using namespace tapegrad;

namespace {

struct TwiceState {
  double factor;
};

// Y = c·X  =>  dX += c·dY
void twice_backward(Tape& tape, const Node& node) {
  double* dx = tape.input_grad<double>(node, 0).to_add();
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

namespace {

// Y = X  =>  dX += dY, written as a one-term-per-element op (d = term while nothing is written).
void copy_backward(Tape& tape, const Node& node) {
  auto [dx, overwrite, numel] = tape.input_grad<double>(node, 0);
  if (dx == nullptr) return;
  const double* dy = node.grad_as<const double>();
  for (int64_t i = 0; i < numel; ++i) dx[i] = overwrite ? dy[i] : dx[i] + dy[i];
}
const OpDef kCopy{"test_copy", copy_backward};

Tensor copy_op(const Tensor& x) {
  Tensor y = x.tape().record(kCopy, x.shape(), x.dtype(), {x});
  std::copy_n(x.data<double>(), x.numel(), output_data<double>(y));
  return y;
}

}  // namespace

TEST_CASE("input_grad: the first writer overwrites and later ones add while to_add zero-fills",
          "[op-api]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({1.0, 2.0}, DType::Float64));
  // x feeds an overwriting op and an adding one: whichever runs first sees nothing written.
  Tensor y = add(sum(copy_op(x)), sum(scale(x, 3.0)));
  y.backward();
  CHECK(x.grad_values() == std::vector<double>{4.0, 4.0});

  InputGrad<double> g{nullptr, true, 0};
  CHECK(g.to_add() == nullptr);  // no gradient needed: nothing to fill
  double buffer[3] = {7.0, 7.0, 7.0};
  InputGrad<double> fresh{buffer, true, 3};
  CHECK(fresh.to_add() == buffer);
  CHECK(std::vector<double>(buffer, buffer + 3) == std::vector<double>{0.0, 0.0, 0.0});
  CHECK_FALSE(fresh.overwrite);
  buffer[0] = 5.0;
  InputGrad<double> written{buffer, false, 3};
  CHECK(written.to_add()[0] == 5.0);  // already holds terms: kept
}

TEST_CASE("input_grad: a parameter's pending zero_grad reads as nothing written", "[op-api]") {
  Parameter w = Parameter::from_values({2}, {1.0, 2.0}, DType::Float64);
  for (int step = 0; step < 2; ++step) {
    Tape tape;
    TapeScope scope(tape);
    w.zero_grad();  // pending: the stale gradient of the first step is never read
    sum(copy_op(w)).backward();
    CHECK(w.grad_values() == std::vector<double>{1.0, 1.0});
  }
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({1.0, 2.0}, DType::Float64));
  Tensor y = tape.record(kCopy, x.shape(), x.dtype(), {x});  // an input taken once: overwrite
  CHECK(tape.input_grad<double>(y.node(), 0).overwrite);
  CHECK_FALSE(tape.input_grad<double>(y.node(), 0).overwrite);  // asked once: counts as written
}
