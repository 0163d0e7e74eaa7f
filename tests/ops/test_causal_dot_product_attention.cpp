// Tests for ops/causal_dot_product_attention.cpp: with dropout drawn, bit for bit the composed ops
// (forward, every gradient, the dropout draws); without (eval or p = 0, the fused kernels), the
// composed ops within rounding (float32: 1e-5 absolute + 1e-5 relative, float64: 1e-13 + 1e-13;
// inputs of magnitude <= 2) and no draws; across shapes, dtypes, threads and GEMM backends;
// torch's numbers on small cases; float64 gradcheck with a fixed mask; bad input.
#include <cmath>
#include <string>
#include <utility>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/ops/ops.h>
#include "tests/compare.h"
#include "tests/ops/attention_goldens.h"
#include "tests/ops/fused_compare.h"
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;
using testing::run_forward_backward;

namespace {

// tests/goldens/sdpa/sdpa_goldens.txt, written by make_sdpa_goldens.py.
const testing::GoldenTensor& sdpa_golden(const std::string& name) {
  return testing::golden_file("sdpa/sdpa_goldens.txt")[name];
}

Tensor sdpa_tensor(const std::string& name) {
  const testing::GoldenTensor& g = sdpa_golden(name);
  return from_values(g.shape, g.values, g.dtype, /*requires_grad=*/true);
}

// nn::MultiHeadAttention's ops before this op existed, on [B, T, C] projections.
Tensor composed(const Tensor& q, const Tensor& k, const Tensor& v, int64_t heads, double p,
                bool training, Generator& g) {
  const double d = static_cast<double>(q.size(2) / heads);
  Tensor qh = split_heads(q, heads), kh = split_heads(k, heads), vh = split_heads(v, heads);
  Tensor w = softmax(causal_mask(matmul(qh, transpose(kh, 2, 3))) / std::sqrt(d), -1);
  if (training && p > 0.0) w = dropout(w, p, true, g);
  return merge_heads(matmul(w, vh));
}

struct Case {
  Shape shape;  // [B, T, C]
  int64_t heads;
  double p;
  bool training;
};

// The largest |got - want| / (tol + tol·|want|): < 1 when within tol absolute + tol relative.
double scaled_error(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  if (got.size() != want.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = testing::worse(worst, std::abs(got[i] - want[i]) / (tol + tol * std::abs(want[i])));
  }
  return worst;
}

// Bit for bit where dropout is drawn (the exact kernel); within rounding otherwise (the fused).
void check_against_composed(const Case& c, DType dtype, uint64_t seed) {
  const auto q = random_input(c.shape, seed, -2.0, 2.0);
  const auto k = random_input(c.shape, seed + 1, -2.0, 2.0);
  const auto v = random_input(c.shape, seed + 2);
  const auto up = random_input(c.shape, seed + 3);
  Generator g_fused(seed), g_composed(seed);
  auto fused = run_forward_backward(
      [&](std::span<const Tensor> in) {
        return causal_dot_product_attention(in[0], in[1], in[2], c.heads, c.p, c.training, g_fused);
      },
      {q, k, v}, dtype, up.values);
  auto reference = run_forward_backward(
      [&](std::span<const Tensor> in) {
        return composed(in[0], in[1], in[2], c.heads, c.p, c.training, g_composed);
      },
      {q, k, v}, dtype, up.values);
  INFO("shape " << c.shape.str() << " H " << c.heads << " p " << c.p << " training " << c.training
                << " dtype " << dtype_name(dtype) << " threads " << num_threads());
  CHECK(g_fused.state() == g_composed.state());  // the same draws (none without dropout)
  if (c.training && c.p > 0.0) {
    CHECK(fused.value == reference.value);
    for (size_t i = 0; i < 3; ++i) {
      INFO("gradient of input " << i);
      CHECK(fused.grads[i] == reference.grads[i]);
    }
    return;
  }
  const double tol = dtype == DType::Float32 ? 1e-5 : 1e-13;
  CHECK(scaled_error(fused.value, reference.value, tol) < 1.0);
  for (size_t i = 0; i < 3; ++i) {
    INFO("gradient of input " << i);
    CHECK(scaled_error(fused.grads[i], reference.grads[i], tol) < 1.0);
  }
}

}  // namespace

TEST_CASE(
    "causal_dot_product_attention: the composed ops, bit for bit with dropout and within rounding "
    "without",
    "[causal_dot_product_attention]") {
  // Without dropout: the direct kernel (T <= 128, D = 16, 32, 64) and the blocked one (D not a
  // multiple of 16, or T > 128: across its 32-row query blocks), training with p = 0 and eval.
  const std::vector<Case> cases = {
      {{2, 5, 6}, 3, 0.0, false},    {{2, 5, 6}, 3, 0.5, true},     {{1, 7, 8}, 2, 0.1, true},
      {{3, 16, 64}, 4, 0.1, true},   {{2, 33, 24}, 2, 0.2, true},   {{1, 1, 4}, 1, 0.3, true},
      {{2, 64, 64}, 4, 0.1, true},   {{1, 19, 12}, 1, 0.0, true},   {{2, 9, 16}, 4, 0.1, false},
      {{1, 40, 128}, 2, 0.25, true}, {{2, 64, 64}, 4, 0.0, true},   {{1, 40, 128}, 2, 0.1, false},
      {{2, 33, 24}, 2, 0.0, true},   {{1, 150, 32}, 2, 0.1, false}, {{1, 1, 4}, 1, 0.0, true}};
  const int threads_before = num_threads();
  const GemmBackend backend_before = gemm_backend();
  for (GemmBackend backend : {GemmBackend::Eigen, GemmBackend::OpenBLAS}) {
    if (!set_gemm_backend(backend)) continue;  // a build without OpenBLAS
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      uint64_t seed = 100;
      for (const Case& c : cases) {
        for (DType dtype : {DType::Float32, DType::Float64}) {
          check_against_composed(c, dtype, ++seed);
        }
      }
    }
  }
  set_num_threads(threads_before);
  set_gemm_backend(backend_before);
}

TEST_CASE("causal_dot_product_attention: the weights it keeps are the softmax before dropout",
          "[causal_dot_product_attention]") {
  Tape tape;
  TapeScope scope(tape);
  const auto qi = random_input({2, 6, 8}, 7), ki = random_input({2, 6, 8}, 8);
  const auto vi = random_input({2, 6, 8}, 9);
  Tensor q = from_values(qi.shape, qi.values), k = from_values(ki.shape, ki.values);
  Tensor v = from_values(vi.shape, vi.values);
  Generator g(5);
  Tensor expected =
      softmax(causal_mask(matmul(split_heads(q, 2), transpose(split_heads(k, 2), 2, 3))) / 2.0, -1);
  Tensor out = causal_dot_product_attention(q, k, v, 2, 0.5, true, g);
  CHECK(causal_attention_weights(out) == expected.values());  // [2, 2, 6, 6]
  // The fused kernel keeps no weights: recomputed, bit for bit the composed softmax still.
  Tensor out_eval = causal_dot_product_attention(q, k, v, 2, 0.5, false, g);
  CHECK(causal_attention_weights(out_eval) == expected.values());
  CHECK_THROWS_WITH(causal_attention_weights(q),
                    Catch::Contains("causal_attention_weights") && Catch::Contains("[2, 6, 8]") &&
                        Catch::Contains("not an output of causal_dot_product_attention"));
}

TEST_CASE("causal_dot_product_attention: torch's attention with dropout on a small case",
          "[causal_dot_product_attention][golden]") {
  // make_sdpa_goldens.py: q, k, v [2, 4, 6] float32, 2 heads, torch.manual_seed(17), then the
  // book's MultiHeadAttention ops with nn.Dropout(0.5); upstream gradient g.
  Tape tape;
  TapeScope scope(tape);
  Tensor q = sdpa_tensor("sdpa.q"), k = sdpa_tensor("sdpa.k"), v = sdpa_tensor("sdpa.v");
  Generator g(17);
  Tensor out = causal_dot_product_attention(q, k, v, 2, 0.5, true, g);
  const auto near = [](const std::vector<double>& got, const std::vector<double>& want) {
    REQUIRE(got.size() == want.size());
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      worst = testing::worse(worst, std::abs(got[i] - want[i]) / (1e-6 + 1e-5 * std::abs(want[i])));
    }
    return worst;  // < 1: within 1e-6 absolute + 1e-5 relative
  };
  CHECK(near(out.values(), sdpa_golden("sdpa.out").values) < 1.0);
  tape.backward(out, sdpa_golden("sdpa.g").values);
  CHECK(near(q.grad_values(), sdpa_golden("sdpa.dq").values) < 1.0);
  CHECK(near(k.grad_values(), sdpa_golden("sdpa.dk").values) < 1.0);
  CHECK(near(v.grad_values(), sdpa_golden("sdpa.dv").values) < 1.0);
}

TEST_CASE("causal_dot_product_attention: torch's attention without dropout (the fused kernels)",
          "[causal_dot_product_attention][golden]") {
  // make_sdpa_goldens.py, eval: the small case above (blocked kernel, D = 3), [1, 24, 32] with 2
  // heads (direct kernel, D = 16) and [1, 70, 8] with 1 head (blocked kernel, three query blocks).
  for (const auto& [prefix, heads] :
       {std::pair<std::string, int64_t>{"sdpa.eval", 2}, {"sdpa.direct", 2}, {"sdpa.blocked", 1}}) {
    INFO(prefix);
    for (const bool training : {false, true}) {  // eval, or training with p = 0
      Tape tape;
      TapeScope scope(tape);
      Tensor q = sdpa_tensor(prefix + ".q"), k = sdpa_tensor(prefix + ".k");
      Tensor v = sdpa_tensor(prefix + ".v");
      Generator g(17);
      Tensor out = causal_dot_product_attention(q, k, v, heads, training ? 0.0 : 0.5, training, g);
      // 1e-5 absolute + 1e-5 relative: float32 rounding of sums in another order.
      CHECK(scaled_error(out.values(), sdpa_golden(prefix + ".out").values, 1e-5) < 1.0);
      tape.backward(out, sdpa_golden(prefix + ".g").values);
      CHECK(scaled_error(q.grad_values(), sdpa_golden(prefix + ".dq").values, 1e-5) < 1.0);
      CHECK(scaled_error(k.grad_values(), sdpa_golden(prefix + ".dk").values, 1e-5) < 1.0);
      CHECK(scaled_error(v.grad_values(), sdpa_golden(prefix + ".dv").values, 1e-5) < 1.0);
    }
  }
}

GRADCHECK_TEST_CASE(
    "causal_dot_product_attention",
    "heads, dropout with one mask per evaluation (reseeded generator), eval (blocked and "
    "direct kernels)") {
  uint64_t seed = 300;
  for (const Case& c : {Case{{2, 4, 6}, 2, 0.3, true}, Case{{1, 5, 4}, 1, 0.0, false},
                        Case{{2, 3, 8}, 4, 0.5, true}, Case{{1, 6, 16}, 1, 0.1, false}}) {
    INFO(c.shape.str() << " H " << c.heads << " p " << c.p);
    auto report = gradcheck("causal_dot_product_attention",
                            [&c](std::span<const Tensor> in) {
                              Generator g(99);  // the same mask at every evaluation
                              return causal_dot_product_attention(in[0], in[1], in[2], c.heads, c.p,
                                                                  c.training, g);
                            },
                            {random_input(c.shape, ++seed), random_input(c.shape, ++seed),
                             random_input(c.shape, ++seed)});
    testing::require_gradcheck(report, "causal_dot_product_attention");
  }
}

TEST_CASE("causal_dot_product_attention: bad input names the op, the tensors and their shapes",
          "[causal_dot_product_attention][errors]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor q = zeros({2, 4, 6}), k = zeros({2, 4, 6}), v = zeros({2, 4, 6});
  Tensor k5 = zeros({2, 5, 6}), flat = zeros({4, 6}), v64 = zeros({2, 4, 6}, DType::Float64);
  q.set_name("queries");
  Generator g(3);
  const std::vector<uint64_t> before = g.state();
  const int32_t nodes = tape.size();
  CHECK_THROWS_WITH(causal_dot_product_attention(q, k5, v, 2, 0.1, true, g),
                    "causal_dot_product_attention: q \"queries\" [2, 4, 6], k [2, 5, 6], v "
                    "[2, 4, 6]: q, k and v must have the same shape");
  CHECK_THROWS_WITH(causal_dot_product_attention(q, k, v, 4, 0.1, true, g),
                    Catch::Contains("q \"queries\" [2, 4, 6]") &&
                        Catch::Contains("C 6 must be divisible by num_heads 4"));
  CHECK_THROWS_WITH(causal_dot_product_attention(q, k, v, 0, 0.1, true, g),
                    Catch::Contains("must be divisible by num_heads 0"));
  CHECK_THROWS_WITH(causal_dot_product_attention(flat, flat, flat, 2),
                    Catch::Contains("[4, 6]") && Catch::Contains("expected 3-D [B, T, C]"));
  CHECK_THROWS_WITH(causal_dot_product_attention(q, k, v, 2, 1.0, true, g),
                    Catch::Contains("dropout p must be in [0, 1), got 1.0"));
  CHECK_THROWS_WITH(causal_dot_product_attention(q, k, v64, 2),
                    Catch::Contains("causal_dot_product_attention") && Catch::Contains("float64"));
  CHECK(tape.size() == nodes);  // nothing recorded
  CHECK(g.state() == before);
}
