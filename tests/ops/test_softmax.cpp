// Tests for ops/softmax.cpp.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/compare.h"
#include "tests/kernels/isa_testing.h"
#include "tests/ops/attention_goldens.h"
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;
using testing::attention_golden;
using testing::golden_tensor;
using testing::max_abs_diff;

namespace {
using tapegrad::testing::kInf;
}

TEST_CASE("softmax: small exact case along each dim", "[softmax]") {
  Tape tape;
  TapeScope scope(tape);
  // exp(log 3) = 3: rows and columns of 1s and 3s.
  Tensor x = tensor({{0.0, 0.0}, {std::log(3.0), 0.0}}, DType::Float64);
  const std::vector<double> rows = softmax(x, -1).values();
  const std::vector<double> cols = softmax(x, 0).values();
  const std::vector<double> want_rows{0.5, 0.5, 0.75, 0.25}, want_cols{0.25, 0.5, 0.75, 0.5};
  CHECK(max_abs_diff(rows, want_rows) < 1e-15);
  CHECK(max_abs_diff(cols, want_cols) < 1e-15);
  CHECK(softmax(x, 1).values() == rows);  // dim 1 is dim -1
  CHECK(softmax(tensor({5.0, 5.0, 5.0, 5.0}), 0).values() == std::vector<double>(4, 0.25));
}

TEST_CASE("softmax: the book's 6x6 attention scores match torch", "[softmax][golden]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor scores = golden_tensor("book.scores");  // inputs @ inputs.T in torch, float32
  CHECK(scores.dtype() == DType::Float32);
  CHECK(max_abs_diff(softmax(scores, -1).values(), attention_golden("book.softmax.dim-1").values) <
        1e-7);
  CHECK(max_abs_diff(softmax(scores, 0).values(), attention_golden("book.softmax.dim0").values) <
        1e-7);
  Tensor scores64 = golden_tensor("book.scores.f64");
  CHECK(max_abs_diff(softmax(scores64, -1).values(),
                     attention_golden("book.softmax.f64.dim-1").values) < 1e-15);
  CHECK(max_abs_diff(softmax(scores64, 0).values(),
                     attention_golden("book.softmax.f64.dim0").values) < 1e-15);
}

TEST_CASE("softmax: large and -inf entries stay finite, an all -inf row is NaN like torch",
          "[softmax][golden]") {
  Tape tape;
  TapeScope scope(tape);
  for (const char* dtype : {"f32", "f64"}) {
    INFO(dtype);
    // Rows: [1000, 1000, 0], [-inf, 1, -inf], [-inf, -inf, -inf], [-1000, -1000, -999], [88, 89,
    // 90].
    Tensor x = golden_tensor(std::string("stable.x.") + dtype);
    const std::vector<double> y = softmax(x, -1).values();
    CHECK(max_abs_diff(y, attention_golden(std::string("stable.softmax.") + dtype).values) < 1e-7);
    CHECK(std::vector<double>(y.begin(), y.begin() + 6) ==
          std::vector<double>{0.5, 0.5, 0.0, 0.0, 1.0, 0.0});
    for (int j = 6; j < 9; ++j) CHECK(std::isnan(y[static_cast<size_t>(j)]));
    for (int j = 9; j < 15; ++j) CHECK(std::isfinite(y[static_cast<size_t>(j)]));
  }
  // The same along a middle dim: the general (strided) path, -inf and 1000 down the columns.
  Tensor t = from_values({3, 2}, std::vector<double>{1000.0, -kInf, 1000.0, 1.0, 0.0, -kInf},
                         DType::Float32);
  CHECK(softmax(t, 0).values() == std::vector<double>{0.5, 0.0, 0.5, 1.0, 0.0, 0.0});
  Tensor all_inf = full({2, 2}, -kInf);
  for (double v : softmax(all_inf, 0).values()) CHECK(std::isnan(v));
}

TEST_CASE("softmax: rank-4 [B, H, T, T] forward and backward match torch, last and middle dims",
          "[softmax][golden]") {
  for (const char* dtype : {"f32", "f64"}) {
    for (int dim : {-1, 1}) {
      INFO(dtype << " dim " << dim);
      const double tol = std::string(dtype) == "f32" ? 1e-7 : 1e-15;
      Tape tape;
      TapeScope scope(tape);
      Tensor x = golden_tensor(std::string("rank4.x.") + dtype, /*requires_grad=*/true);
      Tensor y = softmax(x, dim);
      const std::string suffix = ".dim" + std::to_string(dim) + "." + dtype;
      CHECK(max_abs_diff(y.values(), attention_golden("rank4.softmax" + suffix).values) < tol);
      tape.backward(y, attention_golden(std::string("rank4.g.") + dtype).values);
      CHECK(max_abs_diff(x.grad_values(), attention_golden("rank4.softmax_grad" + suffix).values) <
            tol);
    }
  }
}

TEST_CASE("softmax: the backward reads only the output (rows sum to 1, gradient of the sum is 0)",
          "[softmax]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(from_values({2, 3, 4}, std::vector<double>(24, 0.0), DType::Float64));
  Tensor y = softmax(x, 1);
  tape.backward(y, std::vector<double>(24, 1.0));
  for (double g : x.grad_values()) CHECK(std::abs(g) < 1e-16);
}

TEST_CASE("softmax: bad dims name the op and the tensor", "[softmax][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = zeros({2, 3});
  x.set_name("scores");
  CHECK_THROWS_WITH(softmax(x, 2), "softmax: x \"scores\" [2, 3]: dim 2 out of range for rank 2");
  CHECK_THROWS_WITH(softmax(x, -3), "softmax: x \"scores\" [2, 3]: dim -3 out of range for rank 2");
  CHECK_THROWS_WITH(softmax(scalar(1.0), 1), "softmax: x []: dim 1 out of range for rank 0");
  CHECK(tape.size() == 2);  // nothing recorded by the failed calls
}

GRADCHECK_TEST_CASE("softmax", "ranks 1-4, last, first and middle dims") {
  struct Case {
    Shape shape;
    int dim;
  };
  const Case cases[] = {{{5}, 0},          {{3, 4}, -1},      {{3, 4}, 0},
                        {{2, 3, 4}, 1},    {{2, 3, 4}, -1},   {{2, 2, 3, 4}, -1},
                        {{2, 2, 3, 4}, 1}, {{2, 3, 1, 4}, 0}, {{1, 2, 4, 4}, -2}};
  uint64_t seed = 10;
  for (const Case& c : cases) {
    INFO(c.shape.str() << " dim " << c.dim);
    const int dim = c.dim;
    auto report =
        gradcheck("softmax", [dim](std::span<const Tensor> in) { return softmax(in[0], dim); },
                  {random_input(c.shape, ++seed, -3.0, 3.0)});
    testing::require_gradcheck(report, "softmax");
  }
}

// The last-dim rows follow torch's _vec_softmax_lastdim operation by operation (SLEEF's exp,
// torch's AVX2 summation order; vmath::softmax_rows): on every last-dim golden the
// forward is torch's value bit for bit, float32 and float64.
TEST_CASE("softmax: last-dim rows are torch's bits", "[softmax][golden]") {
  Tape tape;
  TapeScope scope(tape);
  struct Golden {
    const char* x;
    const char* y;
  };
  for (const Golden& g :
       {Golden{"book.scores", "book.softmax.dim-1"},
        Golden{"book.scores.f64", "book.softmax.f64.dim-1"},
        Golden{"stable.x.f32", "stable.softmax.f32"}, Golden{"stable.x.f64", "stable.softmax.f64"},
        Golden{"rank4.x.f32", "rank4.softmax.dim-1.f32"},
        Golden{"rank4.x.f64", "rank4.softmax.dim-1.f64"}}) {
    INFO(g.y);
    Tensor y = softmax(golden_tensor(g.x), -1);
    if (testing::active_level_calls_libm()) {  // the C library's exp, not SLEEF's: within 2 ulps
      testing::require_near(y.values(), attention_golden(g.y), y.dtype(), 2, g.y, 0.0);
      continue;
    }
    CHECK(testing::bits_of(y.values(), y.dtype()) ==
          testing::bits_of(attention_golden(g.y).values, y.dtype()));
  }
}

TEST_CASE("softmax and log_softmax of a 0-D tensor: torch's values and gradients",
          "[softmax][goldens]") {
  const testing::GoldenFile golden("activations", "activations.txt");
  for (const auto& [tag, dtype] : {std::pair<std::string, DType>{"f32", DType::Float32},
                                   std::pair<std::string, DType>{"f64", DType::Float64}}) {
    for (const std::string op : {"softmax", "log_softmax"}) {
      for (int i = 0; i < 4; ++i) {
        for (const int dim : {0, -1}) {
          const std::string p =
              op + "_0d." + tag + "." + std::to_string(i) + ".dim" + std::to_string(dim);
          INFO(p);
          Tape tape;
          TapeScope scope(tape);
          const Tensor x = from_values(Shape{}, golden[p + ".x"].values, dtype, true);
          const Tensor y = op == "softmax" ? softmax(x, dim) : log_softmax(x, dim);
          REQUIRE(y.shape() == Shape{});
          tape.backward(y, std::vector<double>{2.0});
          for (const auto& [got, key] : {std::pair{y.item(), ".y"}, {x.grad_values()[0], ".dx"}}) {
            const double want = golden[p + key].values[0];
            CHECK((std::isnan(want) ? std::isnan(got) : got == want));
          }
        }
      }
    }
  }
}
