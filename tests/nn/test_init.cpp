// Tests for nn/init.cpp: nn.Linear's default init, bounds and draws bit for bit as torch's
// (goldens from tests/goldens/random/make_random_goldens.py).
#include <tapegrad/nn/init.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include "tests/goldens.h"
#include "tests/graph/random_goldens.h"

using namespace tapegrad;
using namespace tapegrad::nn;

namespace {

using tapegrad::testing::bits_of;
using tapegrad::testing::golden_f32;
using tapegrad::testing::golden_f64;
using tapegrad::testing::golden_ints;

template <class T>
std::vector<T> uniform(Generator& g, int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  g.uniform(v.data(), n);
  return v;
}

}  // namespace

TEST_CASE("init: the nn.Linear weight and bias bounds match torch's python", "[init]") {
  const std::vector<uint64_t> fans = golden_ints("bound.fan_in");
  const std::vector<double> weight = golden_f64("bound.weight");
  const std::vector<double> bias = golden_f64("bound.bias");
  std::vector<double> got_weight, got_bias;
  for (uint64_t fan : fans) {
    got_weight.push_back(linear_init_weight_bound(static_cast<int64_t>(fan)));
    got_bias.push_back(linear_init_bound(static_cast<int64_t>(fan)));
  }
  CHECK(bits_of(got_weight) == bits_of(weight));
  CHECK(bits_of(got_bias) == bits_of(bias));
  CHECK(linear_init_bound(0) == 0.0);
  CHECK_THROWS_AS(linear_init_bound(-1), Error);
  CHECK_THROWS_AS(kaiming_uniform_bound(0, 1.0), Error);
}

TEST_CASE("init: nn.Linear's default init matches torch, draws included", "[init]") {
  struct Config {
    int64_t in, out;
    bool bias;
  };
  for (uint64_t seed : {789, 123}) {
    for (Config c :
         {Config{3, 2, false}, Config{3, 2, true}, Config{6, 4, true}, Config{64, 10, true}}) {
      const std::string base = ".s" + std::to_string(seed) + "." + std::to_string(c.in) + "x" +
                               std::to_string(c.out) + (c.bias ? "" : ".nobias");
      INFO(base);
      {
        Generator g(seed);
        std::vector<float> w(static_cast<size_t>(c.in * c.out)), b(static_cast<size_t>(c.out));
        linear_init_weight(w.data(), c.out, c.in, g);
        CHECK(bits_of(w) == bits_of(golden_f32("linear.f32" + base + ".weight")));
        if (c.bias) {
          linear_init_bias(b.data(), c.out, c.in, g);
          CHECK(bits_of(b) == bits_of(golden_f32("linear.f32" + base + ".bias")));
        }
        CHECK(bits_of(uniform<float>(g, 4)) == bits_of(golden_f32("linear.f32" + base + ".after")));
      }
      {
        Generator g(seed);
        std::vector<double> w(static_cast<size_t>(c.in * c.out)), b(static_cast<size_t>(c.out));
        linear_init_weight(w.data(), c.out, c.in, g);
        CHECK(bits_of(w) == bits_of(golden_f64("linear.f64" + base + ".weight")));
        if (c.bias) {
          linear_init_bias(b.data(), c.out, c.in, g);
          CHECK(bits_of(b) == bits_of(golden_f64("linear.f64" + base + ".bias")));
        }
        CHECK(bits_of(uniform<float>(g, 4)) == bits_of(golden_f32("linear.f64" + base + ".after")));
      }
    }
  }
}

TEST_CASE("init: an empty Linear weight draws nothing, a fan_in 0 bias draws zeros", "[init]") {
  Generator g(3);
  Generator reference(3);
  float w = 1;
  linear_init_weight(&w, 3, 0, g);
  CHECK(g.state() == reference.state());
  std::vector<float> b(3, 1.0f);
  linear_init_bias(b.data(), 3, 0, g);
  CHECK(bits_of(b) == std::vector<uint32_t>(3, 0));
  for (int i = 0; i < 3; ++i) reference.random();
  CHECK(g.state() == reference.state());
}
