// Tests for nn/norms.h: torch's defaults and names, the op's values, one cluster, bad arguments.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.h>

using namespace tapegrad;

TEST_CASE("nn::GroupNorm: torch's defaults, names and initial values", "[nn][norms]") {
  nn::GroupNorm gn(2, 4);
  CHECK(gn.eps() == 1e-5);
  CHECK(gn.affine());
  CHECK(gn.num_groups() == 2);
  CHECK(gn.num_channels() == 4);
  std::vector<std::string> keys;
  for (const auto& [name, p] : gn.state_dict()) keys.push_back(name);
  CHECK(keys == std::vector<std::string>{"weight", "bias"});
  CHECK(gn.weight.values() == std::vector<double>(4, 1.0));
  CHECK(gn.bias.values() == std::vector<double>(4, 0.0));
  nn::GroupNorm plain(2, 4, 1e-3, false);
  CHECK_FALSE(plain.affine());
  CHECK(plain.state_dict().empty());
}

TEST_CASE("nn::GroupNorm: the group_norm op's values, recorded in one cluster", "[nn][norms]") {
  Tape tape;
  TapeScope scope(tape);
  nn::GroupNorm gn(3, 6, 1e-5, true, DType::Float64, "gn");
  gn.weight.assign(std::vector<double>{1, 2, 3, 4, 5, 6});
  Tensor x = rand(Shape{2, 6, 5}, DType::Float64);
  const int32_t first = tape.size();
  Tensor y = gn.forward(x);
  for (int32_t id = first; id < tape.size(); ++id) {
    const int32_t s = tape.node(id).scope;
    if (tape.node(id).op == nullptr) continue;  // the parameters' leaves
    REQUIRE(s >= 0);
    CHECK(tape.scopes().name(s) == "gn");
  }
  CHECK(y.values() ==
        group_norm(x, 3, tape.parameter(gn.weight), tape.parameter(gn.bias)).values());
}

TEST_CASE("nn::GroupNorm: bad arguments name the module and the shapes", "[nn][norms]") {
  CHECK_THROWS_WITH(nn::GroupNorm(4, 6, 1e-5, true, DType::Float32, "gn"),
                    Catch::Contains("GroupNorm \"gn\"") && Catch::Contains("num_groups 4") &&
                        Catch::Contains("num_channels 6"));
  CHECK_THROWS_WITH(nn::GroupNorm(2, 4, -1.0), Catch::Contains("eps"));
  Tape tape;
  TapeScope scope(tape);
  nn::GroupNorm gn(2, 4);
  CHECK_THROWS_WITH(gn.forward(zeros({2, 6, 3})),
                    Catch::Contains("[2, 6, 3]") && Catch::Contains("num_channels = 4"));
}
