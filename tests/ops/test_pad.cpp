// Tests for ops/pad.cpp: torch.nn.functional.pad's four modes, crops and errors, against torch.
#include <limits>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/elementwise3_goldens.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace test_pad {

const testing::GoldenFile& goldens() {
  static const testing::GoldenFile golden("padding", "padding.txt");
  return golden;
}

void check(const std::string& name, std::vector<int64_t> pads, PadMode mode, double value = 0.0) {
  testing::check_elementwise3(
      name, {"x"}, [=](const std::vector<Tensor>& x) { return pad(x[0], pads, mode, value); }, true,
      0, goldens());
}

}  // namespace test_pad

TEST_CASE("pad: torch goldens (each mode, 1 to 3 dims, values, negative pads)", "[pad][goldens]") {
  using test_pad::check;
  check("pad_constant", {1, 2}, PadMode::Constant);
  check("pad_constant_value", {0, 1, 2, 0}, PadMode::Constant, -1.5);
  check("pad_constant_crop", {-1, 2, 1, -1}, PadMode::Constant, 0.25);
  check("pad_constant_3d", {1, 1, 0, 0, 2, 1}, PadMode::Constant);
  check("pad_reflect_1d", {2, 3}, PadMode::Reflect);
  check("pad_reflect_2d", {1, 2, 2, 1}, PadMode::Reflect);
  check("pad_reflect_negative", {-1, 2}, PadMode::Reflect);
  check("pad_replicate_1d", {3, 1}, PadMode::Replicate);
  check("pad_replicate_2d", {2, 0, 1, 3}, PadMode::Replicate);
  check("pad_replicate_3d", {1, 1, 1, 0, 0, 2}, PadMode::Replicate);
  check("pad_circular_1d", {2, 3}, PadMode::Circular);
  check("pad_circular_2d", {1, 2, 2, 1}, PadMode::Circular);
  check("pad_circular_negative", {-1, 2}, PadMode::Circular);
}

TEST_CASE("pad: bad pads are Errors naming the op, the input and the reason", "[pad][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({1, 2, 3});
  CHECK_THROWS_WITH(pad(x, {1}), "pad: x [1, 2, 3]: padding length must be divisible by 2");
  CHECK_THROWS_WITH(pad(x, {1, 1, 1, 1, 1, 1, 1, 1}),
                    "pad: x [1, 2, 3]: padding length 8 too large for rank 3");
  CHECK_THROWS_WITH(pad(x, {1, -5}),
                    "pad: x [1, 2, 3]: padding (1, -5) gives a negative size at dim 2 of size 3");
  CHECK_THROWS_WITH(pad(x, {3, 3}, PadMode::Reflect),
                    "pad: x [1, 2, 3]: reflect padding (3, 3) must be less than the size at dim 2 "
                    "of size 3");
  CHECK_THROWS_WITH(pad(x, {4, 0}, PadMode::Circular),
                    Catch::Contains("circular padding (4, 0) wraps around more than once"));
  CHECK_THROWS_WITH(pad(zeros({4}), {1, 1}, PadMode::Replicate),
                    Catch::Contains("replicate padding (1, 1) pads the last 1 to 3 dims"));
  CHECK_THROWS_WITH(pad(zeros({1, 0}), {1, 1}, PadMode::Replicate),
                    Catch::Contains("replicate padding needs a nonempty dim at dim 1"));
  CHECK_THROWS_WITH(pad(x, {std::numeric_limits<int64_t>::min(), 0}),
                    Catch::EndsWith("is too large"));
  CHECK(pad(x, {}).shape() == Shape{1, 2, 3});
}

GRADCHECK_TEST_CASE("pad", "each mode") {
  for (const PadMode mode :
       {PadMode::Constant, PadMode::Reflect, PadMode::Replicate, PadMode::Circular}) {
    auto report = gradcheck("pad",
                            [mode](std::span<const Tensor> in) {
                              return pad(in[0], {2, 1, -1, 1}, mode, 0.5);
                            },
                            {random_input({1, 3, 4}, 60)});
    testing::require_gradcheck(report, "pad");
  }
}

GRADCHECK_TEST_CASE("pad_backward", "the recorded backward of pad, differentiated") {
  auto report = gradcheck("pad_backward",
                          [](std::span<const Tensor> in) {
                            const Tensor y = pad(in[0] * in[0], {2, 2}, PadMode::Reflect);
                            return grad(sum(y * y), {in[0]}, {.create_graph = true})[0];
                          },
                          {random_input({1, 4}, 61)});
  testing::require_gradcheck(report, "pad_backward");
}
