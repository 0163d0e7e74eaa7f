// Tests for nn/norms.h: torch's defaults and names, values against torch, one cluster, buffers,
// bad arguments.
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.h>
#include "tests/ops/hex_goldens.h"
#include "tests/temp_dir.h"

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

namespace test_norms {

// A BatchNorm case of norms.txt: two training steps, then eval, each compared with torch's.
void check_batch_norm_case(nn::BatchNorm& m, const std::string& key, DType dtype) {
  const testing::GoldenFile golden("norms", "norms.txt");
  const double ulps = 64;
  if (m.affine()) {
    m.weight.assign(golden[key + ".weight"].values);
    m.bias.assign(golden[key + ".bias"].values);
  }
  for (const std::string step : {".step1", ".step2"}) {
    const std::string s = key + step;
    INFO(s);
    Tape tape;
    TapeScope scope(tape);
    const auto& gx = golden[s + ".x"];
    Tensor x = from_values(gx.shape, gx.values, dtype, true);
    Tensor y = m.forward(x);
    tape.backward(y, golden[s + ".dy"].values);
    testing::require_near(y.values(), golden[s + ".y"], dtype, ulps, s + ".y");
    testing::require_near(x.grad_values(), golden[s + ".dx"], dtype, ulps, s + ".dx");
    if (m.affine()) {
      testing::require_near(m.weight.grad_values(), golden[s + ".dweight"], dtype, ulps, "dweight");
      testing::require_near(m.bias.grad_values(), golden[s + ".dbias"], dtype, ulps, "dbias");
      m.weight.zero_grad();
      m.bias.zero_grad();
    }
    if (m.track_running_stats()) {
      testing::require_near(m.running_mean.values(), golden[s + ".running_mean"], dtype, 4,
                            "running_mean");
      testing::require_near(m.running_var.values(), golden[s + ".running_var"], dtype, 4,
                            "running_var");
    }
  }
  if (m.track_running_stats()) CHECK(m.num_batches_tracked.values() == std::vector<double>{2});
  m.eval();
  Tape tape;
  TapeScope scope(tape);
  const auto& gx = golden[key + ".eval.x"];
  Tensor y = m.forward(from_values(gx.shape, gx.values, dtype));
  testing::require_near(y.values(), golden[key + ".eval.y"], dtype, ulps, key + ".eval.y");
}

}  // namespace test_norms

TEST_CASE("nn::BatchNorm1d/2d: training, running statistics and eval match torch",
          "[nn][norms][goldens]") {
  for (const auto& [tag, dtype] : {std::pair<std::string, DType>{"f32", DType::Float32},
                                   std::pair<std::string, DType>{"f64", DType::Float64}}) {
    nn::BatchNorm2d bn2d(3, 1e-5, 0.1, true, true, dtype);
    test_norms::check_batch_norm_case(bn2d, "batch_norm.bn2d." + tag, dtype);
    nn::BatchNorm1d cumulative(4, 1e-5, std::nullopt, true, true, dtype);
    test_norms::check_batch_norm_case(cumulative, "batch_norm.bn1d_cumulative." + tag, dtype);
    nn::BatchNorm1d plain(3, 1e-3, 0.1, false, true, dtype);
    test_norms::check_batch_norm_case(plain, "batch_norm.bn1d_rank3_plain." + tag, dtype);
    nn::BatchNorm1d untracked(3, 1e-5, 0.1, true, false, dtype);
    test_norms::check_batch_norm_case(untracked, "batch_norm.bn1d_untracked." + tag, dtype);
  }
}

TEST_CASE("nn::BatchNorm: torch's state_dict, buffers outside parameters(), loaded back",
          "[nn][norms]") {
  nn::BatchNorm2d bn(2);
  std::vector<std::string> keys;
  for (const auto& [name, p] : bn.state_dict()) keys.push_back(name);
  CHECK(keys == std::vector<std::string>{"weight", "bias", "running_mean", "running_var",
                                         "num_batches_tracked"});
  CHECK(bn.parameters().size() == 2);
  CHECK(bn.running_var.values() == std::vector<double>{1, 1});
  nn::BatchNorm2d other(2);
  other.running_mean.assign(std::vector<double>{0.5, -0.5});
  other.num_batches_tracked.assign(std::vector<double>{7});
  bn.load_state_dict(other.state_dict());
  CHECK(bn.running_mean.values() == std::vector<double>{0.5, -0.5});
  CHECK(bn.num_batches_tracked.values() == std::vector<double>{7});
  CHECK(nn::BatchNorm1d(3, 1e-5, 0.1, false, false).state_dict().empty());
}

TEST_CASE("nn::BatchNorm: torch's int64 num_batches_tracked in a file loads as float64",
          "[nn][norms]") {
  // A file laid out as torch's BatchNorm1d(2).state_dict() saved by safetensors.
  const std::vector<float> ones{1, 1}, zeros_{0, 0}, mean{0.25f, -2.0f};
  const int64_t batches = 12;
  auto bytes = [](const auto& v) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()),
                                    v.size() * sizeof(v[0]));
  };
  const std::vector<int64_t> count{batches};
  const std::vector<SafetensorsTensor> tensors = {{"weight", "F32", {2}, bytes(ones)},
                                                  {"bias", "F32", {2}, bytes(zeros_)},
                                                  {"running_mean", "F32", {2}, bytes(mean)},
                                                  {"running_var", "F32", {2}, bytes(ones)},
                                                  {"num_batches_tracked", "I64", {}, bytes(count)}};
  testing::TempDir dir;
  write_safetensors(dir.file("bn.safetensors"), {{"format", "pt"}}, tensors);
  nn::BatchNorm1d bn(2);
  bn.load(dir.file("bn.safetensors"));
  CHECK(bn.running_mean.values() == std::vector<double>{0.25, -2.0});
  CHECK(bn.num_batches_tracked.values() == std::vector<double>{12});
}

TEST_CASE("nn::BatchNorm: bad arguments name the module and the shapes, and change nothing",
          "[nn][norms]") {
  CHECK_THROWS_WITH(nn::BatchNorm1d(0),
                    Catch::Contains("BatchNorm1d") && Catch::Contains("num_features 0"));
  CHECK_THROWS_WITH(nn::BatchNorm2d(3, 1e-5, 1.5), Catch::Contains("momentum"));
  Tape tape;
  TapeScope scope(tape);
  nn::BatchNorm2d bn(3, 1e-5, 0.1, true, true, DType::Float32, "bn");
  CHECK_THROWS_WITH(bn.forward(zeros({2, 3, 4})), Catch::Contains("BatchNorm2d \"bn\"") &&
                                                      Catch::Contains("expected 4D input") &&
                                                      Catch::Contains("[2, 3, 4]"));
  CHECK_THROWS_WITH(bn.forward(zeros({2, 4, 2, 2})),
                    Catch::Contains("[2, 4, 2, 2]") && Catch::Contains("num_features is 3"));
  // One value per channel in training: torch's error, and the count does not move.
  CHECK_THROWS_WITH(bn.forward(zeros({1, 3, 1, 1})),
                    Catch::Contains("more than 1 value per channel"));
  CHECK(bn.num_batches_tracked.values() == std::vector<double>{0});
  CHECK(bn.running_var.values() == std::vector<double>{1, 1, 1});
}
