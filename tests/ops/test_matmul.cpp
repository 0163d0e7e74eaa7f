// Tests for ops/matmul.cpp: torch.matmul's 1-D, 2-D and batched (broadcast) forms, and dot.
#include <cmath>
#include <tuple>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/layout_goldens.h"

using namespace tapegrad;

namespace {
Tensor matmul_of(std::span<const Tensor> in) {
  return matmul(in[0], in[1]);
}
}  // namespace

TEST_CASE("matmul: small exact case", "[matmul]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor y = matmul(tensor({{1.0, 2.0}, {3.0, 4.0}}), tensor({{5.0, 6.0}, {7.0, 8.0}}));
  CHECK(y.shape() == Shape{2, 2});
  CHECK(y.values() == std::vector<double>{19, 22, 43, 50});
}

TEST_CASE("matmul: 1-D operands are promoted and the added dim removed", "[matmul]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor v = tensor({1.0, 2.0, 3.0});
  Tensor m = tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  // torch.matmul(v, torch.tensor([4., -5., 6.])) == tensor(12.)
  Tensor s = matmul(v, tensor({4.0, -5.0, 6.0}));
  CHECK(s.shape() == Shape{});
  CHECK(s.item() == 12.0);
  // torch.matmul(v, m) == tensor([22., 28.]), shape [2]
  Tensor vm = matmul(v, m);
  CHECK(vm.shape() == Shape{2});
  CHECK(vm.values() == std::vector<double>{22, 28});
  // torch.matmul(m.T, v) == tensor([22., 28.])
  Tensor mv = matmul(tensor({{1.0, 3.0, 5.0}, {2.0, 4.0, 6.0}}), v);
  CHECK(mv.shape() == Shape{2});
  CHECK(mv.values() == std::vector<double>{22, 28});
  // [K] @ [B, K, N] -> [B, N] and [B, M, K] @ [K] -> [B, M]
  Tensor batch = from_values({2, 3, 2}, std::vector<double>{1, 2, 3, 4, 5, 6, 0, 1, 1, 0, 2, 2});
  Tensor vb = matmul(v, batch);
  CHECK(vb.shape() == Shape{2, 2});
  CHECK(vb.values() == std::vector<double>{22, 28, 8, 7});
  Tensor bv =
      matmul(from_values({2, 2, 3}, std::vector<double>{1, 0, 0, 0, 1, 1, 2, 2, 2, 0, 0, 1}), v);
  CHECK(bv.shape() == Shape{2, 2});
  CHECK(bv.values() == std::vector<double>{1, 5, 12, 3});
}

TEST_CASE("matmul: dot is matmul of two vectors", "[matmul]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor d = dot(tensor({1.0, 2.0, 3.0}), tensor({4.0, -5.0, 6.0}));
  CHECK(d.shape() == Shape{});
  CHECK(d.item() == 12.0);
  CHECK(std::string(d.node().op_name()) == "matmul");
}

TEST_CASE("matmul: the book's batched example a @ a.transpose(2, 3) in float32", "[matmul]") {
  Tape tape;
  TapeScope scope(tape);
  // Chapter 3.6.2's tensor of shape [1, 2, 3, 4].
  const std::vector<double> a_values{0.2745, 0.6584, 0.2775, 0.8573, 0.8993, 0.0390,
                                     0.9268, 0.7388, 0.7179, 0.7058, 0.9156, 0.4340,
                                     0.0772, 0.3565, 0.1479, 0.5331, 0.4066, 0.2318,
                                     0.4545, 0.9737, 0.4606, 0.5159, 0.4220, 0.5786};
  Tensor a = from_values({1, 2, 3, 4}, a_values);
  Tensor y = matmul(a, transpose(a, 2, 3));
  REQUIRE(y.shape() == Shape{1, 2, 3, 3});
  REQUIRE(y.dtype() == DType::Float32);
  // From /usr/bin/python3 with torch 1.13 (float32):
  //   [float(v) for v in (a @ a.transpose(2, 3)).flatten()]
  // (the book prints them rounded: 1.3208, 1.1631, 1.2879, 1.1631, 2.2150, ...)
  const std::vector<double> expected{1.320810317993164,   1.1630957126617432, 1.2879095077514648,
                                     1.1630957126617432,  2.215045213699341,  1.842350959777832,
                                     1.2879095077514648,  1.842350959777832,  2.0402133464813232,
                                     0.43912214040756226, 0.7003262042999268, 0.5903421640396118,
                                     0.7003262042999268,  1.3737167119979858, 1.0620473623275757,
                                     0.5903421640396118,  1.0620473623275757, 0.9911670684814453};
  const std::vector<double> got = y.values();
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO(i);
    // float32 sums in a different order than torch's BLAS may differ in the last bit.
    CHECK(got[i] == Approx(expected[i]).epsilon(1e-6));
  }
}

TEST_CASE("matmul: torch goldens, forward and backward, float64 and float32", "[matmul]") {
  // 1-D, 2-D, the fast path ([B, T, C] @ [C, D]) and batch broadcasting, from
  // tests/goldens/layout/make_layout_goldens.py.
  const auto cases = testing::layout_golden_cases("matmul");
  CHECK(cases.size() == 13);
  for (const auto& c : cases) {
    for (DType dtype : {DType::Float64, DType::Float32}) {
      testing::check_golden_case(c, {"a", "b"}, matmul_of, dtype);
    }
  }
}

TEST_CASE("matmul: inner-dim mismatch names both operands", "[matmul][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor a = zeros({3, 2});
  a.set_name("W_query");
  Tensor b = zeros({4, 5});
  CHECK_THROWS_WITH(matmul(a, b), "matmul: a \"W_query\" [3, 2] x b [4, 5]: inner dims 2 != 4");
  CHECK_THROWS_WITH(matmul(zeros({2, 6, 3}), zeros({2, 2, 6})),
                    "matmul: a [2, 6, 3] x b [2, 2, 6]: inner dims 3 != 2");
  CHECK_THROWS_WITH(matmul(zeros({3}), zeros({2, 4})),
                    "matmul: a [3] x b [2, 4]: inner dims 3 != 2");
  CHECK_THROWS_WITH(matmul(zeros({3}), zeros({4})), "matmul: a [3] x b [4]: inner dims 3 != 4");
}

TEST_CASE("matmul: batch dims that do not broadcast, rank 0 and dtypes", "[matmul][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(matmul(zeros({2, 3, 4}), zeros({5, 4, 2})),
                    "matmul: a [2, 3, 4] x b [5, 4, 2]: batch dims [2] and [5] do not broadcast");
  CHECK_THROWS_WITH(
      matmul(zeros({2, 3, 3, 4}), zeros({2, 2, 4, 2})),
      "matmul: a [2, 3, 3, 4] x b [2, 2, 4, 2]: batch dims [2, 3] and [2, 2] do not broadcast");
  CHECK_THROWS_WITH(matmul(scalar(2.0), zeros({3})),
                    "matmul: a [] x b [3]: both operands need at least 1 dim");
  CHECK_THROWS_WITH(matmul(zeros({3}), scalar(2.0)),
                    "matmul: a [3] x b []: both operands need at least 1 dim");
  CHECK_THROWS_WITH(matmul(zeros({2, 2}), zeros({2, 2}, DType::Float64)),
                    "matmul: a [2, 2] is float32 but b [2, 2] is float64");
  // Nothing was recorded by the failed calls beyond their inputs.
  const int32_t before = tape.size();
  CHECK_THROWS(matmul(zeros({2, 3}), zeros({2, 3})));
  CHECK(tape.size() == before + 2);
}

TEST_CASE("matmul: dot accepts only two 1-D operands of equal length", "[matmul][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(dot(zeros({3}), zeros({3, 2})), "dot: a [3] x b [3, 2]: expected 1-D operands");
  CHECK_THROWS_WITH(dot(zeros({2, 3}), zeros({3})), "dot: a [2, 3] x b [3]: expected 1-D operands");
  CHECK_THROWS_WITH(dot(zeros({3}), zeros({4})), "dot: a [3] x b [4]: lengths 3 != 4");
}

GRADCHECK_TEST_CASE("matmul", "2-D shapes") {
  for (auto [m, k, n] : {std::tuple{1, 1, 1}, {2, 3, 4}, {5, 2, 3}}) {
    auto report =
        gradcheck("matmul", matmul_of, {random_input({m, k}, 1), random_input({k, n}, 2)});
    testing::require_gradcheck(report, "matmul");
  }
}

GRADCHECK_TEST_CASE("matmul", "1-D forms") {
  const std::vector<std::pair<Shape, Shape>> shapes{
      {{4}, {4}},       {{3}, {3, 2}},       {{2, 3}, {3}},      {{3}, {2, 3, 4}},
      {{2, 3, 4}, {4}}, {{4}, {2, 2, 4, 3}}, {{2, 1, 3, 4}, {4}}};
  for (const auto& [sa, sb] : shapes) {
    INFO(sa.str() << " @ " << sb.str());
    auto report = gradcheck("matmul", matmul_of, {random_input(sa, 3), random_input(sb, 4)});
    testing::require_gradcheck(report, "matmul");
  }
  auto report = gradcheck("dot", [](std::span<const Tensor> in) { return dot(in[0], in[1]); },
                          {random_input({5}, 5), random_input({5}, 6)});
  testing::require_gradcheck(report, "matmul");
}

GRADCHECK_TEST_CASE("matmul", "batched, with broadcast batch dims") {
  const std::vector<std::pair<Shape, Shape>> shapes{
      {{2, 3, 4}, {4, 5}},           // the fast path: one [6, 4] x [4, 5] GEMM
      {{2, 2, 3, 4}, {4, 3}},        // the fast path from rank 4
      {{3, 4}, {2, 4, 5}},           // a broadcast over b's batch
      {{2, 3, 4}, {2, 4, 3}},        // same batch
      {{2, 2, 3, 2}, {2, 2, 2, 3}},  // [B, H, T, D] @ [B, H, D, T]
      {{2, 1, 3, 4}, {1, 3, 4, 2}},  // both broadcast, in different dims
      {{2, 1, 3, 4}, {5, 4, 2}},     // torch's doc example (b broadcast in dim 0 and rank)
      {{3, 1, 2, 3}, {4, 3, 5}},     // a broadcast in dim 1, b in dim 0
      {{1, 3, 2, 3}, {2, 1, 3, 2}},  // both broadcast, the other way round
      {{3, 4}, {2, 2, 4, 2}},        // 2-D a against a rank-4 b
  };
  for (const auto& [sa, sb] : shapes) {
    INFO(sa.str() << " @ " << sb.str());
    auto report = gradcheck("matmul", matmul_of, {random_input(sa, 7), random_input(sb, 8)});
    testing::require_gradcheck(report, "matmul");
  }
}

GRADCHECK_TEST_CASE("matmul", "one operand constant, and the same tensor on both sides") {
  GradcheckInput constant = random_input({2, 4, 3}, 9);
  constant.requires_grad = false;
  for (bool first : {true, false}) {
    auto report =
        first ? gradcheck("matmul", matmul_of, {random_input({2, 2, 4}, 10), constant})
              : gradcheck("matmul", [](std::span<const Tensor> in) { return matmul(in[1], in[0]); },
                          {random_input({2, 3, 2}, 11), constant});
    testing::require_gradcheck(report, "matmul");
  }
  auto report =
      gradcheck("matmul(x, x)", [](std::span<const Tensor> in) { return matmul(in[0], in[0]); },
                {random_input({2, 3, 3}, 12)});
  testing::require_gradcheck(report, "matmul");
}

TEST_CASE("matmul: 2 threads give the same bits run to run, and the values of 1 thread",
          "[matmul][threads]") {
  // Large enough for the batch loop and the products to be split over the threads.
  for (auto [a_shape, b_shape] : {std::pair<Shape, Shape>{{4, 6, 64, 48}, {4, 6, 48, 64}},
                                  {{4, 6, 64, 48}, {48, 64}},
                                  {{1, 6, 64, 48}, {4, 1, 48, 64}},
                                  {{512, 96}, {96, 80}}}) {
    INFO(a_shape.str() << " @ " << b_shape.str());
    const auto a = random_input(a_shape, 3), b = random_input(b_shape, 4);
    auto run = [&](int threads) {
      set_num_threads(threads);
      Tape tape;
      TapeScope scope(tape);
      Tensor x = from_values(a.shape, a.values, DType::Float32, true);
      Tensor w = from_values(b.shape, b.values, DType::Float32, true);
      Tensor y = matmul(x, w);
      std::vector<double> g(static_cast<size_t>(y.numel()));
      for (size_t i = 0; i < g.size(); ++i) g[i] = std::sin(static_cast<double>(i));
      tape.backward(y, g);
      auto out = std::make_tuple(y.values(), x.grad_values(), w.grad_values());
      set_num_threads(1);
      return out;
    };
    const auto one = run(1), two = run(2), again = run(2);
    CHECK(two == again);  // bit-identical run to run
    // Against 1 thread: equal up to rounding (a product split in two may block its sums
    // differently).
    auto close = [](const std::vector<double>& p, const std::vector<double>& q) {
      if (p.size() != q.size()) return false;
      for (size_t i = 0; i < p.size(); ++i) {
        if (std::abs(p[i] - q[i]) > 1e-4 * (1.0 + std::abs(p[i]))) return false;
      }
      return true;
    };
    CHECK(close(std::get<0>(one), std::get<0>(two)));
    CHECK(close(std::get<1>(one), std::get<1>(two)));
    CHECK(close(std::get<2>(one), std::get<2>(two)));
  }
}
