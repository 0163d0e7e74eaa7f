// Tests for ops/cached_attention.cpp.
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/gradcheck_registry.h"

using namespace tapegrad;

namespace {

// A cache [B, H, W, D_h] filled with the keys and values of `length` tokens k, v [B, length, H·D_h]
// (the layout nn::MultiHeadAttention writes).
struct Cache {
  std::vector<double> k, v;
  int64_t B, H, W, Dh, length;
  KVCacheRef<double> ref() const { return {k, v, B, H, W, Dh, length}; }
};

Cache fill(const std::vector<double>& keys, const std::vector<double>& values, int64_t B, int64_t H,
           int64_t W, int64_t Dh, int64_t length) {
  Cache c{std::vector<double>(static_cast<size_t>(B * H * W * Dh), 0.0),
          std::vector<double>(static_cast<size_t>(B * H * W * Dh), 0.0),
          B,
          H,
          W,
          Dh,
          length};
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < length; ++t) {
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t d = 0; d < Dh; ++d) {
          const size_t src = static_cast<size_t>(((b * length + t) * H + h) * Dh + d);
          const size_t dst = static_cast<size_t>(((b * H + h) * W + t) * Dh + d);
          c.k[dst] = keys[src];
          c.v[dst] = values[src];
        }
      }
    }
  }
  return c;
}

}  // namespace

TEST_CASE("cached_attention: the last T queries of the causal attention over the cache",
          "[cached_attention]") {
  const int64_t B = 2, H = 2, Dh = 3, C = H * Dh, L = 5, W = 8;
  const GradcheckInput q = random_input(Shape{B, L, C}, 1);
  const GradcheckInput k = random_input(Shape{B, L, C}, 2);
  const GradcheckInput v = random_input(Shape{B, L, C}, 3);
  const Cache cache = fill(k.values, v.values, B, H, W, Dh, L);
  Tape tape;
  TapeScope scope(tape);
  NoGradGuard no_grad;
  // The whole sequence through the uncached op: its last rows are what the cache gives.
  const std::vector<double> full =
      causal_dot_product_attention(from_values(q.shape, q.values, DType::Float64),
                                   from_values(k.shape, k.values, DType::Float64),
                                   from_values(v.shape, v.values, DType::Float64), H)
          .values();
  for (int64_t T : {int64_t{1}, int64_t{2}, L}) {
    INFO("T = " << T);
    std::vector<double> q_new;
    for (int64_t b = 0; b < B; ++b) {
      const auto row = q.values.begin() + (b * L + L - T) * C;
      q_new.insert(q_new.end(), row, row + T * C);
    }
    Tensor y = cached_attention(from_values(Shape{B, T, C}, q_new, DType::Float64), cache.ref());
    CHECK(y.shape() == Shape{B, T, C});
    const std::vector<double> got = y.values();
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t i = 0; i < T * C; ++i) {
        CHECK(got[static_cast<size_t>(b * T * C + i)] ==
              Approx(full[static_cast<size_t>((b * L + L - T) * C + i)]).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("cached_attention: a cache that does not fit q is an Error naming the shapes",
          "[cached_attention]") {
  const int64_t B = 2, H = 2, Dh = 3, W = 4;
  const Cache cache = fill(std::vector<double>(B * 3 * H * Dh, 0.5),
                           std::vector<double>(B * 3 * H * Dh, 0.5), B, H, W, Dh, 3);
  Tape tape;
  TapeScope scope(tape);
  NoGradGuard no_grad;
  // Each message names the op, q's shape and the cache's, and says what does not fit.
  const auto message = [&](const Tensor& q, const KVCacheRef<double>& c) -> std::string {
    try {
      cached_attention(q, c);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  const auto check = [](const std::string& got, const std::string& q_shape,
                        const std::string& what) {
    INFO(got);
    CHECK(got.find("cached_attention: x " + q_shape) == 0);
    CHECK(got.find("cache [2, 2, 4, 3] holding 3") != std::string::npos);
    CHECK(got.find(what) != std::string::npos);
  };
  check(message(zeros({2, 1, 5}, DType::Float64), cache.ref()), "[2, 1, 5]", "q must be [2, T, 6]");
  check(message(zeros({3, 1, 6}, DType::Float64), cache.ref()), "[3, 1, 6]", "q must be [2, T, 6]");
  check(message(zeros({2, 6}, DType::Float64), cache.ref()), "[2, 6]", "q must be [2, T, 6]");
  check(message(zeros({2, 4, 6}, DType::Float64), cache.ref()), "[2, 4, 6]",
        "must hold the 4 new tokens");
  check(message(zeros({2, 1, 6}), cache.ref()), "[2, 1, 6]", "q is float32, the cache float64");
  KVCacheRef<double> short_keys = cache.ref();
  short_keys.keys = short_keys.keys.first(10);
  check(message(zeros({2, 1, 6}, DType::Float64), short_keys), "[2, 1, 6]",
        "keys hold 10 and values 48 elements, not 48");
  KVCacheRef<double> overfull = cache.ref();
  overfull.length = 5;
  const std::string got = message(zeros({2, 1, 6}, DType::Float64), overfull);
  CHECK(got.find("holding 5") != std::string::npos);
  CHECK(got.find("within its window") != std::string::npos);
  for (int32_t i = 0; i < tape.size(); ++i) CHECK(tape.node(i).op == nullptr);  // leaves only
}

INFERENCE_ONLY_TEST_CASE("cached_attention", "grad mode on is an Error, nothing recorded") {
  const Cache cache = fill(std::vector<double>(6, 0.5), std::vector<double>(6, 0.5), 1, 2, 2, 3, 1);
  Tape tape;
  TapeScope scope(tape);
  for (bool q_requires_grad : {false, true}) {
    Tensor q = zeros({1, 1, 6}, DType::Float64);
    if (q_requires_grad) q = requires_grad(q);
    const int32_t before = tape.size();
    CHECK_THROWS_WITH(cached_attention(q, cache.ref()),
                      Catch::Contains("cached_attention") && Catch::Contains("[1, 1, 6]") &&
                          Catch::Contains("inference only") && Catch::Contains("NoGradGuard"));
    CHECK(tape.size() == before);
  }
  NoGradGuard no_grad;
  const std::vector<double> y =
      cached_attention(zeros({1, 1, 6}, DType::Float64), cache.ref()).values();
  CHECK(y == std::vector<double>(6, 0.5));  // one key: all weight on its value
}
