// Tests for graph/factory.cpp: the leaf factories, and torch's arange, linspace, logspace, eye and
// random factories (with ops/bernoulli.cpp's bernoulli and the in-place normal_ / uniform_)
// against tests/goldens/factories/factories.txt.
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/ops/ops.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tests/goldens.h"

using namespace tapegrad;

TEST_CASE("factories: another tensor's shape stays valid while the leaf is appended", "[factory]") {
  // zeros(x.shape()) passes a reference into the tape's nodes, which appending the new leaf may
  // move: each factory must read the size from its own leaf (the sanitizer build caught
  // ones/full/rand reading the old one).
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  Generator generator(3);
  for (int i = 0; i < 300; ++i) {  // enough appends to move the node vector several times
    const Tensor made[] = {zeros(x.shape()), ones(x.shape()), full(x.shape(), 2.5),
                           rand(x.shape(), DType::Float32, generator)};
    for (const Tensor& t : made) REQUIRE(t.shape() == Shape{2, 3});
    REQUIRE(made[1].values() == std::vector<double>(6, 1.0));
    REQUIRE(made[2].values() == std::vector<double>(6, 2.5));
  }
}

namespace test_factory {

const testing::GoldenFile& goldens() {
  static const testing::GoldenFile golden("factories", "factories.txt");
  return golden;
}

// Bit for bit, the sign of zero included.
void require_bits(const Tensor& got, const testing::GoldenTensor& want, DType dtype) {
  INFO(want.name);
  REQUIRE(got.dtype() == dtype);
  REQUIRE(got.shape() == want.shape);
  const std::vector<double> values = got.values();
  for (size_t i = 0; i < values.size(); ++i) {
    INFO("element " << i << ": " << values[i] << " vs torch " << want.values[i]);
    REQUIRE(std::bit_cast<uint64_t>(values[i]) == std::bit_cast<uint64_t>(want.values[i]));
  }
}

const std::pair<const char*, DType> kDtypes[] = {{"f32", DType::Float32}, {"f64", DType::Float64}};

}  // namespace test_factory

TEST_CASE("arange and linspace: torch's values bit for bit", "[factory][goldens]") {
  const testing::GoldenFile& golden = test_factory::goldens();
  Tape tape;
  TapeScope scope(tape);
  int cases = 0;
  for (const char* op : {"arange", "linspace"}) {
    for (int i = 0; golden.contains(std::string("args.") + op + "." + std::to_string(i)); ++i) {
      const std::vector<double>& a =
          golden[std::string("args.") + op + "." + std::to_string(i)].values;
      for (const auto& [tag, dtype] : test_factory::kDtypes) {
        const std::string name = std::string(op) + "." + std::to_string(i) + "." + tag;
        const Tensor t = std::string(op) == "arange"
                             ? arange(a[0], a[1], a[2], dtype)
                             : linspace(a[0], a[1], static_cast<int64_t>(a[2]), dtype);
        test_factory::require_bits(t, golden[name], dtype);
        ++cases;
      }
    }
  }
  CHECK(cases == 2 * (13 + 14));
  // arange(end) counts from 0 by 1
  CHECK(arange(4.0).values() == std::vector<double>{0, 1, 2, 3});
  CHECK(arange(2.5, DType::Float64).values() == std::vector<double>{0, 1, 2});
}

TEST_CASE("logspace: torch's values bit for bit, any base", "[factory][goldens]") {
  const testing::GoldenFile& golden = test_factory::goldens();
  Tape tape;
  TapeScope scope(tape);
  int cases = 0;
  for (int i = 0; golden.contains("args.logspace." + std::to_string(i)); ++i) {
    const std::vector<double>& a = golden["args.logspace." + std::to_string(i)].values;
    for (const auto& [tag, dtype] : test_factory::kDtypes) {
      const std::string name = "logspace." + std::to_string(i) + "." + tag;
      const Tensor t = logspace(a[0], a[1], static_cast<int64_t>(a[2]), a[3], dtype);
      INFO(name);
      const testing::GoldenTensor& want = golden[name];
      REQUIRE(t.shape() == want.shape);
      const std::vector<double> values = t.values();
      for (size_t k = 0; k < values.size(); ++k) {
        INFO("element " << k << ": " << values[k] << " vs torch " << want.values[k]);
        if (std::isnan(want.values[k])) {  // a negative base's fractional powers: NaN's sign aside
          CHECK(std::isnan(values[k]));
        } else {
          CHECK(std::bit_cast<uint64_t>(values[k]) == std::bit_cast<uint64_t>(want.values[k]));
        }
      }
      ++cases;
    }
  }
  CHECK(cases == 2 * 14);
  CHECK(logspace(0.0, 2.0, 3).values() == std::vector<double>{1, 10, 100});  // base 10
}

TEST_CASE("eye: torch's identity matrices, square or not", "[factory][goldens]") {
  const testing::GoldenFile& golden = test_factory::goldens();
  Tape tape;
  TapeScope scope(tape);
  for (const auto& [n, m] :
       std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 1}, {3, 3}, {2, 4}, {4, 2}, {0, 3}}) {
    test_factory::require_bits(
        eye(n, m), golden["eye." + std::to_string(n) + "." + std::to_string(m)], DType::Float32);
  }
  CHECK(eye(2).values() == std::vector<double>{1, 0, 0, 1});
  CHECK(eye(2, std::nullopt, DType::Float64).dtype() == DType::Float64);
}

TEST_CASE("randn, rand and randint: torch's streams from the same seed", "[factory][goldens]") {
  const testing::GoldenFile& golden = test_factory::goldens();
  Tape tape;
  TapeScope scope(tape);
  const DType f32 = DType::Float32, f64 = DType::Float64;
  for (uint64_t seed : {uint64_t{0}, uint64_t{123}, uint64_t{20261127}}) {
    const std::string s = "seq." + std::to_string(seed) + ".";
    INFO(s);
    manual_seed(seed);
    // The same draws, in the same order, as make_factories_goldens.py's sequence().
    test_factory::require_bits(randn({2, 3}), golden[s + "randn.2x3"], f32);
    test_factory::require_bits(randn({20}), golden[s + "randn.20"], f32);
    test_factory::require_bits(randn({5}, f64), golden[s + "randn.5.f64"], f64);
    test_factory::require_bits(randn({4, 4}), golden[s + "randn.4x4"], f32);
    test_factory::require_bits(rand({4}), golden[s + "rand.4"], f32);
    test_factory::require_bits(randn({3, 7}, f64), golden[s + "randn.3x7.f64"], f64);
    for (const auto& [ids, name] : std::vector<std::pair<Ids, std::string>>{
             {randint(0, 10, {3, 4}), "randint.0.10.3x4"},
             {randint(-5, int64_t{1} << 40, {6}), "randint.-5.1099511627776.6"},
             {randint(7, {2, 2}), "randint.0.7.2x2"}}) {
      const testing::GoldenTensor& want = golden[s + name];
      INFO(name);
      REQUIRE(want.integer);
      CHECK(ids.shape() == want.shape);
      CHECK(std::vector<int64_t>(ids.values().begin(), ids.values().end()) == want.ints());
    }
    test_factory::require_bits(randn({1}), golden[s + "randn.1"], f32);
    test_factory::require_bits(randn({1}, f64), golden[s + "randn.1.f64"], f64);
    test_factory::require_bits(randn({33}), golden[s + "randn.33"], f32);
    // bernoulli(p), bernoulli(x, p), randperm (a long one by its slices), the in-place fills.
    const testing::GoldenTensor& p = golden["bernoulli_p.f32"];
    const Tensor p32 = from_values(p.shape, p.values);
    const Tensor p64 = from_values(p.shape, p.values, f64);
    test_factory::require_bits(bernoulli(p32), golden[s + "bernoulli.f32"], f32);
    test_factory::require_bits(bernoulli(p64), golden[s + "bernoulli.f64"], f64);
    test_factory::require_bits(bernoulli(zeros({2, 3}), 0.3), golden[s + "bernoulli_scalar.2x3"],
                               f32);
    test_factory::require_bits(bernoulli(zeros({7}, f64), 0.75),
                               golden[s + "bernoulli_scalar.7.f64"], f64);
    for (const auto& [n, name] : std::vector<std::pair<int64_t, std::string>>{
             {10, "randperm.10"}, {1, "randperm.1"}, {0, "randperm.0"}}) {
      const Ids perm = randperm(n);
      INFO(name);
      CHECK(perm.shape() == Shape{n});
      CHECK(std::vector<int64_t>(perm.values().begin(), perm.values().end()) ==
            golden[s + name].ints());
    }
    test_factory::require_bits(randperm(12, f64), golden[s + "randperm.12.f64"], f64);
    const Ids long_perm = randperm(100003);
    const std::span<const int64_t> all = long_perm.values();
    std::vector<int64_t> strided;
    for (size_t k = 0; k < all.size(); k += 1009) strided.push_back(all[k]);
    CHECK(std::vector<int64_t>(all.begin(), all.begin() + 16) ==
          golden[s + "randperm.100003.head"].ints());
    CHECK(std::vector<int64_t>(all.end() - 16, all.end()) ==
          golden[s + "randperm.100003.tail"].ints());
    CHECK(strided == golden[s + "randperm.100003.strided"].ints());
    test_factory::require_bits(normal_(zeros({3, 4}), 2.0, 0.5), golden[s + "normal_.3x4"], f32);
    test_factory::require_bits(normal_(zeros({20}, f64), -1.0, 3.0), golden[s + "normal_.20.f64"],
                               f64);
    test_factory::require_bits(uniform_(zeros({5}), -2.0, 3.0), golden[s + "uniform_.5"], f32);
    test_factory::require_bits(uniform_(zeros({2, 2}, f64)), golden[s + "uniform_.2x2.f64"], f64);
    test_factory::require_bits(randn({3}), golden[s + "randn.3.after"], f32);
  }
  // A generator of one's own draws the same stream without touching the default one.
  Generator g(123);
  manual_seed(123);
  CHECK(randn({7}, f64, g).values() == randn({7}, f64).values());
  CHECK(randint(3, 9, {5}, g).values()[0] >= 3);
}

TEST_CASE("zeros_like, ones_like and full_like take x's shape and dtype", "[factory]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = requires_grad(tensor({{1.0, 2.0, 3.0}}, DType::Float64));
  for (const Tensor& t : {zeros_like(x), ones_like(x), full_like(x, -2.5)}) {
    CHECK(t.shape() == Shape{1, 3});
    CHECK(t.dtype() == DType::Float64);
    CHECK_FALSE(t.requires_grad());
  }
  CHECK(zeros_like(x).values() == std::vector<double>(3, 0.0));
  CHECK(ones_like(x).values() == std::vector<double>(3, 1.0));
  CHECK(full_like(x, -2.5).values() == std::vector<double>(3, -2.5));
}

TEST_CASE("empty, empty_like, rand_like and randn_like: x's shape and dtype, rand's draws",
          "[factory]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, DType::Float64);
  CHECK(empty({2, 3}).values() == std::vector<double>(6, 0.0));
  CHECK(empty({2, 3}).dtype() == DType::Float32);
  CHECK(empty_like(x).shape() == x.shape());
  CHECK(empty_like(x).dtype() == DType::Float64);
  manual_seed(7);
  const std::vector<double> u = rand({2, 3}, DType::Float64).values();
  const std::vector<double> n = randn({2, 3}, DType::Float64).values();
  manual_seed(7);
  const Tensor ru = rand_like(x), rn = randn_like(x);
  CHECK(ru.shape() == x.shape());
  CHECK(rn.dtype() == DType::Float64);
  CHECK(ru.values() == u);
  CHECK(rn.values() == n);
}

TEST_CASE("the torch factories refuse bad arguments with torch's reasons", "[factory][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(arange(0.0, 1.0, 0.0), "arange: step must be nonzero, got 0 -> 1 (step 0)");
  CHECK_THROWS_WITH(arange(0.0, 1.0, -0.5),
                    "arange: upper bound and lower bound inconsistent with step sign: 0 -> 1 "
                    "(step -0.5)");
  CHECK_THROWS_WITH(arange(0.0, std::numeric_limits<double>::infinity()),
                    Catch::StartsWith("arange: unsupported range 0 -> inf"));
  CHECK_THROWS_WITH(arange(0.0, 1e30, 1e-30), Catch::EndsWith("has too many values"));
  CHECK_THROWS_WITH(linspace(0, 1, -1), "linspace: number of steps must be non-negative, got -1");
  CHECK_THROWS_WITH(eye(-1), "eye: n and m must be >= 0, got n = -1, m = -1");
  CHECK_THROWS_WITH(eye(2, -3), "eye: n and m must be >= 0, got n = 2, m = -3");
  CHECK_THROWS_WITH(randint(5, 5, {2}), "randint: expects low < high, got low = 5, high = 5");
  CHECK_THROWS_WITH(randint(0, {2}), "randint: expects low < high, got low = 0, high = 0");
  CHECK_THROWS_WITH(logspace(0, 1, -2), "logspace: number of steps must be non-negative, got -2");
  CHECK_THROWS_WITH(randperm(-1), "randperm: n must be >= 0, got -1");
  CHECK(logspace(0, 1, 0).numel() == 0);
  CHECK(linspace(0, 1, 0).numel() == 0);
  CHECK(randint(0, 3, {0}).numel() == 0);
}

TEST_CASE("bernoulli: torch's bounds on p, named by position, before any draw",
          "[factory][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor p = tensor({{0.5, 0.25}, {1.5, 0.0}});
  manual_seed(3);
  const std::vector<uint64_t> before = default_generator().state();
  CHECK_THROWS_WITH(bernoulli(p), Catch::StartsWith("bernoulli: ") && Catch::Contains("[2, 2]") &&
                                      Catch::Contains("must be in [0, 1], got 1.500000 at [1, 0]"));
  CHECK_THROWS_WITH(bernoulli(tensor({std::nan("")})), Catch::Contains("at [0]"));
  CHECK_THROWS_WITH(bernoulli(p, -0.1), Catch::Contains("expects p to be in [0, 1], but got p="));
  CHECK(default_generator().state() == before);
  // Empty and 0-D tensors, p == 0 and 1 exactly; the result takes no gradient.
  CHECK(bernoulli(zeros({0, 3})).shape() == Shape{0, 3});
  CHECK(bernoulli(scalar(1.0)).values() == std::vector<double>{1.0});
  CHECK(bernoulli(zeros({4}), 0.0).values() == std::vector<double>(4, 0.0));
  CHECK(bernoulli(zeros({4}), 1.0).values() == std::vector<double>(4, 1.0));
  CHECK_FALSE(bernoulli(requires_grad(full({3}, 0.5))).requires_grad());
}

TEST_CASE("normal_ and uniform_ on a tensor: in place where torch allows it", "[factory][errors]") {
  Tape tape;
  TapeScope scope(tape);
  manual_seed(11);
  const std::vector<double> want = randn({2, 3}, DType::Float64).values();
  manual_seed(11);
  Tensor x = zeros({2, 3}, DType::Float64);
  const Tensor alias = detach(x);  // shares x's storage, as torch's detach
  CHECK(normal_(x).values() == want);
  CHECK(x.values() == want);
  CHECK(alias.values() == want);
  CHECK_THROWS_WITH(normal_(requires_grad(x)),
                    "normal_: [2, 3] requires grad: a leaf that requires grad cannot be filled in "
                    "place");
  const Tensor used = zeros({2});
  const Tensor y = used * 2.0;  // a recorded op read `used`
  CHECK(y.numel() == 2);
  CHECK_THROWS_WITH(uniform_(used), Catch::StartsWith("uniform_: [2] was already read by "));
  CHECK_THROWS_WITH(uniform_(zeros({2}), 1.0, 0.0), Catch::Contains("from=1"));
  CHECK(uniform_(zeros({0})).numel() == 0);
}
