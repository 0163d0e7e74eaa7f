// Tests for ops/top_k_filter.cpp.
#include <cmath>
#include <limits>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>
#include "tests/compare.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace {

using tapegrad::testing::kInf;

// The book's two lines with the library's topk: min_val = topk(x, k).values[.., -1], then
// where(x < min_val, -inf, x), written out over x's rows.
std::vector<double> book_filter(const Tensor& x, int64_t k) {
  const int64_t size = x.size(-1);
  const std::vector<double> v = x.values();
  const std::vector<double> top = topk(x, k).values.values();
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const double min_val =
        top[(i / static_cast<size_t>(size)) * static_cast<size_t>(k) + static_cast<size_t>(k - 1)];
    out[i] = v[i] < min_val ? -kInf : v[i];
  }
  return out;
}

}  // namespace

TEST_CASE("top_k_filter: values below the k-th largest become -inf, ties stay", "[top_k_filter]") {
  Tape tape;
  TapeScope scope(tape);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Tensor x = tensor({{1.0, 5.0, 3.0, 5.0, 2.0}, {0.5, -1.0, 4.0, 2.0, 2.0}}, dtype);
    CHECK(top_k_filter(x, 1).values() ==
          std::vector<double>{-kInf, 5, -kInf, 5, -kInf, -kInf, -kInf, 4, -kInf, -kInf});
    CHECK(top_k_filter(x, 3).values() ==
          std::vector<double>{-kInf, 5, 3, 5, -kInf, -kInf, -kInf, 4, 2, 2});
    CHECK(top_k_filter(x, 5).values() == x.values());
    CHECK(top_k_filter(x, 5).dtype() == dtype);
  }
}

TEST_CASE("top_k_filter: the book's topk and where, any rank, NaN counted as the largest",
          "[top_k_filter]") {
  Tape tape;
  TapeScope scope(tape);
  for (const Shape& shape : {Shape{7}, Shape{3, 50}, Shape{2, 3, 200}}) {
    for (int64_t k : {int64_t{1}, int64_t{3}, shape[shape.rank() - 1]}) {
      INFO(shape.str() << " k = " << k);
      const GradcheckInput in = random_input(shape, 5, -3.0, 3.0);
      Tensor x = from_values(shape, in.values);
      Tensor y = top_k_filter(x, k);
      CHECK(y.shape() == shape);
      CHECK(y.values() == book_filter(x, k));
    }
  }
  // A NaN sorts first, as in topk: with k = 1 it is the k-th largest and nothing is below it.
  Tensor x = tensor({1.0, std::nan(""), 3.0});
  const std::vector<double> y = top_k_filter(x, 2).values();
  CHECK(std::isnan(y[1]));
  CHECK(y[0] == -kInf);
  CHECK(y[2] == 3.0);
}

TEST_CASE("top_k_filter: bad k or shape is an Error naming the op and the shape",
          "[top_k_filter]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  CHECK_THROWS_WITH(top_k_filter(x, 0), Catch::Contains("top_k_filter") &&
                                            Catch::Contains("[2, 3]") &&
                                            Catch::Contains("k = 0 must be in [1, 3]"));
  CHECK_THROWS_WITH(top_k_filter(x, 4),
                    Catch::Contains("top_k_filter") && Catch::Contains("k = 4 must be in [1, 3]"));
  CHECK_THROWS_WITH(top_k_filter(scalar(2.0), 1),
                    Catch::Contains("top_k_filter") && Catch::Contains("[]"));
  CHECK_THROWS_WITH(top_k_filter(zeros({2, 0}), 1),
                    Catch::Contains("top_k_filter") && Catch::Contains("[2, 0]"));
  for (int32_t i = 0; i < tape.size(); ++i) CHECK(tape.node(i).op == nullptr);  // leaves only
}

TEST_CASE("top_k_filter: the gradient reaches the kept values only", "[top_k_filter]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(tensor({{1.0, 5.0, 3.0, 5.0}, {2.0, 0.0, -1.0, 7.0}}, DType::Float64));
  tape.backward(top_k_filter(x, 2), std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(x.grad_values() == std::vector<double>{0, 2, 0, 4, 5, 0, 0, 8});
}

// The filtered values go through softmax, as sampling does: -inf has no finite differences.
GRADCHECK_TEST_CASE("top_k_filter", "under softmax, ranks 1 to 3") {
  for (const Shape& shape : {Shape{6}, Shape{3, 5}, Shape{2, 2, 7}}) {
    INFO(shape.str());
    auto report =
        gradcheck("top_k_filter",
                  [](std::span<const Tensor> in) { return softmax(top_k_filter(in[0], 3), -1); },
                  {random_input(shape, 17, -2.0, 2.0)});
    testing::require_gradcheck(report, "top_k_filter");
  }
}
