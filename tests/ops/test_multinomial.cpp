// Tests for ops/multinomial.cpp and Generator::exponential (the stream it draws).
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/ops/ops.h>
#include "tests/ops/hex_goldens.h"

using namespace tapegrad;

namespace {
std::vector<int64_t> to_vector(const Ids& ids) {
  return {ids.values().begin(), ids.values().end()};
}
}  // namespace

TEST_CASE("multinomial: same ids as torch.multinomial for 200 seeds", "[multinomial][goldens]") {
  const testing::GoldenFile golden("selection", "selection.txt");
  Tape tape;
  TapeScope scope(tape);
  const auto& g32 = golden["multinomial.p32"];
  const auto& g64 = golden["multinomial.p64"];
  Tensor p32 = from_values(g32.shape, g32.values, DType::Float32);
  Tensor p64 = from_values(g64.shape, g64.values, DType::Float64);
  const std::vector<int64_t> one32 = golden["multinomial.p32.one"].ints();
  const std::vector<int64_t> one64 = golden["multinomial.p64.one"].ints();
  const std::vector<int64_t> three64 = golden["multinomial.p64.three"].ints();
  const int64_t seeds = golden["multinomial.p32.one"].shape[0];
  REQUIRE(seeds == 200);
  Generator g;
  for (int64_t seed = 0; seed < seeds; ++seed) {
    INFO("seed " << seed);
    g.manual_seed(static_cast<uint64_t>(seed));
    const Ids a = multinomial(p32, 1, g);
    CHECK(a.shape() == Shape{1});
    CHECK(a[0] == one32[static_cast<size_t>(seed)]);
    g.manual_seed(static_cast<uint64_t>(seed));
    const Ids b = multinomial(p64, 1, g);
    CHECK(b.shape() == Shape{4, 1});
    CHECK(to_vector(b) ==
          std::vector<int64_t>(one64.begin() + seed * 4, one64.begin() + seed * 4 + 4));
    g.manual_seed(static_cast<uint64_t>(seed));
    const Ids c = multinomial(p64, 3, g);
    CHECK(c.shape() == Shape{4, 3});
    CHECK(to_vector(c) ==
          std::vector<int64_t>(three64.begin() + seed * 12, three64.begin() + seed * 12 + 12));
  }
  // Two draws in a row: the stream advances as torch's.
  g.manual_seed(7);
  CHECK(to_vector(multinomial(p64, 1, g)) == golden["multinomial.seed7.first"].ints());
  CHECK(to_vector(multinomial(p64, 1, g)) == golden["multinomial.seed7.second"].ints());
}

TEST_CASE("multinomial: a zero probability is never drawn, errors before drawing",
          "[multinomial]") {
  Tape tape;
  TapeScope scope(tape);
  Generator g(3);
  Tensor p = tensor({0.0, 1.0, 0.0, 2.0}, DType::Float64);
  for (int i = 0; i < 50; ++i) {
    const int64_t id = multinomial(p, 1, g)[0];
    CHECK((id == 1 || id == 3));
  }
  const std::vector<uint64_t> before = g.state();
  CHECK_THROWS_WITH(multinomial(tensor({0.5, -0.1}), 1, g),
                    Catch::Contains("multinomial") && Catch::Contains("element < 0"));
  CHECK_THROWS_WITH(multinomial(tensor({0.5, NAN}), 1, g), Catch::Contains("nan"));
  CHECK_THROWS_WITH(multinomial(tensor({{0.5, 0.5}, {0.0, 0.0}}), 1, g),
                    Catch::Contains("sum of probabilities <= 0"));
  CHECK_THROWS_WITH(multinomial(p, 5, g), Catch::Contains("without replacement"));
  CHECK_THROWS_WITH(multinomial(p, 0, g), Catch::Contains("num_samples"));
  CHECK_THROWS_WITH(multinomial(zeros(Shape{2, 2, 2}), 1, g), Catch::Contains("[V] or [N, V]"));
  CHECK(g.state() == before);  // nothing drawn
}

TEST_CASE("Generator::exponential: -log(1 - u) of torch's float64 uniforms", "[multinomial]") {
  Generator a(11), b(11);
  std::vector<double> q(5), u(5);
  std::vector<float> qf(5);
  a.exponential(q.data(), 5);
  b.uniform(u.data(), 5);
  for (size_t i = 0; i < 5; ++i) CHECK(q[i] == -std::log(1.0 - u[i]));
  a.manual_seed(11);
  a.exponential(qf.data(), 5);
  for (size_t i = 0; i < 5; ++i) CHECK(qf[i] == static_cast<float>(q[i]));
  CHECK_THROWS_WITH(a.exponential(q.data(), 1, 0.0), Catch::Contains("lambd"));
}
