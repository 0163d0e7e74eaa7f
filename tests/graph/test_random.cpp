// Tests for graph/random.cpp: bit-exact agreement with torch's CPU generator (goldens from torch).
#include <tapegrad/graph/random.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <tapegrad/graph/error.h>
#include "tests/goldens.h"
#include "tests/graph/random_goldens.h"

using namespace tapegrad;

namespace {

using tapegrad::testing::bits_of;
using tapegrad::testing::golden_f32;
using tapegrad::testing::golden_f64;
using tapegrad::testing::golden_ints;
using tapegrad::testing::random_golden;

template <class T>
std::vector<T> uniform(Generator& g, int64_t n, double from = 0.0, double to = 1.0) {
  std::vector<T> v(static_cast<size_t>(n));
  g.uniform(v.data(), n, from, to);
  return v;
}

template <class T>
std::vector<T> normal(Generator& g, int64_t n, double mean = 0.0, double std = 1.0) {
  std::vector<T> v(static_cast<size_t>(n));
  g.normal(v.data(), n, mean, std);
  return v;
}

const std::vector<uint64_t> kSeeds = {123, 789, 0, (uint64_t{1} << 40) + 7};

}  // namespace

TEST_CASE("random: the engine is std::mt19937 on the seed's low 32 bits", "[random]") {
  for (uint64_t seed : {uint64_t{5489}, uint64_t{123}, (uint64_t{1} << 40) + 7}) {
    Generator g(seed);
    std::mt19937 reference(static_cast<uint32_t>(seed));
    for (int i = 0; i < 2000; ++i) REQUIRE(g.random() == reference());
    CHECK(g.initial_seed() == seed);
  }
}

TEST_CASE("random: random64 takes the first draw as the high word", "[random]") {
  Generator a(99);
  Generator b(99);
  const uint64_t hi = a.random();
  const uint64_t lo = a.random();
  CHECK(b.random64() == ((hi << 32) | lo));
}

TEST_CASE("random: rand float32 matches torch for several seeds and sizes", "[random]") {
  for (uint64_t seed : kSeeds) {
    for (int64_t n : {1, 5, 16, 17, 40, 700}) {
      const std::string name = "rand.f32.s" + std::to_string(seed) + ".n" + std::to_string(n);
      INFO(name);
      Generator g(seed);
      CHECK(bits_of(uniform<float>(g, n)) == bits_of(golden_f32(name)));
    }
  }
}

TEST_CASE("random: rand float64 matches torch for several seeds and sizes", "[random]") {
  for (uint64_t seed : kSeeds) {
    for (int64_t n : {1, 5, 16, 17, 40, 700}) {
      const std::string name = "rand.f64.s" + std::to_string(seed) + ".n" + std::to_string(n);
      INFO(name);
      Generator g(seed);
      CHECK(bits_of(uniform<double>(g, n)) == bits_of(golden_f64(name)));
    }
  }
}

TEST_CASE("random: a default Generator is torch.Generator()", "[random]") {
  Generator g;
  CHECK(g.initial_seed() == 67280421310721ULL);
  CHECK(bits_of(uniform<float>(g, 5)) == bits_of(golden_f32("rand.f32.default.n5")));
}

TEST_CASE("random: consecutive calls continue the stream across dtypes", "[random]") {
  Generator g(123);
  CHECK(bits_of(uniform<float>(g, 7)) == bits_of(golden_f32("consec.0.f32")));
  CHECK(bits_of(uniform<double>(g, 9)) == bits_of(golden_f64("consec.1.f64")));
  CHECK(bits_of(uniform<float>(g, 20)) == bits_of(golden_f32("consec.2.f32")));
}

TEST_CASE("random: the book's manual_seed(123) then rand(3, 2) three times", "[random]") {
  manual_seed(123);
  for (int k = 0; k < 3; ++k) {
    INFO(k);
    CHECK(bits_of(uniform<float>(default_generator(), 6)) ==
          bits_of(golden_f32("book.rand3x2." + std::to_string(k))));
  }
  CHECK(default_generator().initial_seed() == 123);
}

TEST_CASE("random: uniform_(from, to) matches torch, with its fused multiply-add", "[random]") {
  for (int k = 0; k < 4; ++k) {
    const std::string name = "uniform." + std::to_string(k);
    INFO(name);
    const std::vector<double> range = golden_f64(name + ".params");
    Generator g32(123);
    CHECK(bits_of(uniform<float>(g32, 64, range[0], range[1])) ==
          bits_of(golden_f32(name + ".f32")));
    Generator g64(123);
    CHECK(bits_of(uniform<double>(g64, 64, range[0], range[1])) ==
          bits_of(golden_f64(name + ".f64")));
  }
}

TEST_CASE("random: uniform rejects the ranges torch rejects, without drawing", "[random]") {
  Generator g(1);
  const std::vector<uint64_t> before = g.state();
  float f = 0;
  double d = 0;
  CHECK_THROWS_AS(g.uniform(&f, 1, 1.0, 0.0), Error);
  CHECK_THROWS_AS(g.uniform(&f, 1, -1.0, 1e39), Error);
  CHECK_THROWS_AS(g.uniform(&f, 1, -3e38, 3e38), Error);
  CHECK_THROWS_AS(g.uniform(&d, 1, std::nan(""), 1.0), Error);
  CHECK_THROWS_AS(g.uniform(&d, 1, 0.0, INFINITY), Error);
  CHECK_THROWS_AS(g.uniform(&d, -1), Error);
  CHECK(g.state() == before);
}

TEST_CASE("random: dropout masks and outputs match torch.nn.Dropout on ones(6, 6)", "[random]") {
  for (const char* p_text : {"0.5", "0.1", "0.0", "1.0"}) {
    const double p = std::stod(p_text);
    for (const char* dtype : {"f32", "f64"}) {
      const std::string name = std::string("dropout.") + dtype + ".p" + p_text;
      INFO(name);
      Generator g(123);
      std::vector<uint8_t> keep(36);
      g.dropout_keep_mask(keep.data(), 36, p);
      std::vector<uint64_t> mask(keep.begin(), keep.end());
      CHECK(mask == golden_ints(name + ".mask"));
      // torch: input * (mask / (1 - p)); p == 1 is input * 0.
      if (std::string(dtype) == "f32") {
        std::vector<float> out(36);
        const float scale = p == 1.0 ? 0.0f : dropout_scale<float>(p);
        for (size_t i = 0; i < 36; ++i) out[i] = 1.0f * (keep[i] != 0 ? scale : 0.0f);
        CHECK(bits_of(out) == bits_of(golden_f32(name + ".out")));
      } else {
        std::vector<double> out(36);
        const double scale = p == 1.0 ? 0.0 : dropout_scale<double>(p);
        for (size_t i = 0; i < 36; ++i) out[i] = 1.0 * (keep[i] != 0 ? scale : 0.0);
        CHECK(bits_of(out) == bits_of(golden_f64(name + ".out")));
      }
      CHECK(bits_of(uniform<float>(g, 4)) == bits_of(golden_f32(name + ".after")));
    }
  }
}

TEST_CASE("random: dropout's x * noise reproduces torch, signed zeros included", "[random]") {
  {
    const std::vector<float> x = golden_f32("dropout.f32.p0.3.x");
    Generator g(7);
    std::vector<uint8_t> keep(x.size());
    g.dropout_keep_mask(keep.data(), static_cast<int64_t>(x.size()), 0.3);
    std::vector<float> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      out[i] = x[i] * (keep[i] != 0 ? dropout_scale<float>(0.3) : 0.0f);
    }
    CHECK(bits_of(out) == bits_of(golden_f32("dropout.f32.p0.3.out")));
  }
  {
    const std::vector<double> x = golden_f64("dropout.f64.p0.3.x");
    Generator g(7);
    std::vector<uint8_t> keep(x.size());
    g.dropout_keep_mask(keep.data(), static_cast<int64_t>(x.size()), 0.3);
    std::vector<double> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      out[i] = x[i] * (keep[i] != 0 ? dropout_scale<double>(0.3) : 0.0);
    }
    CHECK(bits_of(out) == bits_of(golden_f64("dropout.f64.p0.3.out")));
  }
}

TEST_CASE("random: dropout_scale matches torch's kept values for many p", "[random]") {
  const std::vector<double> ps = golden_f64("dropout.scale.p");
  std::vector<float> got32;
  std::vector<double> got64;
  for (double p : ps) {
    got32.push_back(dropout_scale<float>(p));
    got64.push_back(dropout_scale<double>(p));
  }
  CHECK(bits_of(got32) == bits_of(golden_f32("dropout.scale.f32")));
  CHECK(bits_of(got64) == bits_of(golden_f64("dropout.scale.f64")));
}

// The blocked mask (random_block + an integer compare) against the definition, drawn one
// random() at a time: u = (hi << 32 | lo) & (2^53 - 1) scaled by 2^-53, keep when u < 1 - p.
// Lengths across the 512-element blocks and the 624-word twists, from every phase of the stream
// (odd and even numbers of words drawn before), p near the ends, and the state afterwards.
TEST_CASE("random: the blocked dropout mask equals one float64 uniform per element", "[random]") {
  for (double p : {0.1, 0.5, 0.3, 1e-9, 1.0 - 1e-9, 0.999999, 0.25}) {
    for (int64_t before : {0, 1, 2, 311, 622, 623, 624, 625, 1247}) {
      for (int64_t n : {1, 2, 311, 312, 313, 511, 512, 513, 1024, 1500, 5000}) {
        Generator g(42 + static_cast<uint64_t>(before));
        Generator reference = g;
        for (int64_t i = 0; i < before; ++i) {
          g.random();
          reference.random();
        }
        std::vector<uint8_t> keep(static_cast<size_t>(n));
        g.dropout_keep_mask(keep.data(), n, p);
        std::vector<uint8_t> expected(static_cast<size_t>(n));
        for (auto& e : expected) {
          const uint64_t hi = reference.random();
          const uint64_t lo = reference.random();
          const double u =
              static_cast<double>(((hi << 32) | lo) & ((uint64_t{1} << 53) - 1)) * 0x1.0p-53;
          e = u < 1.0 - p ? 1 : 0;
        }
        INFO("p " << p << " before " << before << " n " << n);
        CHECK(keep == expected);
        CHECK(g.state() == reference.state());
        CHECK(g.random() == reference.random());
      }
    }
  }
}

TEST_CASE("random: dropout_keep_mask rejects p outside [0, 1]", "[random]") {
  Generator g(1);
  uint8_t keep = 0;
  CHECK_THROWS_AS(g.dropout_keep_mask(&keep, 1, -0.1), Error);
  CHECK_THROWS_AS(g.dropout_keep_mask(&keep, 1, 1.5), Error);
  CHECK_THROWS_AS(g.dropout_keep_mask(&keep, 1, std::nan("")), Error);
  CHECK(g.state() == Generator(1).state());
}

TEST_CASE("random: randn matches torch on the scalar and blocked paths", "[random]") {
  for (uint64_t seed : {123, 789, 0}) {
    for (int64_t n : {1, 2, 3, 5, 15, 16, 17, 31, 32, 33, 100, 1000}) {
      const std::string tail = ".s" + std::to_string(seed) + ".n" + std::to_string(n);
      INFO(tail);
      Generator g32(seed);
      CHECK(bits_of(normal<float>(g32, n)) == bits_of(golden_f32("randn.f32" + tail)));
      Generator g64(seed);
      CHECK(bits_of(normal<double>(g64, n)) == bits_of(golden_f64("randn.f64" + tail)));
    }
  }
}

TEST_CASE("random: randn's cached second sample survives other calls, as in torch", "[random]") {
  Generator g(123);
  CHECK(bits_of(normal<float>(g, 3)) == bits_of(golden_f32("randn.cache.0.f32")));
  CHECK(bits_of(normal<float>(g, 20)) == bits_of(golden_f32("randn.cache.1.f32")));
  CHECK(bits_of(normal<double>(g, 1)) == bits_of(golden_f64("randn.cache.2.f64")));
  CHECK(bits_of(normal<double>(g, 2)) == bits_of(golden_f64("randn.cache.3.f64")));
}

TEST_CASE("random: normal_(mean, std) matches torch", "[random]") {
  for (int64_t n : {5, 40}) {
    INFO(n);
    const std::string tail = ".m2.5.s0.7.n" + std::to_string(n);
    Generator g32(321);
    CHECK(bits_of(normal<float>(g32, n, 2.5, 0.7)) == bits_of(golden_f32("normal.f32" + tail)));
    Generator g64(321);
    CHECK(bits_of(normal<double>(g64, n, 2.5, 0.7)) == bits_of(golden_f64("normal.f64" + tail)));
  }
  Generator g(1);
  float f = 0;
  CHECK_THROWS_AS(g.normal(&f, 1, 0.0, -1.0), Error);
}

TEST_CASE("random: state() holds torch.get_rng_state()'s fields", "[random]") {
  auto tail = [](const std::vector<uint64_t>& s) {
    return std::vector<uint64_t>(s.begin() + 1, s.end());  // drop the tag
  };
  Generator g(123);
  CHECK(g.state()[0] == Generator::kStateTag);
  CHECK(g.state().size() == Generator::kStateSize);
  CHECK(tail(g.state()) == golden_ints("state.s123.fresh"));
  uniform<float>(g, 5);
  CHECK(tail(g.state()) == golden_ints("state.s123.rand5"));
  Generator n((uint64_t{1} << 40) + 7);
  normal<float>(n, 3);
  CHECK(tail(n.state()) == golden_ints("state.s1099511627783.randn3"));
}

TEST_CASE("random: set_state(state()) restores the stream exactly", "[random]") {
  Generator g(123);
  uniform<float>(g, 5);
  const std::vector<uint64_t> saved = g.state();
  const std::vector<float> first = uniform<float>(g, 10);
  CHECK(bits_of(first) == bits_of(golden_f32("state.s123.rand5.next10")));
  Generator other(999);
  other.set_state(saved);
  CHECK(bits_of(uniform<float>(other, 10)) == bits_of(first));
  CHECK(other.initial_seed() == 123);

  Generator n((uint64_t{1} << 40) + 7);
  normal<float>(n, 3);  // leaves a cached sample
  const std::vector<uint64_t> with_cache = n.state();
  Generator restored;
  restored.set_state(with_cache);
  CHECK(bits_of(normal<double>(restored, 1)) ==
        bits_of(golden_f64("state.s1099511627783.randn3.next1")));
  CHECK(bits_of(normal<double>(n, 1)) == bits_of(golden_f64("state.s1099511627783.randn3.next1")));

  // A twist boundary: 624 words consumed, the next draw twists.
  Generator t(5);
  for (int i = 0; i < 624; ++i) t.random();
  Generator u;
  u.set_state(t.state());
  for (int i = 0; i < 700; ++i) REQUIRE(u.random() == t.random());
}

TEST_CASE("random: set_state rejects malformed states and keeps the old one", "[random]") {
  Generator g(42);
  const std::vector<uint64_t> good = g.state();
  auto rejects = [&](std::vector<uint64_t> bad) {
    CHECK_THROWS_AS(g.set_state(bad), Error);
    CHECK(g.state() == good);
  };
  rejects({});
  rejects(std::vector<uint64_t>(good.begin(), good.end() - 1));
  std::vector<uint64_t> bad = good;
  bad[0] ^= 1;  // tag
  rejects(bad);
  bad = good;
  bad[2] = 0;  // left
  rejects(bad);
  bad = good;
  bad[2] = 625;
  bad[3] = 0;
  rejects(bad);
  bad = good;
  bad[2] = 300;
  bad[3] = 300;  // left + next != 625
  rejects(bad);
  bad = good;
  bad[4 + 17] = uint64_t{1} << 32;  // a word above 32 bits
  rejects(bad);
  bad = good;
  bad[4 + 624] = 2;  // cache flag
  rejects(bad);
  bad = good;
  bad[5 + 624] = 7;  // bits without the flag
  rejects(bad);
}

TEST_CASE("random: manual_seed restarts the stream and drops the cached normal", "[random]") {
  Generator g(123);
  normal<double>(g, 1);  // caches a sample
  g.manual_seed(123);
  CHECK(g.state() == Generator(123).state());
  CHECK(bits_of(normal<double>(g, 1)) == bits_of(golden_f64("randn.f64.s123.n1")));
}

TEST_CASE("random: default_generator is per thread and seeded by manual_seed", "[random]") {
  manual_seed(789);
  CHECK(default_generator().initial_seed() == 789);
  CHECK(bits_of(uniform<float>(default_generator(), 5)) == bits_of(golden_f32("rand.f32.s789.n5")));
  uint64_t other_thread_seed = 0;
  std::thread([&] { other_thread_seed = default_generator().initial_seed(); }).join();
  CHECK(other_thread_seed == Generator::kDefaultSeed);
  manual_seed(Generator::kDefaultSeed);
}
