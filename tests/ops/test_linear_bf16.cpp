// Tests for ops/linear_bf16.cpp.
#include <bit>
#include <cstdint>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/kernels/gemm/linear_bf16.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace {

struct Bf16Case {
  std::vector<uint16_t> bits;  // [out, in]
  std::vector<float> widened;  // the same weights as float32
  std::vector<float> bias;     // [out]
  Bf16Weight weight() const { return {bits.data(), out, in}; }
  int64_t out, in;
};

Bf16Case make_case(int64_t out, int64_t in) {
  Bf16Case c{{}, {}, {}, out, in};
  const GradcheckInput w = random_input(Shape{out, in}, 3, -1.0, 1.0);
  std::vector<float> w32(w.values.begin(), w.values.end());
  c.bits.resize(w32.size());
  round_to_bf16_bits(w32.data(), c.bits.data(), static_cast<int64_t>(w32.size()));
  for (uint16_t b : c.bits) c.widened.push_back(bf16_bits_to_float(b));
  const GradcheckInput b = random_input(Shape{out}, 4, -0.5, 0.5);
  c.bias.assign(b.values.begin(), b.values.end());
  return c;
}

std::vector<uint32_t> bits_of(const std::vector<double>& float32_values) {
  std::vector<uint32_t> out;
  for (double v : float32_values) out.push_back(std::bit_cast<uint32_t>(static_cast<float>(v)));
  return out;
}

}  // namespace

TEST_CASE("linear_bf16: the bfloat16 kernels' bits, one row and many, with and without bias",
          "[linear_bf16]") {
  const Bf16Case c = make_case(5, 7);
  Tape tape;
  TapeScope scope(tape);
  NoGradGuard no_grad;
  for (const Shape& shape : {Shape{7}, Shape{1, 7}, Shape{3, 7}, Shape{2, 2, 7}}) {
    INFO(shape.str());
    const GradcheckInput in = random_input(shape, 9, -2.0, 2.0);
    const std::vector<float> x32(in.values.begin(), in.values.end());
    Tensor x = from_data(shape, std::span<const float>(x32));
    Tensor bias = from_data(Shape{c.out}, std::span<const float>(c.bias));
    const int64_t rows = x.numel() / c.in;
    for (bool with_bias : {false, true}) {
      Tensor y = with_bias ? linear_bf16(x, c.weight(), bias) : linear_bf16(x, c.weight());
      Shape expected_shape = shape;
      expected_shape[shape.rank() - 1] = c.out;
      CHECK(y.shape() == expected_shape);
      CHECK(y.dtype() == DType::Float32);
      std::vector<float> expected(static_cast<size_t>(rows * c.out));
      const float* b = with_bias ? c.bias.data() : nullptr;
      if (rows == 1) {
        gemv_bf16(c.bits.data(), x32.data(), b, expected.data(), c.out, c.in);
      } else {
        linear_bf16(c.bits.data(), x32.data(), b, expected.data(), rows, c.out, c.in);
      }
      CHECK(bits_of(y.values()) == bits_of(std::vector<double>(expected.begin(), expected.end())));
      // And linear with the widened weights, up to float32 rounding.
      Tensor w = from_data(Shape{c.out, c.in}, std::span<const float>(c.widened));
      const std::vector<double> reference =
          with_bias ? linear(x, w, bias).values() : linear(x, w).values();
      const std::vector<double> got = y.values();
      for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(reference[i]).margin(1e-5));
    }
  }
}

TEST_CASE("linear_bf16: bad shapes and dtypes are Errors naming the op and the shapes",
          "[linear_bf16]") {
  const Bf16Case c = make_case(3, 4);
  Tape tape;
  TapeScope scope(tape);
  NoGradGuard no_grad;
  CHECK_THROWS_WITH(linear_bf16(zeros({2, 5}), c.weight()),
                    Catch::Contains("linear_bf16") && Catch::Contains("[2, 5]") &&
                        Catch::Contains("bfloat16 weight [3, 4]") &&
                        Catch::Contains("must end in 4 features"));
  CHECK_THROWS_WITH(linear_bf16(scalar(1.0), c.weight()),
                    Catch::Contains("linear_bf16") && Catch::Contains("[]"));
  CHECK_THROWS_WITH(linear_bf16(zeros({2, 4}, DType::Float64), c.weight()),
                    Catch::Contains("linear_bf16") && Catch::Contains("float64") &&
                        Catch::Contains("float32 inputs"));
  CHECK_THROWS_WITH(linear_bf16(zeros({2, 4}), c.weight(), zeros({4})),
                    Catch::Contains("linear_bf16") && Catch::Contains("bias [4]") &&
                        Catch::Contains("float32 [3]"));
  CHECK_THROWS_WITH(linear_bf16(zeros({2, 4}), c.weight(), zeros({3}, DType::Float64)),
                    Catch::Contains("bias [3]") && Catch::Contains("float64"));
  CHECK_THROWS_WITH(linear_bf16(zeros({2, 4}), Bf16Weight{nullptr, 3, 4}),
                    Catch::Contains("linear_bf16") && Catch::Contains("must hold bits"));
  for (int32_t i = 0; i < tape.size(); ++i) CHECK(tape.node(i).op == nullptr);  // leaves only
}

INFERENCE_ONLY_TEST_CASE("linear_bf16", "grad mode on is an Error, nothing recorded") {
  const Bf16Case c = make_case(3, 4);
  Tape tape;
  TapeScope scope(tape);
  for (bool x_requires_grad : {false, true}) {
    Tensor x = x_requires_grad ? requires_grad(zeros({2, 4})) : zeros({2, 4});
    const int32_t before = tape.size();
    CHECK_THROWS_WITH(linear_bf16(x, c.weight()),
                      Catch::Contains("linear_bf16") && Catch::Contains("[2, 4]") &&
                          Catch::Contains("inference only") && Catch::Contains("NoGradGuard"));
    CHECK(tape.size() == before);
  }
  NoGradGuard no_grad;
  CHECK_FALSE(linear_bf16(requires_grad(zeros({2, 4})), c.weight()).requires_grad());
}
